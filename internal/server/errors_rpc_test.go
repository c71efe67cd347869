package server_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errorinfo"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// TestErrorCodes drives every vfs error through real calls and checks the
// documented status code, and that messages name virtual paths, not keys.
func TestErrorCodes(t *testing.T) {
	c := start(t, objstoretest.NewBucket(t, nil), options{vfs: func(cfg *vfs.Config) {
		cfg.MaxWriteBytes = 64
		cfg.MaxUploadBytes = 128
	}})
	ctx := asAlice(t)
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/dir/x", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := upload(ctx, c.fs, header("/workspace/nul.bin"), chunk([]byte("a\x00b"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		call func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error
		code codes.Code
		msg  string // the message contains this
	}{
		{"missing file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/missing"})
			return err
		}, codes.NotFound, "/workspace/missing"},
		{"no mount", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/etc/passwd"})
			return err
		}, codes.NotFound, "/etc/passwd"},
		{"missing download", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := download(ctx, c, &skillsvcv1.DownloadRequest{Path: "/workspace/missing"})
			return err
		}, codes.NotFound, "/workspace/missing"},
		{"hostile path", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/../skills/x"})
			return err
		}, codes.InvalidArgument, "/workspace/../skills/x"},
		{"empty path", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{})
			return err
		}, codes.InvalidArgument, "path"},
		{"invalid identity", as(t, auth.UserKey, "../bob", auth.ThreadKey, "t1"), func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/"})
			return err
		}, codes.InvalidArgument, "user"},
		{"negative page size", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageSize: -1})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"negative page size at the root", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/", PageSize: -1})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"negative page size outside the mounts", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/etc", PageSize: -1})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"foreign page token", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageToken: "garbage"})
			return err
		}, codes.InvalidArgument, "page_token"},
		{"negative max results", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/workspace", Pattern: "**", MaxResults: -1})
			return err
		}, codes.InvalidArgument, "max_results"},
		{"negative max matches", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "x", MaxMatches: -1})
			return err
		}, codes.InvalidArgument, "max_matches"},
		{"negative max results outside the mounts", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/etc", Pattern: "**", MaxResults: -1})
			return err
		}, codes.InvalidArgument, "max_results"},
		{"negative max matches outside the mounts", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/etc", Pattern: "x", MaxMatches: -1})
			return err
		}, codes.InvalidArgument, "max_matches"},
		{"bad regex", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "(", Regex: true})
			return err
		}, codes.InvalidArgument, "regular expression"},
		{"both write conditions", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", IfMatch: "x", MustNotExist: true})
			return err
		}, codes.InvalidArgument, "if_match"},
		{"read-only mount", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/skills/x.md", Content: "x"})
			return err
		}, codes.PermissionDenied, "/skills"},
		{"read-only delete", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/skills", Recursive: true})
			return err
		}, codes.PermissionDenied, "/skills"},
		{"must not exist", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", MustNotExist: true})
			return err
		}, codes.AlreadyExists, "/workspace/a.txt"},
		{"must not exist upload", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := upload(ctx, c, &skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{
				Header: &skillsvcv1.UploadHeader{Path: "/workspace/a.txt", MustNotExist: true}}}, chunk([]byte("x")))
			return err
		}, codes.AlreadyExists, "/workspace/a.txt"},
		{"stale etag", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", IfMatch: "stale"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"read a directory", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"download a directory", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := download(ctx, c, &skillsvcv1.DownloadRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"write below a file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt/b", Content: "x"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"list a file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace/a.txt"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"read a binary file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/nul.bin"})
			return err
		}, codes.FailedPrecondition, "/workspace/nul.bin"},
		{"edit does not apply", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.txt", OldString: "absent", NewString: "x"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"delete a directory without recursive", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"write too large", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/big", Content: strings.Repeat("x", 65)})
			return err
		}, codes.ResourceExhausted, "65 bytes"},
		{"upload too large", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := upload(ctx, c, header("/workspace/big"), chunk(make([]byte, 100)), chunk(make([]byte, 29)))
			return err
		}, codes.ResourceExhausted, "limit"},
		{"read past the end", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/a.txt", Offset: 5})
			return err
		}, codes.OutOfRange, "/workspace/a.txt"},
		{"no identity", t.Context(), func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/a.txt"})
			return err
		}, codes.Unauthenticated, auth.UserKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.ctx, c.fs)
			wantCode(t, tc.name, err, tc.code)
			msg := status.Convert(err).Message()
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not mention %q", msg, tc.msg)
			}
			if strings.Contains(msg, "alice/") {
				t.Errorf("message %q leaks a storage key", msg)
			}
		})
	}
	if _, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/big"}); status.Code(err) != codes.NotFound {
		t.Errorf("a refused write or upload stored /workspace/big: Stat err = %v", err)
	}
}

