package vfs_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// cancelAfterFetch calls cancel, once set, when the body of a key ending in
// suffix has been read to its end: after Grep fetched the file and before it
// scans it.
type cancelAfterFetch struct {
	objstore.Bucket
	suffix string
	cancel context.CancelFunc
}

func (b *cancelAfterFetch) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	rc, a, err := b.Bucket.Get(ctx, key)
	if err != nil || b.cancel == nil || !strings.HasSuffix(key, b.suffix) {
		return rc, a, err
	}
	return atEOF{ReadCloser: rc, fn: b.cancel}, a, nil
}

type atEOF struct {
	io.ReadCloser
	fn func()
}

func (r atEOF) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		r.fn()
	}
	return n, err
}

// TestGrepCancelledMidFile: a search cancelled while it scans a big file
// stops inside it, so the match on the file's last line is never reached.
func TestGrepCancelledMidFile(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		for _, tc := range []struct{ name, base string }{
			{"single file", "/workspace/big.txt"},
			{"directory", "/workspace"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				bucket := &cancelAfterFetch{Bucket: newBucket(t), suffix: "/big.txt"}
				e := newEnv(t, bucket, nil)
				// 3 MB of lines, under the default MaxGrepFileBytes.
				e.write(t, alice, "/workspace/big.txt", strings.Repeat("filler line of twenty\n", 150_000)+"needle\n")
				opts := vfs.GrepOptions{Pattern: "needle"}
				if res, err := e.fs.Grep(t.Context(), alice, tc.base, opts); err != nil || len(res.Matches) != 1 {
					t.Fatalf("uncancelled Grep = %+v, %v; want the needle", res.Matches, err)
				}

				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				bucket.cancel = cancel
				res, err := e.fs.Grep(ctx, alice, tc.base, opts)
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled Grep: err = %v, want context.Canceled or a truncated result", err)
				}
				if err == nil && !res.Truncated {
					t.Error("cancelled Grep: result not marked truncated")
				}
				if len(res.Matches) != 0 {
					t.Errorf("cancelled Grep scanned on to the end of the file: %+v", res.Matches)
				}
			})
		}
	})
}
