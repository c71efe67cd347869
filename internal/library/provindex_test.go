package library_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
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

// indexWrites counts the conditional writes of provenance indexes.
type indexWrites struct {
	objstore.Bucket
	n atomic.Int64
}

func (w *indexWrites) Put(ctx context.Context, key string, r io.Reader, size int64, o objstore.PutOptions) (objstore.Attributes, error) {
	if strings.HasSuffix(key, "provenance.json") && (o.IfMatch != "" || o.IfNoneMatch) {
		w.n.Add(1)
	}
	return w.Bucket.Put(ctx, key, r, size, o)
}

// TestProvenanceBurst: two replicas publish 32 skills each at once into
// one library on MinIO; every skill's provenance is in the library's
// index (read by a third replica, from the bucket), and the index took
// fewer conditional writes than publishes: the changes queued on a replica
// while its write ran went into its next one. (One write per publish,
// each racing the 63 others and giving up after 8 lost races, lost some.)
func TestProvenanceBurst(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	b := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	w := &indexWrites{Bucket: b}
	replicas := []env{newEnv(t, w, nil), newEnv(t, w, nil)}
	const n = 32
	ids := make([]string, 2*n)
	var g errgroup.Group
	for i := range 2 * n {
		g.Go(func() error {
			name := fmt.Sprintf("skill-%02d", i)
			r, err := replicas[i%2].pub.Publish(t.Context(), alice, library.PublishRequest{Name: name, Files: folder(name, "Skill number "+fmt.Sprint(i)+".")})
			ids[i] = r.Version.ID
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		r.pub.Close()
	}
	idx, err := newEnv(t, b, nil).pub.LibraryProvenance(t.Context(), layout.LibraryRef{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		name := fmt.Sprintf("skill-%02d", i)
		if got := idx[name]; got.Digest != id || got.Version != id || got.Publisher != "alice" {
			t.Errorf("%s: index entry %+v, want version %s", name, got, id)
		}
	}
	writes := w.n.Load()
	t.Logf("%d publishes into one library on 2 replicas: %d conditional writes of its provenance index", 2*n, writes)
	if writes >= 2*n {
		t.Errorf("%d conditional index writes for %d publishes: not batched", writes, 2*n)
	}
}

// TestProvenanceRepaired: an index that lost a live version's entry (a
// change given up) gets it back once a listing asks for a repair, in the
// background; a copy no version holds (uploaded) is not written, nor is
// a copy of an older version's files.
func TestProvenanceRepaired(t *testing.T) {
	ctx := t.Context()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, b, nil)
	own := layout.LibraryRef{User: "alice"}
	var ids []string
	for _, desc := range []string{"Fill PDF forms.", "Fill and sign PDF forms."} {
		r, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", desc)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Version.ID)
	}
	cfg := e.pub.Config()
	key := layout.VersionsOf(cfg.Root(own)).Provenance()
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	replica := newEnv(t, b, nil)
	replica.pub.RepairProvenance(own, "pdf", "sha256:"+strings.Repeat("0", 64)) // uploaded: no version
	replica.pub.RepairProvenance(own, "pdf", ids[0])                            // not the latest
	library.WaitProvenanceReads(replica.pub)
	if _, err := b.Stat(ctx, key); !objstore.IsNotFound(err) {
		t.Fatalf("index written for a copy no latest version holds: %v", err)
	}
	replica = newEnv(t, b, nil)
	replica.pub.RepairProvenance(own, "pdf", ids[1])
	library.WaitProvenanceReads(replica.pub)
	idx, err := newEnv(t, b, nil).pub.LibraryProvenance(ctx, own)
	if err != nil || idx["pdf"].Digest != ids[1] || idx["pdf"].Version != ids[1] {
		t.Fatalf("repaired index = %v, %v; want pdf at %s", idx, err, ids[1])
	}
}
