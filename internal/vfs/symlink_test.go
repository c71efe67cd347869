package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// The needle is in every file a planted link points to.
const linkNeedle = "BOBSECRET"

// linkTargets are the files links point to: bob's, relative to the data
// directory, and one outside it.
var linkTargets = []string{"bob/threads/t1/secret.md", "bob/tickets/T-1/plan.md", "bob/skills/pdf/SKILL.md"}

// linkEnv is a file system over a local bucket whose directory holds links
// planted in alice's folders, as a copied skill folder or someone with
// access to the disk could leave them.
type linkEnv struct {
	fs            *vfs.FS
	data, outside string
}

func newLinkEnv(t *testing.T) linkEnv {
	t.Helper()
	e := linkEnv{data: t.TempDir(), outside: t.TempDir()}
	put := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range linkTargets {
		put(filepath.Join(e.data, rel), linkNeedle+" of bob\n")
	}
	put(filepath.Join(e.outside, "secret.md"), linkNeedle+" outside\n")
	put(filepath.Join(e.data, "alice/threads/t1/own.md"), "alice's own\n")
	put(filepath.Join(e.data, "alice/tickets/T-1/own.md"), "alice's ticket\n")
	put(filepath.Join(e.data, "alice/skills/own/SKILL.md"), "alice's skill\n")
	for link, target := range map[string]string{
		"alice/threads/t1/evil.md":    "../../../bob/threads/t1/secret.md",
		"alice/threads/t1/evildir":    "../../../bob/threads/t1",
		"alice/threads/t1/outside.md": filepath.Join(e.outside, "secret.md"),
		"alice/threads/t1/outdir":     e.outside,
		"alice/threads/t9":            "../../bob/threads/t1", // a whole workspace
		"alice/tickets/T-1/evil.md":   "../../../bob/tickets/T-1/plan.md",
		"alice/tickets/T-1/evildir":   "../../../bob/tickets/T-1",
		"alice/skills/evil.md":        "../../bob/skills/pdf/SKILL.md",
		"alice/skills/evil":           "../../bob/skills/pdf",
	} {
		if err := os.Symlink(target, filepath.Join(e.data, link)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(e.data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e.fs, err = vfs.New(b, mounts.Default(), vfs.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkTargets fails unless every link target still holds its bytes.
func (e linkEnv) checkTargets(t *testing.T) {
	t.Helper()
	for _, p := range []string{filepath.Join(e.outside, "secret.md")} {
		if got, err := os.ReadFile(p); err != nil || string(got) != linkNeedle+" outside\n" {
			t.Errorf("%s = %q, %v; want it unchanged", p, got, err)
		}
	}
	for _, rel := range linkTargets {
		if got, err := os.ReadFile(filepath.Join(e.data, rel)); err != nil || string(got) != linkNeedle+" of bob\n" {
			t.Errorf("bob's %s = %q, %v; want it unchanged", rel, got, err)
		}
	}
}

// linkOp runs one VFS operation and returns everything it produced as text.
type linkOp struct {
	name string
	kind linkOpKind
	run  func(ctx context.Context, fs *vfs.FS, id mounts.Caller, vpath string) (string, error)
}

type linkOpKind int

const (
	reads  linkOpKind = iota // must find nothing at a file path through a link
	writes                   // must not change a target
	lists                    // must name no link
)

var linkOps = []linkOp{
	{"List", lists, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		res, err := fs.List(ctx, id, p, 0, "")
		return fmt.Sprintf("%+v", res), err
	}},
	{"Stat", reads, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		info, err := fs.Stat(ctx, id, p)
		return fmt.Sprintf("%+v", info), err
	}},
	{"Read", reads, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		res, err := fs.Read(ctx, id, p, 0, 0, false)
		return fmt.Sprintf("%+v", res), err
	}},
	{"Download", reads, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		rc, info, err := fs.Download(ctx, id, p, 0, 0)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		return fmt.Sprintf("%+v %s", info, data), err
	}},
	{"Edit", reads, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		res, err := fs.Edit(ctx, id, p, linkNeedle, "pwned", true)
		return fmt.Sprintf("%+v", res), err
	}},
	{"Write", writes, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		info, err := fs.Write(ctx, id, p, "pwned", vfs.WriteOptions{})
		return fmt.Sprintf("%+v", info), err
	}},
	{"Upload", writes, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		info, err := fs.Upload(ctx, id, p, strings.NewReader("pwned"), vfs.WriteOptions{})
		return fmt.Sprintf("%+v", info), err
	}},
	{"Delete", writes, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		n, err := fs.Delete(ctx, id, p, true)
		return fmt.Sprint(n), err
	}},
	{"Glob", lists, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		res, err := fs.Glob(ctx, id, p, vfs.GlobOptions{Pattern: "**"})
		return fmt.Sprintf("%+v", res), err
	}},
	{"Grep", lists, func(ctx context.Context, fs *vfs.FS, id mounts.Caller, p string) (string, error) {
		res, err := fs.Grep(ctx, id, p, vfs.GrepOptions{Pattern: linkNeedle})
		return fmt.Sprintf("%+v", res), err
	}},
}

