package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"

	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// Identities used throughout: alice's thread t1 is the usual caller.
var (
	alice         = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	aliceT2       = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t2"})
	aliceTicket   = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-1"})
	aliceT2Ticket = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t2", Ticket: "T-1"})
	aliceTicket2  = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-2"})
	bob           = mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1"})
	bobTicket     = mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1", Ticket: "T-1"})
)

// TestFS runs the behavioural suite on the local backend and on a real
// MinIO; the MinIO run proves that the VFS relies only on what S3
// guarantees (conditional writes, delimiter listings, range reads).
func TestFS(t *testing.T) {
	objstoretest.ForEachBackend(t, runSuite)
}

// suite builds file systems over fresh, empty buckets of one backend.
type suite struct {
	newBucket func(t *testing.T) objstore.Bucket
}

func runSuite(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
	s := suite{newBucket: newBucket}
	for _, tc := range []struct {
		name string
		test func(*testing.T, suite)
	}{
		{"ListRoot", testListRoot},
		{"ListDir", testListDir},
		{"ListPaging", testListPaging},
		{"ListErrors", testListErrors},
		{"Stat", testStat},
		{"Read", testRead},
		{"ReadDefaultLimit", testReadDefaultLimit},
		{"ReadSpecialFiles", testReadSpecialFiles},
		{"ReadMarkdownFallback", testReadMarkdownFallback},
		{"Write", testWrite},
		{"IsolationThreadsAndUsers", testIsolation},
		{"IsolationTickets", testTicketIsolation},
		{"HostilePaths", testHostilePaths},
		{"InvalidIdentities", testInvalidIdentities},
		{"NoMount", testNoMount},
		{"Edit", testEdit},
		{"EditConcurrent", testEditConcurrent},
		{"Delete", testDelete},
		{"UploadDownload", testUploadDownload},
		{"UploadLimit", testUploadLimit},
		{"UploadDownloadErrors", testUploadDownloadErrors},
		{"Glob", testGlob},
		{"GlobHidden", testGlobHidden},
		{"GlobScanLimit", testGlobScanLimit},
		{"Grep", testGrep},
		{"GrepSorted", testGrepSorted},
		{"GrepScanBudget", testGrepScanBudget},
		{"GrepDeadlinePassed", testGrepDeadlinePassed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, s)
		})
	}
}

// env is one file system over a fresh bucket.
type env struct {
	fs     *vfs.FS
	bucket objstore.Bucket
}

// env returns a file system over a fresh bucket with the default limits
// changed by tune (which may be nil).
func (s suite) env(t *testing.T, tune func(*vfs.Config)) env {
	t.Helper()
	return newEnv(t, s.newBucket(t), tune)
}

func newEnv(t *testing.T, bucket objstore.Bucket, tune func(*vfs.Config)) env {
	t.Helper()
	cfg := vfs.DefaultConfig()
	if tune != nil {
		tune(&cfg)
	}
	fs, err := vfs.New(bucket, mounts.Default(), cfg)
	if err != nil {
		t.Fatalf("vfs.New: %v", err)
	}
	return env{fs: fs, bucket: bucket}
}

func (e env) write(t *testing.T, id mounts.Caller, vpath, content string) vfs.Info {
	t.Helper()
	info, err := e.fs.Write(t.Context(), id, vpath, content, vfs.WriteOptions{})
	if err != nil {
		t.Fatalf("Write(%s): %v", vpath, err)
	}
	return info
}

// upload stores data through a reader that is not an io.Seeker, as a
// network stream would be.
func (e env) upload(t *testing.T, id mounts.Caller, vpath string, data []byte) vfs.Info {
	t.Helper()
	info, err := e.fs.Upload(t.Context(), id, vpath, struct{ io.Reader }{bytes.NewReader(data)}, vfs.WriteOptions{})
	if err != nil {
		t.Fatalf("Upload(%s): %v", vpath, err)
	}
	return info
}

