package vfs_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// visible reports what id can find of a secret: by listing, reading, glob
// and grep, each from the mount and from the root.
func visible(t *testing.T, fs *vfs.FS, id mounts.Caller, mount, name, needle string) []string {
	t.Helper()
	ctx := t.Context()
	var seen []string
	if res, err := fs.List(ctx, id, mount, 0, ""); err == nil {
		for _, en := range res.Entries {
			if en.Name == name {
				seen = append(seen, "List")
			}
		}
	}
	if _, err := fs.Read(ctx, id, mount+"/"+name, 0, 0, false); err == nil {
		seen = append(seen, "Read")
	} else if !errors.Is(err, errkind.NotFound) {
		t.Errorf("Read(%s) as %+v: err = %v, want errkind.NotFound", mount+"/"+name, id, err)
	}
	if _, err := fs.Stat(ctx, id, mount+"/"+name); err == nil {
		seen = append(seen, "Stat")
	}
	// An edit that cannot apply still tells whether the file was read.
	if _, err := fs.Edit(ctx, id, mount+"/"+name, "\x01absent", "x", false); errors.Is(err, vfs.ErrEditMismatch) {
		seen = append(seen, "Edit")
	}
	if rc, _, err := fs.Download(ctx, id, mount+"/"+name, 0, 0); err == nil {
		rc.Close()
		seen = append(seen, "Download")
	}
	target := mount + "/" + name
	for _, base := range []string{"/", mount} {
		if res, err := fs.Glob(ctx, id, base, vfs.GlobOptions{Pattern: "**"}); err != nil {
			t.Errorf("Glob(%s) as %+v: %v", base, id, err)
		} else if slices.Contains(paths(res.Matches), target) {
			seen = append(seen, "Glob "+base)
		}
		res, err := fs.Grep(ctx, id, base, vfs.GrepOptions{Pattern: needle})
		if err != nil {
			t.Errorf("Grep(%s) as %+v: %v", base, id, err)
		}
		for _, m := range res.Matches {
			if m.Path == target {
				seen = append(seen, "Grep "+base)
			}
		}
	}
	return seen
}

func testIsolation(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/secret.md", "needle of alice t1")
	e.putRaw(t, "alice/skills/pdf.md", "needle of alice's skills")

	for _, tc := range []struct {
		name       string
		id         mounts.Caller
		mount      string
		file       string
		wantAccess bool
	}{
		{"owner sees the workspace", alice, "/workspace", "secret.md", true},
		{"other thread of the same user", aliceT2, "/workspace", "secret.md", false},
		{"same thread id of another user", bob, "/workspace", "secret.md", false},
		{"skills are per user, across threads", aliceT2, "/skills", "pdf.md", true},
		{"another user's skills", bob, "/skills", "pdf.md", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := visible(t, e.fs, tc.id, tc.mount, tc.file, "needle")
			if tc.wantAccess && len(seen) == 0 {
				t.Errorf("%+v sees nothing of %s/%s", tc.id, tc.mount, tc.file)
			}
			if !tc.wantAccess && len(seen) > 0 {
				t.Errorf("%+v sees %s/%s through %v", tc.id, tc.mount, tc.file, seen)
			}
		})
	}

	// Writes by the others cannot touch alice's file either.
	for _, id := range []mounts.Caller{aliceT2, bob} {
		e.write(t, id, "/workspace/secret.md", "overwritten?")
		if _, err := e.fs.Delete(t.Context(), id, "/workspace", true); err != nil {
			t.Fatalf("Delete(/workspace) as %+v: %v", id, err)
		}
	}
	if got := e.read(t, alice, "/workspace/secret.md"); got != "needle of alice t1" {
		t.Errorf("alice's file became %q after other callers wrote and deleted their own", got)
	}
	want := []string{"alice/skills/pdf.md", "alice/threads/t1/secret.md"}
	if got := e.keys(t); !slices.Equal(got, want) {
		t.Errorf("bucket keys = %v, want %v", got, want)
	}
}

func testTicketIsolation(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, aliceTicket, "/ticket/plan.md", "needle of ticket T-1")
	e.write(t, aliceTicket, "/workspace/scratch.md", "needle of thread t1")
	for _, tc := range []struct {
		name       string
		id         mounts.Caller
		wantAccess bool
	}{
		{"the writer", aliceTicket, true},
		{"another thread on the same ticket", aliceT2Ticket, true},
		{"the same thread on another ticket", aliceTicket2, false},
		{"another user on the same ticket id", bobTicket, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := visible(t, e.fs, tc.id, "/ticket", "plan.md", "ticket")
			if tc.wantAccess && len(seen) == 0 {
				t.Errorf("%+v sees nothing of /ticket/plan.md", tc.id)
			}
			if !tc.wantAccess && len(seen) > 0 {
				t.Errorf("%+v sees /ticket/plan.md through %v", tc.id, seen)
			}
		})
	}
	t.Run("without a ticket there is no /ticket", func(t *testing.T) {
		_, err := e.fs.Read(t.Context(), alice, "/ticket/plan.md", 0, 0, false)
		wantErr(t, "Read(/ticket/plan.md) without a ticket", err, errkind.NotFound)
		_, err = e.fs.List(t.Context(), alice, "/ticket", 0, "")
		wantErr(t, "List(/ticket) without a ticket", err, errkind.NotFound)
		_, err = e.fs.Write(t.Context(), alice, "/ticket/new.md", "x", vfs.WriteOptions{})
		wantErr(t, "Write(/ticket/new.md) without a ticket", err, errkind.NotFound)
		res, err := e.fs.Grep(t.Context(), alice, "/", vfs.GrepOptions{Pattern: "ticket T-1"})
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("Grep(/) without a ticket = %+v, %v; want no matches", res.Matches, err)
		}
	})
	// The thread's workspace is the same with or without the ticket.
	if got := e.read(t, alice, "/workspace/scratch.md"); got != "needle of thread t1" {
		t.Errorf("/workspace/scratch.md without the ticket = %q", got)
	}
	want := []string{"alice/threads/t1/scratch.md", "alice/tickets/T-1/plan.md"}
	if got := e.keys(t); !slices.Equal(got, want) {
		t.Errorf("bucket keys = %v, want %v", got, want)
	}
}

