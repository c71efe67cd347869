package library_test

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
)

// gatedIndex holds reads of provenance indexes while gate is set, and
// counts the reads that got through.
type gatedIndex struct {
	objstore.Bucket
	gate  atomic.Pointer[chan struct{}]
	reads atomic.Int64
}

func (g *gatedIndex) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	if strings.HasSuffix(key, "provenance.json") {
		if ch := g.gate.Load(); ch != nil {
			<-*ch
		}
		defer g.reads.Add(1)
	}
	return g.Bucket.Get(ctx, key)
}

// TestProvenanceReadOffTheCall: past its freshness a library's provenance
// index is answered from the replica's copy at once and read again in the
// background; the next call sees what that read found (here a version
// another replica published).
func TestProvenanceReadOffTheCall(t *testing.T) {
	ctx := t.Context()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedIndex{Bucket: b}
	e := newEnv(t, g, nil)
	other := newEnv(t, b, nil) // another replica, on the bucket itself
	now := time.Now()
	library.SetClock(e.pub, func() time.Time { return now })
	own := layout.LibraryRef{User: "alice"}
	if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "Fill PDF forms.")}); err != nil {
		t.Fatal(err)
	}
	idx, err := e.pub.LibraryProvenance(ctx, own)
	if err != nil || len(idx) != 1 {
		t.Fatalf("first read: %v, %v", idx, err)
	}
	if _, err := other.pub.Publish(ctx, alice, library.PublishRequest{Name: "xlsx", Files: folder("xlsx", "Edit spreadsheets.")}); err != nil {
		t.Fatal(err)
	}
	// Fresh: the copy, no read.
	before := g.reads.Load()
	if idx, _ := e.pub.LibraryProvenance(ctx, own); len(idx) != 1 || g.reads.Load() != before {
		t.Fatalf("within its freshness: %d skills, %d reads", len(idx), g.reads.Load()-before)
	}
	// Stale, with the index's reads held: the call answers from the copy
	// (a call that waited would hold the test).
	gate := make(chan struct{})
	g.gate.Store(&gate)
	now = now.Add(11 * time.Second)
	if idx, err := e.pub.LibraryProvenance(ctx, own); err != nil || len(idx) != 1 {
		t.Fatalf("stale copy: %v, %v", idx, err)
	}
	close(gate)
	library.WaitProvenanceReads(e.pub)
	if idx, _ := e.pub.LibraryProvenance(ctx, own); len(idx) != 2 {
		t.Fatalf("after the background read the copy holds %d skills, want 2", len(idx))
	}
}