// putRaw stores an object directly in the bucket, as the skills publisher
// does for the read-only /skills mount.
func (e env) putRaw(t *testing.T, key, content string) {
	t.Helper()
	if _, err := e.bucket.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
}

// read returns the exact content of a file.
func (e env) read(t *testing.T, id mounts.Caller, vpath string) string {
	t.Helper()
	rc, _, err := e.fs.Download(t.Context(), id, vpath, 0, 0)
	if err != nil {
		t.Fatalf("Download(%s): %v", vpath, err)
	}
	return string(readAllClose(t, rc))
}

// keys lists every key in the bucket, sorted.
func (e env) keys(t *testing.T) []string {
	t.Helper()
	var out []string
	err := objstore.Walk(t.Context(), e.bucket, "", func(o objstore.Object) error {
		out = append(out, o.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("listing the bucket: %v", err)
	}
	slices.Sort(out)
	return out
}

// wantErr reports an error unless err matches want (nil means success).
func wantErr(t *testing.T, op string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: unexpected error %v", op, err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("%s: err = %v, want %v", op, err, want)
	}
}

// noKeyLeak checks that an error message names no storage key of alice,
// the caller of every operation it is used on.
func noKeyLeak(t *testing.T, op string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "alice/") {
		t.Errorf("%s: error %q leaks a storage key", op, err)
	}
}

func paths(infos []vfs.Info) []string {
	out := make([]string, 0, len(infos))
	for _, i := range infos {
		out = append(out, i.Path)
	}
	return out
}

// listAll follows every page of a listing, checking that no page holds more
// than maxPage entries.
func listAll(t *testing.T, fs *vfs.FS, id mounts.Caller, vpath string, pageSize, maxPage int) (entries []vfs.Info, pages int) {
	t.Helper()
	token := ""
	for {
		res, err := fs.List(t.Context(), id, vpath, pageSize, token)
		if err != nil {
			t.Fatalf("List(%s, page %d): %v", vpath, pages, err)
		}
		pages++
		if len(res.Entries) > maxPage {
			t.Errorf("List(%s) page %d has %d entries, want at most %d", vpath, pages, len(res.Entries), maxPage)
		}
		entries = append(entries, res.Entries...)
		if res.NextPageToken == "" {
			return entries, pages
		}
		if pages > 100 {
			t.Fatalf("List(%s): no end after %d pages", vpath, pages)
		}
		token = res.NextPageToken
	}
}

func readAllClose(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return data
}

// stalled stands in for a backend that stops answering: Get of keys ending
// in stallGet, and with listPage > 0 every listing page after the first (of
// listPage keys), block until the caller's context ends.
func stalled(b objstore.Bucket, stallGet string, listPage int) *objstoretest.Faulty {
	f := objstoretest.NewFaulty(b)
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	if stallGet != "" {
		f.Before(objstore.OpGet, func(ctx context.Context, c objstoretest.Call) error {
			if strings.HasSuffix(c.Key, stallGet) {
				return hang(ctx)
			}
			return nil
		})
	}
	if listPage > 0 {
		f.LimitPage(listPage)
		f.Before(objstore.OpList, func(ctx context.Context, c objstoretest.Call) error {
			if c.List.Token != "" {
				return hang(ctx)
			}
			return nil
		})
	}
	return f
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		tune func(*vfs.Config)
		ok   bool
	}{
		{"defaults", func(*vfs.Config) {}, true},
		{"zero read limit", func(c *vfs.Config) { c.MaxReadBytes = 0 }, false},
		{"negative chunk size", func(c *vfs.Config) { c.ChunkSize = -1 }, false},
		{"zero edit attempts", func(c *vfs.Config) { c.EditAttempts = 0 }, false},
		{"list page above one S3 page", func(c *vfs.Config) { c.MaxListPage = 1001 }, false},
		{"list page of one S3 page", func(c *vfs.Config) { c.MaxListPage = 1000 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := vfs.DefaultConfig()
			tc.tune(&cfg)
			if err := cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if _, err := vfs.New(nil, mounts.Default(), cfg); tc.ok != (err == nil) {
				t.Errorf("New() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