// TestSymlinksThroughVFS runs every VFS operation on paths through alice's
// planted links, on the link's mount and on the root: no operation may show
// a linked file, its content or name, or change or delete it.
func TestSymlinksThroughVFS(t *testing.T) {
	aliceT1 := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-1"})
	aliceT9 := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t9"})
	// Paths not ending in ".md" are directories.
	for _, tc := range []struct {
		name  string
		id    mounts.Caller
		vpath string
	}{
		{"workspace file link", aliceT1, "/workspace/evil.md"},
		{"workspace directory link", aliceT1, "/workspace/evildir"},
		{"workspace file below a directory link", aliceT1, "/workspace/evildir/secret.md"},
		{"workspace file link out of the root", aliceT1, "/workspace/outside.md"},
		{"workspace file below a directory link out of the root", aliceT1, "/workspace/outdir/secret.md"},
		{"workspace that is a link", aliceT9, "/workspace/secret.md"},
		{"workspace root that is a link", aliceT9, "/workspace"},
		{"ticket file link", aliceT1, "/ticket/evil.md"},
		{"ticket file below a directory link", aliceT1, "/ticket/evildir/plan.md"},
		{"skills file link", aliceT1, "/skills/evil.md"},
		{"skills file below a directory link", aliceT1, "/skills/evil/SKILL.md"},
		{"mount root", aliceT1, "/workspace"},
		{"ticket root", aliceT1, "/ticket"},
		{"skills root", aliceT1, "/skills"},
		{"root", aliceT1, "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range linkOps {
				t.Run(op.name, func(t *testing.T) {
					e := newLinkEnv(t)
					out, err := op.run(t.Context(), e.fs, tc.id, tc.vpath)
					if strings.Contains(out, linkNeedle) {
						t.Errorf("%s(%s) exposed a linked file: %s", op.name, tc.vpath, out)
					}
					isFile := strings.HasSuffix(tc.vpath, ".md")
					// Edit on the read-only /skills is refused before any read.
					refused := op.name == "Edit" && strings.HasPrefix(tc.vpath, "/skills/") && errors.Is(err, errkind.PermissionDenied)
					if op.kind == reads && isFile && !errors.Is(err, errkind.NotFound) && !refused {
						t.Errorf("%s(%s) err = %v, want errkind.NotFound", op.name, tc.vpath, err)
					}
					if op.kind == lists && !isFile {
						for _, link := range []string{"evil", "outside.md", "outdir"} {
							if strings.Contains(out, link) && !strings.Contains(tc.vpath, link) {
								t.Errorf("%s(%s) named the link %s: %s", op.name, tc.vpath, link, out)
							}
						}
					}
					e.checkTargets(t)
				})
			}
		})
	}
}
