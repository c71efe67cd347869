package scanpolicy

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// failingReads is a bucket whose reads fail while fail says so, as a store
// that is down or timing out does, and counts them.
type failingReads struct {
	objstore.Bucket
	mu    sync.Mutex
	fail  func(n int) bool // the n-th read (from 1) fails
	reads int
}

func (b *failingReads) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, objstore.Attributes, error) {
	b.mu.Lock()
	b.reads++
	failing := b.fail(b.reads)
	b.mu.Unlock()
	if failing {
		return nil, objstore.Attributes{}, errors.New("storage unavailable")
	}
	return b.Bucket.GetRange(ctx, key, off, n)
}

func (b *failingReads) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	return b.GetRange(ctx, key, 0, -1)
}

func (b *failingReads) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reads
}

// TestBackgroundScanRetried: a background scan of an uploaded skill whose
// reads fail is retried after a backoff (2s, then 8s, then 32s; never
// sooner), and its verdict is known, and the layer told, once a retry
// reads the files; one that fails every time is given up after three
// retries (skillsvc_scan_failures_total) until the layer is built again,
// which queues it anew.
func TestBackgroundScanRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int // reads that fail before they succeed; -1: all
		retried  float64
		givenUp  float64
	}{
		{"recovers on the second retry", 2, 2, 0},
		{"given up after three retries", -1, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				mem := memory.New()
				const key = "_shared/skills/notes/SKILL.md"
				body := "---\nname: notes\ndescription: Summarize meeting notes.\n---\nList the decisions.\n"
				a, err := mem.Put(ctx, key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{})
				if err != nil {
					t.Fatal(err)
				}
				bucket := &failingReads{Bucket: mem, fail: func(n int) bool { return tc.failures < 0 || n <= tc.failures }}
				// Nothing cached: every read of the scan reaches the bucket.
				files := libindex.NewFiles(bucket, nil, libindex.Config{}, libindex.NewCacheLog(nil), libindex.NewMetrics(prometheus.NewRegistry()))
				var p Policy
				if err := p.Set("warn"); err != nil {
					t.Fatal(err)
				}
				s := New(p, 2, nil, prometheus.NewRegistry(), nil)
				defer s.Close()
				const digest = "sha256:0123"
				ref := func() []*skillview.Ref {
					return []*skillview.Ref{{
						Dir: "notes", Layer: skillview.LayerShared, Name: "notes", Location: "/skills/notes/SKILL.md",
						Files:    []skillview.Entry{{Rel: "notes/SKILL.md", Obj: objstore.Object{Key: key, Attributes: a}}},
						Manifest: &skillview.Manifest{Digest: digest},
					}}
				}
				var told atomic.Int32
				changed := func() { told.Add(1) }
				org := layout.LibraryRef{Shared: true}

				s.Layer(ctx, skillview.LayerShared, "_shared/skills/", ref(), files, changed)
				synctest.Wait()
				if n := bucket.count(); n != 1 {
					t.Fatalf("%d reads after the first scan, want 1", n)
				}
				// Each retry waits its backoff, never less.
				for i, backoff := range []time.Duration{2 * time.Second, 8 * time.Second, 32 * time.Second} {
					if tc.failures >= 0 && i >= tc.failures {
						break
					}
					time.Sleep(backoff - time.Millisecond)
					synctest.Wait()
					if n := bucket.count(); n != i+1 {
						t.Fatalf("%d reads %v into backoff %d, want %d (no retry yet)", n, backoff-time.Millisecond, i+1, i+1)
					}
					time.Sleep(time.Millisecond)
					synctest.Wait()
					if n := bucket.count(); n != i+2 {
						t.Fatalf("%d reads after backoff %d, want %d", n, i+1, i+2)
					}
				}
				if got := testutil.ToFloat64(s.failed.WithLabelValues("retried")); got != tc.retried {
					t.Errorf("retried = %v, want %v", got, tc.retried)
				}
				if got := testutil.ToFloat64(s.failed.WithLabelValues("given_up")); got != tc.givenUp {
					t.Errorf("given up = %v, want %v", got, tc.givenUp)
				}
				if tc.failures >= 0 {
					if st := s.Status(ctx, org, digest); st != "clean" || told.Load() != 1 {
						t.Errorf("after the retry: status %q, layer told %d times; want clean, once", st, told.Load())
					}
					if got := testutil.ToFloat64(s.runs.WithLabelValues(SourceUpload)); got != 1 {
						t.Errorf("upload scans = %v, want 1", got)
					}
					return
				}
				// Given up: nothing more, however long; the layer built
				// again queues it anew.
				time.Sleep(time.Hour)
				synctest.Wait()
				if n := bucket.count(); n != 4 {
					t.Fatalf("%d reads an hour after giving up, want 4", n)
				}
				if st := s.Status(ctx, org, digest); st != "unscanned" || told.Load() != 0 {
					t.Errorf("given up: status %q, layer told %d times; want unscanned, never", st, told.Load())
				}
				s.Layer(ctx, skillview.LayerShared, "_shared/skills/", ref(), files, changed)
				synctest.Wait()
				if n := bucket.count(); n != 5 {
					t.Fatalf("%d reads after the layer was built again, want 5", n)
				}
			})
		})
	}
}