// op is one VFS operation on a path, reduced to its error.
type op struct {
	name string
	call func(ctx context.Context, fs *vfs.FS, id mounts.Caller, vpath string) error
}

var allOps = []op{
	{"List", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.List(ctx, id, p, 0, "")
		return err
	}},
	{"Stat", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Stat(ctx, id, p)
		return err
	}},
	{"Read", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Read(ctx, id, p, 0, 0, false)
		return err
	}},
	{"Write", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Write(ctx, id, p, "x", vfs.WriteOptions{})
		return err
	}},
	{"Upload", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Upload(ctx, id, p, strings.NewReader("x"), vfs.WriteOptions{})
		return err
	}},
	{"Download", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		rc, _, err := fs.Download(ctx, id, p, 0, 0)
		if err == nil {
			rc.Close()
		}
		return err
	}},
	{"Edit", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Edit(ctx, id, p, "x", "y", false)
		return err
	}},
	{"Delete", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Delete(ctx, id, p, true)
		return err
	}},
	{"Glob", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Glob(ctx, id, p, vfs.GlobOptions{Pattern: "**"})
		return err
	}},
	{"Grep", func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) error {
		_, err := fs.Grep(ctx, id, p, vfs.GrepOptions{Pattern: "x"})
		return err
	}},
}

func testHostilePaths(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/x", "x")
	e.putRaw(t, "alice/skills/x", "x")
	e.write(t, bob, "/workspace/x", "x")
	before := e.keys(t)
	for _, vpath := range []string{
		"/workspace/../skills/x",
		"/workspace/../../bob/threads/t1/x",
		"//workspace/x",
		"/workspace//x",
		"/workspace/./x",
		"/workspace/x/",
		"/workspace/a\\b",
		"/workspace/x\x00",
		"/workspace/x\n",
		"workspace/x",
		"/workspace/caf\xe9",
		"/workspace/cafe\u0301", // not NFC
	} {
		for _, o := range allOps {
			t.Run(o.name+" "+vpath, func(t *testing.T) {
				err := o.call(t.Context(), e.fs, alice, vpath)
				wantErr(t, o.name, err, errkind.InvalidArgument)
				noKeyLeak(t, o.name, err)
			})
		}
	}
	if after := e.keys(t); !slices.Equal(after, before) {
		t.Errorf("hostile paths changed the bucket: keys %v, were %v", after, before)
	}
}

func testInvalidIdentities(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/x", "x")
	e.write(t, bob, "/workspace/x", "x")
	before := e.keys(t)
	for _, tc := range []struct {
		name string
		id   mounts.Identity
	}{
		{"user escapes upwards", mounts.Identity{User: "../bob", Thread: "t1"}},
		{"user with a slash", mounts.Identity{User: "bob/threads", Thread: "t1"}},
		{"user is a dot", mounts.Identity{User: ".", Thread: "t1"}},
		{"empty user", mounts.Identity{Thread: "t1"}},
		{"empty thread", mounts.Identity{User: "alice"}},
		{"thread escapes upwards", mounts.Identity{User: "alice", Thread: ".."}},
		{"ticket escapes upwards", mounts.Identity{User: "alice", Thread: "t1", Ticket: "../threads"}},
		{"user with NUL", mounts.Identity{User: "alice\x00", Thread: "t1"}},
	} {
		// Only mounts.Table.Identify makes a Caller, so these never reach
		// the VFS: it refuses them where the call comes in.
		t.Run(tc.name, func(t *testing.T) {
			_, err := mounts.Default().Identify(tc.id)
			wantErr(t, "Identify", err, errkind.InvalidArgument)
		})
	}
	// What a layer holds without Identify, the zero Caller, is refused.
	for _, o := range allOps {
		t.Run("zero caller "+o.name, func(t *testing.T) {
			err := o.call(t.Context(), e.fs, mounts.Caller{}, "/workspace/x")
			wantErr(t, o.name, err, errkind.InvalidArgument)
		})
	}
	t.Run("zero caller List root", func(t *testing.T) {
		_, err := e.fs.List(t.Context(), mounts.Caller{}, "/", 0, "")
		wantErr(t, "List(/)", err, errkind.InvalidArgument)
	})
	if after := e.keys(t); !slices.Equal(after, before) {
		t.Errorf("invalid identities changed the bucket: keys %v, were %v", after, before)
	}
}

func testNoMount(t *testing.T, s suite) {
	e := s.env(t, nil)
	for _, vpath := range []string{"/etc/passwd", "/etc", "/workspaces/x", "/ticket/x"} {
		for _, o := range allOps {
			t.Run(o.name+" "+vpath, func(t *testing.T) {
				err := o.call(t.Context(), e.fs, alice, vpath)
				wantErr(t, o.name, err, errkind.NotFound)
			})
		}
	}
	if keys := e.keys(t); len(keys) != 0 {
		t.Errorf("operations outside the mounts stored %v", keys)
	}
}