// TestConflictIsAborted runs over a bucket that loses every conditional
// write to a concurrent writer.
func TestConflictIsAborted(t *testing.T) {
	bucket := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	bucket.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
		if c.Put.IfMatch != "" {
			return objstore.ErrConflict
		}
		return nil
	})
	c := start(t, bucket, options{vfs: func(cfg *vfs.Config) { cfg.EditAttempts = 3 }})
	ctx := asAlice(t)
	w, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.txt", OldString: "hello", NewString: "bye"})
	wantCode(t, "Edit that keeps losing", err, codes.Aborted)
	_, err = c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", IfMatch: w.GetInfo().GetEtag()})
	wantCode(t, "conditional Write that loses", err, codes.Aborted)
}

func TestInternalErrorsHideDetails(t *testing.T) {
	var logs syncBuffer
	c := start(t, failingBucket(t), options{log: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, r := range everyRPC {
		t.Run(r.name, func(t *testing.T) {
			err := r.call(asAlice(t), c.fs)
			wantCode(t, r.name, err, codes.Internal)
			msg := status.Convert(err).Message()
			for _, s := range []string{"disk on fire", "secret-key", "alice/"} {
				if strings.Contains(msg, s) {
					t.Errorf("%s: Internal message %q leaks %q", r.name, msg, s)
				}
			}
		})
	}
	// Operators still see the cause.
	if got := logs.String(); !strings.Contains(got, "secret-key") || !strings.Contains(got, "/skillsvc.v1.FilesystemService/Stat") {
		t.Errorf("server log does not record the internal error with its method:\n%s", got)
	}
}

// TestOutOfSpaceIsResourceExhausted: every write over a store that is out
// of space answers RESOURCE_EXHAUSTED "storage is full", without the key,
// the host path or a retry delay (space comes back when someone frees it,
// not after a known time), and is logged as a storage warning naming the
// key, not as an internal error. Nothing is changed.
func TestOutOfSpaceIsResourceExhausted(t *testing.T) {
	const hostPath = "/var/lib/skillsvc/.skillsvc-tmp/0a1b2c3d"
	mem := objstoretest.NewBucket(t, map[string]string{
		"alice/threads/t1/a.txt":    "hello",
		"alice/skills/pdf/SKILL.md": skillstest.SkillMD("pdf", "Read PDFs.", "# PDF\n"),
	})
	bucket := objstoretest.NewFaulty(mem)
	// What the local backend returns when the disk is full (see its
	// TestPutUnwritable); the S3 backend wraps the same sentinel.
	bucket.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
		return fmt.Errorf("put %q: %w: %w", c.Key, objstore.ErrNoSpace, &fs.PathError{Op: "write", Path: hostPath, Err: syscall.ENOSPC})
	})
	var logs syncBuffer
	c := start(t, bucket, options{log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Write", func() error {
			_, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "bye"})
			return err
		}},
		{"Edit", func() error {
			_, err := c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.txt", OldString: "hello", NewString: "bye"})
			return err
		}},
		{"Upload", func() error {
			_, err := upload(ctx, c.fs, header("/workspace/b.bin"), chunk([]byte("bytes")))
			return err
		}},
		{"SetSkillEnabled", func() error {
			_, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: false})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status.Convert(tc.call())
			if st.Code() != codes.ResourceExhausted || st.Message() != "storage is full" {
				t.Errorf("status = %v %q, want ResourceExhausted %q", st.Code(), st.Message(), "storage is full")
			}
			if _, ok := retryinfo.Delay(st.Err()); ok {
				t.Errorf("details = %v, want no retry delay", st.Details())
			}
			if r, _ := errorinfo.Reason(st.Err()); r != errorinfo.StorageFull {
				t.Errorf("details = %v, want the %s reason", st.Details(), errorinfo.StorageFull)
			}
		})
	}
	if got := keys(t, mem); !slices.Equal(got, []string{"alice/skills/pdf/SKILL.md", "alice/threads/t1/a.txt"}) {
		t.Errorf("keys after the refused writes = %q", got)
	}
	if r, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/a.txt"}); err != nil || r.GetContent() != "hello" {
		t.Errorf("Read after the refused writes = %q, %v", r.GetContent(), err)
	}
	got := logs.String()
	if !strings.Contains(got, `level=WARN msg="storage error" method=/skillsvc.v1.FilesystemService/Write`) ||
		!strings.Contains(got, "alice/threads/t1/a.txt") || !strings.Contains(got, "no space left on device") {
		t.Errorf("log does not warn of the storage error with its key and cause:\n%s", got)
	}
	if strings.Contains(got, "internal error") {
		t.Errorf("a full store is logged as an internal error:\n%s", got)
	}
}
