package skills

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
)

// blockingList holds every List until release is closed (or its context
// ends) and counts the calls.
type blockingList struct {
	objstore.Bucket
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func (b *blockingList) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	if b.calls.Add(1) == 1 {
		close(b.entered)
	}
	select {
	case <-b.release:
		return b.Bucket.List(ctx, opts)
	case <-ctx.Done():
		return objstore.ListPage{}, ctx.Err()
	}
}

func newTestLibrary(t *testing.T, b objstore.Bucket, ttl time.Duration) *Library {
	t.Helper()
	cfg := DefaultConfig()
	cfg.IndexTTL = ttl
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func newLocal(t *testing.T) objstore.Bucket {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestSharedListingOutlivesCaller: a caller that gives up must not fail the
// listing that others are waiting for, nor make them list again.
func TestSharedListingOutlivesCaller(t *testing.T) {
	b := &blockingList{Bucket: newLocal(t), entered: make(chan struct{}), release: make(chan struct{})}
	lib := newTestLibrary(t, b, time.Hour)

	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() { _, err := lib.Catalog.views.listings.get(ctxA, "p/"); errA <- err }()
	<-b.entered
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}

	resB := make(chan error, 1)
	go func() { _, err := lib.Catalog.views.listings.get(context.Background(), "p/"); resB <- err }()
	close(b.release)
	if err := <-resB; err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if n := b.calls.Load(); n != 1 {
		t.Errorf("%d listings, want the first one shared", n)
	}
}

func put(t *testing.T, b objstore.Bucket, key, body string) {
	t.Helper()
	if _, err := b.Put(context.Background(), key, bytes.NewReader([]byte(body)), int64(len(body)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestViewReuse: a view is reused while its listings are, per user, and
// rebuilt when a listing is new.
func TestViewReuse(t *testing.T) {
	b := newLocal(t)
	put(t, b, "alice/skills/a/SKILL.md", "---\nname: a\ndescription: d\n---\n")
	put(t, b, "bob/skills/b/SKILL.md", "---\nname: b\ndescription: d\n---\n")
	lib := newTestLibrary(t, b, time.Hour)
	ctx := context.Background()
	alice, bob := mounts.Identity{User: "alice", Thread: "t1"}, mounts.Identity{User: "bob", Thread: "t1"}

	v1, err := lib.Catalog.views.get(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := lib.Catalog.views.get(ctx, mounts.Identity{User: "alice", Thread: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if v1 != v2 {
		t.Error("the view was rebuilt although its listings were reused")
	}
	vb, err := lib.Catalog.views.get(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := vb.byName["a"]; ok || vb.byName["b"] == nil {
		t.Errorf("bob's view has %v", vb.byName)
	}
	lib.Catalog.views.listings.cache.Remove("alice/skills/") // as when the TTL ends
	put(t, b, "alice/skills/c/SKILL.md", "---\nname: c\ndescription: d\n---\n")
	v3, err := lib.Catalog.views.get(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if v3 == v1 || v3.byName["c"] == nil {
		t.Error("a new listing did not rebuild the view")
	}
}

// countingGets counts object reads by key.
type countingGets struct {
	objstore.Bucket
	reads sync.Map // key -> *atomic.Int32
}

func (c *countingGets) count(key string) {
	n, _ := c.reads.LoadOrStore(key, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

func (c *countingGets) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	c.count(key)
	return c.Bucket.Get(ctx, key)
}

func (c *countingGets) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, objstore.Attributes, error) {
	c.count(key)
	return c.Bucket.GetRange(ctx, key, off, n)
}

// TestRenderReadsOnlySkillMD: invoking a skill pays for its instructions,
// not for sniffing every resource (that is GetSkill's job).
func TestRenderReadsOnlySkillMD(t *testing.T) {
	b := &countingGets{Bucket: newLocal(t)}
	put(t, b, "alice/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: d\n---\nbody\n")
	put(t, b, "alice/skills/pdf/scripts/run.py", "print(1)\n")
	put(t, b, "alice/skills/pdf/assets/logo.png", "\x00png")
	lib := newTestLibrary(t, b, 0)
	if _, _, err := lib.Catalog.Render(context.Background(), mounts.Identity{User: "alice", Thread: "t"}, "pdf", ""); err != nil {
		t.Fatal(err)
	}
	b.reads.Range(func(k, _ any) bool {
		if k != "alice/skills/pdf/SKILL.md" && k != "alice/settings/skills.json" {
			t.Errorf("Render read %s", k)
		}
		return true
	})
}
