package local

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// TestPutUnwritable: a write that finds the disk full at any step is
// ErrNoSpace (RESOURCE_EXHAUSTED, "storage is full" to a caller), and one
// that finds the file system read-only is ErrReadOnly (FAILED_PRECONDITION,
// "storage is read-only") rather than an internal error or, at the rename,
// an invalid key; either leaves no temp file behind and nothing
// half-written at the key, and the next write after space is freed (or the
// disk remounted) succeeds. The write step gets a real ENOSPC from the
// kernel by writing to /dev/full; the other steps cannot be made to fail on
// a real disk without mounting a small or read-only one, so their system
// calls are replaced.
func TestPutUnwritable(t *testing.T) {
	const key = "alice/skills/pdf/SKILL.md"
	for _, tc := range []struct {
		name string
		// existing writes old content at key first, which must survive.
		existing bool
		fail     func(t *testing.T, s *sysCalls)
		want     error // nil: ErrNoSpace
	}{
		{"write (ENOSPC from /dev/full)", true, func(t *testing.T, s *sysCalls) {
			s.createTemp = func(dirfd int, name string) (int, error) {
				// Create the real temp file, so the test sees it removed,
				// but write through /dev/full.
				fd, err := realSysCalls.createTemp(dirfd, name)
				if err != nil {
					return fd, err
				}
				unix.Close(fd)
				return openat(unix.AT_FDCWD, "/dev/full", unix.O_WRONLY|unix.O_CLOEXEC, 0)
			}
		}, nil},
		{"temp file create (no inodes)", true, func(t *testing.T, s *sysCalls) {
			s.createTemp = func(int, string) (int, error) { return -1, unix.ENOSPC }
		}, nil},
		{"temp directory create (quota)", false, func(t *testing.T, s *sysCalls) {
			s.mkdirat = func(int, string, uint32) error { return unix.EDQUOT }
		}, nil},
		{"parent directory create", false, func(t *testing.T, s *sysCalls) {
			s.mkdirat = func(dirfd int, name string, perm uint32) error {
				if name == tmpDir {
					return realSysCalls.mkdirat(dirfd, name, perm)
				}
				return unix.ENOSPC
			}
		}, nil},
		{"rename (quota)", true, func(t *testing.T, s *sysCalls) {
			s.renameat = func(int, string, int, string) error { return unix.EDQUOT }
		}, nil},
		{"temp directory create (read-only)", false, func(t *testing.T, s *sysCalls) {
			s.mkdirat = func(int, string, uint32) error { return unix.EROFS }
		}, objstore.ErrReadOnly},
		{"temp file create (read-only)", true, func(t *testing.T, s *sysCalls) {
			s.createTemp = func(int, string) (int, error) { return -1, unix.EROFS }
		}, objstore.ErrReadOnly},
		{"rename (read-only)", true, func(t *testing.T, s *sysCalls) {
			s.renameat = func(int, string, int, string) error { return unix.EROFS }
		}, objstore.ErrReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			if tc.existing {
				put(t, b, key, "old")
			}
			tc.fail(t, &b.sys)

			want := cmp.Or(tc.want, objstore.ErrNoSpace)
			_, err = b.Put(t.Context(), key, strings.NewReader("new content"), -1, objstore.PutOptions{})
			if !errors.Is(err, want) {
				t.Fatalf("Put err = %v, want %v", err, want)
			}
			if k := errkind.Of(err); k != errkind.Of(want) {
				t.Errorf("kind = %v, want %v", k, errkind.Of(want))
			}
			if msg := errkind.Message(err); msg != errkind.Message(want) {
				t.Errorf("caller message = %q, want %q", msg, errkind.Message(want))
			}
			if !strings.Contains(err.Error(), key) {
				t.Errorf("err %q does not name the key for the log", err)
			}

			if tc.existing {
				if got := get(t, b, key); got != "old" {
					t.Errorf("after the failed Put, %s = %q, want the old content", key, got)
				}
			} else if _, err := b.Stat(t.Context(), key); !objstore.IsNotFound(err) {
				t.Errorf("after the failed Put, Stat err = %v, want not found", err)
			}
			if left, err := os.ReadDir(filepath.Join(dir, tmpDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			} else if len(left) > 0 {
				t.Errorf("temp files left behind: %v", left)
			}

			b.sys = realSysCalls // space freed, or the disk remounted
			put(t, b, key, "new content")
			if got := get(t, b, key); got != "new content" {
				t.Errorf("after space was freed, %s = %q", key, got)
			}
		})
	}
}

// TestWriteErr: every way the kernel reports a full disk or an oversized
// file, bare or wrapped as package os wraps it, maps to its sentinel with a
// caller message naming neither the key nor a host path.
func TestWriteErr(t *testing.T) {
	const key = "alice/threads/t1/big.bin"
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: no space sentinel
		msg  string
	}{
		{"ENOSPC", unix.ENOSPC, objstore.ErrNoSpace, "storage is full"},
		{"EDQUOT", unix.EDQUOT, objstore.ErrNoSpace, "storage is full"},
		{"EFBIG", unix.EFBIG, objstore.ErrTooLarge, "file is too large for storage"},
		{"write", &fs.PathError{Op: "write", Path: "/srv/data/.skillsvc-tmp/0123", Err: unix.ENOSPC}, objstore.ErrNoSpace, "storage is full"},
		{"sync", &fs.PathError{Op: "sync", Path: "/srv/data/.skillsvc-tmp/0123", Err: unix.EDQUOT}, objstore.ErrNoSpace, "storage is full"},
		{"rename", &os.LinkError{Op: "rename", Old: "/srv/a", New: "/srv/b", Err: unix.ENOSPC}, objstore.ErrNoSpace, "storage is full"},
		{"file too large", &fs.PathError{Op: "write", Path: "/srv/data/x", Err: unix.EFBIG}, objstore.ErrTooLarge, "file is too large for storage"},
		{"EROFS", unix.EROFS, objstore.ErrReadOnly, "storage is read-only"},
		{"read-only create", &fs.PathError{Op: "openat", Path: "/srv/data/.skillsvc-tmp/0123", Err: unix.EROFS}, objstore.ErrReadOnly, "storage is read-only"},
		{"other I/O error", &fs.PathError{Op: "write", Path: "/srv/data/x", Err: unix.EIO}, nil, "unknown"},
		{"short body", fmt.Errorf("read 3 bytes, want 4: %w", io.ErrUnexpectedEOF), nil, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mapErr("put", key, tc.err)
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("mapErr = %v, want %v", err, tc.want)
			}
			if tc.want == nil && (errors.Is(err, objstore.ErrNoSpace) || errors.Is(err, objstore.ErrTooLarge) || errors.Is(err, objstore.ErrReadOnly)) {
				t.Errorf("mapErr = %v, want no space sentinel", err)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("mapErr = %v lost the cause %v", err, tc.err)
			}
			if msg := errkind.Message(err); msg != tc.msg {
				t.Errorf("caller message = %q, want %q", msg, tc.msg)
			}
		})
	}
}

func put(t *testing.T, b *Bucket, key, content string) {
	t.Helper()
	if _, err := b.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

func get(t *testing.T, b *Bucket, key string) string {
	t.Helper()
	rc, _, err := b.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
