package vfs_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func testUploadDownload(t *testing.T, s suite) {
	e := s.env(t, nil)
	data := make([]byte, 3<<20)
	rand.Read(data)
	size := int64(len(data))
	info := e.upload(t, alice, "/workspace/blob.bin", data)
	if info.Path != "/workspace/blob.bin" || info.Size != size || info.ETag == "" {
		t.Fatalf("Upload returned %+v", info)
	}
	if stat, err := e.fs.Stat(t.Context(), alice, "/workspace/blob.bin"); err != nil || stat.Size != size || stat.ETag != info.ETag {
		t.Fatalf("Stat after Upload = %+v, %v; want size %d etag %q", stat, err, size, info.ETag)
	}
	for _, tc := range []struct {
		name           string
		offset, length int64
		want           []byte
	}{
		{"whole", 0, 0, data},
		{"window", 1<<20 + 7, 4096, data[1<<20+7 : 1<<20+7+4096]},
		{"from an offset to the end", size - 10, 0, data[size-10:]},
		{"window cut at the end", size - 10, 100, data[size-10:]},
		{"first byte", 0, 1, data[:1]},
		{"at the end", size, 0, nil},
		{"past the end", size + 5, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, got, err := e.fs.Download(t.Context(), alice, "/workspace/blob.bin", tc.offset, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			body := readAllClose(t, rc)
			if !bytes.Equal(body, tc.want) {
				t.Errorf("Download(%d, %d) returned %d bytes, want %d matching bytes", tc.offset, tc.length, len(body), len(tc.want))
			}
			if got.Path != "/workspace/blob.bin" || got.Size != size || got.ETag != info.ETag {
				t.Errorf("Download Info = %+v, want the whole file's size %d and etag %q", got, size, info.ETag)
			}
		})
	}
	t.Run("text file", func(t *testing.T) {
		e.write(t, alice, "/workspace/hello.txt", "hello")
		rc, _, err := e.fs.Download(t.Context(), alice, "/workspace/hello.txt", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllClose(t, rc); string(got) != "hello" {
			t.Errorf("Download = %q, want %q", got, "hello")
		}
	})
	t.Run("empty upload", func(t *testing.T) {
		info := e.upload(t, alice, "/workspace/empty", nil)
		if info.Size != 0 {
			t.Errorf("Upload of nothing: size %d", info.Size)
		}
		rc, _, err := e.fs.Download(t.Context(), alice, "/workspace/empty", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllClose(t, rc); len(got) != 0 {
			t.Errorf("Download of an empty file returned %d bytes", len(got))
		}
	})
}

func testUploadLimit(t *testing.T, s suite) {
	const limit = 1 << 20
	e := s.env(t, func(c *vfs.Config) { c.MaxUploadBytes = limit })
	data := make([]byte, limit+1)
	rand.Read(data)

	if _, err := e.fs.Upload(t.Context(), alice, "/workspace/exact", bytes.NewReader(data[:limit]), vfs.WriteOptions{}); err != nil {
		t.Fatalf("Upload of exactly MaxUploadBytes: %v", err)
	}
	before := e.keys(t)
	for _, tc := range []struct {
		name string
		body io.Reader
	}{
		{"one byte over", struct{ io.Reader }{bytes.NewReader(data)}},
		{"far over, in small reads", io.MultiReader(strings.NewReader("x"), bytes.NewReader(data), bytes.NewReader(data))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.fs.Upload(t.Context(), alice, "/workspace/big", tc.body, vfs.WriteOptions{})
			wantErr(t, "Upload over MaxUploadBytes", err, errkind.ResourceExhausted)
			noKeyLeak(t, "Upload over MaxUploadBytes", err)
			if _, err := e.fs.Stat(t.Context(), alice, "/workspace/big"); !errors.Is(err, errkind.NotFound) {
				t.Errorf("Stat after a refused upload: err = %v, want errkind.NotFound", err)
			}
			if after := e.keys(t); !slices.Equal(after, before) {
				t.Errorf("a refused upload changed the bucket: keys %v, were %v", after, before)
			}
		})
	}
	t.Run("does not replace an existing file", func(t *testing.T) {
		_, err := e.fs.Upload(t.Context(), alice, "/workspace/exact", bytes.NewReader(data), vfs.WriteOptions{})
		wantErr(t, "Upload over MaxUploadBytes", err, errkind.ResourceExhausted)
		rc, _, err := e.fs.Download(t.Context(), alice, "/workspace/exact", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllClose(t, rc); !bytes.Equal(got, data[:limit]) {
			t.Errorf("the file changed after a refused upload: %d bytes", len(got))
		}
	})
}

func testUploadDownloadErrors(t *testing.T, s suite) {
	e := s.env(t, nil)
	cur := e.write(t, alice, "/workspace/a", "a")
	e.write(t, alice, "/workspace/dir/x", "x")
	e.putRaw(t, "alice/skills/s.md", "skill")
	for _, tc := range []struct {
		name  string
		vpath string
		opts  vfs.WriteOptions
		err   error
	}{
		{"must_not_exist on existing", "/workspace/a", vfs.WriteOptions{MustNotExist: true}, errkind.AlreadyExists},
		{"if_match stale", "/workspace/a", vfs.WriteOptions{IfMatch: "0123456789abcdef0123456789abcdef"}, errkind.FailedPrecondition},
		{"both conditions", "/workspace/a", vfs.WriteOptions{IfMatch: cur.ETag, MustNotExist: true}, errkind.InvalidArgument},
		{"read-only skills", "/skills/new.bin", vfs.WriteOptions{}, errkind.PermissionDenied},
		{"mount root", "/workspace", vfs.WriteOptions{}, vfs.ErrIsDir},
		{"onto a directory", "/workspace/dir", vfs.WriteOptions{}, vfs.ErrIsDir},
		{"below a file", "/workspace/a/b", vfs.WriteOptions{}, vfs.ErrNotDir},
	} {
		t.Run("Upload "+tc.name, func(t *testing.T) {
			_, err := e.fs.Upload(t.Context(), alice, tc.vpath, strings.NewReader("\x00\x01"), tc.opts)
			wantErr(t, "Upload("+tc.vpath+")", err, tc.err)
			noKeyLeak(t, "Upload("+tc.vpath+")", err)
		})
	}
	if got := e.read(t, alice, "/workspace/a"); got != "a" {
		t.Errorf("refused uploads changed /workspace/a to %q", got)
	}
	t.Run("Upload if_match current", func(t *testing.T) {
		info, err := e.fs.Upload(t.Context(), alice, "/workspace/a", strings.NewReader("b"), vfs.WriteOptions{IfMatch: cur.ETag})
		if err != nil || info.ETag == cur.ETag {
			t.Errorf("Upload with the current etag = %+v, %v", info, err)
		}
	})
	for _, tc := range []struct {
		name           string
		vpath          string
		offset, length int64
		err            error
	}{
		{"directory", "/workspace/dir", 0, 0, vfs.ErrIsDir},
		{"mount root", "/workspace", 0, 0, vfs.ErrIsDir},
		{"root", "/", 0, 0, vfs.ErrIsDir},
		{"missing", "/workspace/missing", 0, 0, errkind.NotFound},
		{"negative offset", "/workspace/a", -1, 0, errkind.InvalidArgument},
		{"negative length", "/workspace/a", 0, -1, errkind.InvalidArgument},
		{"skills are readable", "/skills/s.md", 0, 0, nil},
	} {
		t.Run("Download "+tc.name, func(t *testing.T) {
			rc, _, err := e.fs.Download(t.Context(), alice, tc.vpath, tc.offset, tc.length)
			wantErr(t, "Download("+tc.vpath+")", err, tc.err)
			noKeyLeak(t, "Download("+tc.vpath+")", err)
			if err == nil {
				rc.Close()
			}
		})
	}
}
