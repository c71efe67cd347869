package skills

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// newTestLibrary is skillstest.Library for the tests inside the package,
// which cannot import skillstest (it imports skills).
func newTestLibrary(t *testing.T, b objstore.Bucket, ttl time.Duration) *Library {
	t.Helper()
	cfg := DefaultConfig()
	cfg.IndexRefresh, cfg.IndexMaxStale, cfg.StaleIfError = ttl, ttl, ttl
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

var testLayer = libindex.Layer{Tag: "p", Prefix: "p/", Object: "p/settings/skills.index"}

// TestSharedListingOutlivesCaller: a caller that gives up must not fail the
// listing that others are waiting for, nor make them list again.
func TestSharedListingOutlivesCaller(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	entered, release := make(chan struct{}), make(chan struct{})
	var enter sync.Once
	// Every List waits for release (or its context to end).
	b.Before(objstore.OpList, func(ctx context.Context, _ objstoretest.Call) error {
		enter.Do(func() { close(entered) })
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	lib := newTestLibrary(t, b, time.Hour)

	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() { _, err := lib.Catalog.views.Indexes.Get(ctxA, testLayer); errA <- err }()
	<-entered
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}

	resB := make(chan error, 1)
	go func() { _, err := lib.Catalog.views.Indexes.Get(context.Background(), testLayer); resB <- err }()
	close(release)
	if err := <-resB; err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if n := b.Calls(objstore.OpList); n != 1 {
		t.Errorf("%d listings, want the first one shared", n)
	}
}

// TestViewReuse: a view is reused while its listings are, per user, and
// rebuilt when a listing is new.
func TestViewReuse(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{
		"alice/skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\n",
		"bob/skills/b/SKILL.md":   "---\nname: b\ndescription: d\n---\n",
	})
	lib := newTestLibrary(t, b, time.Hour)
	ctx := context.Background()
	alice, bob := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"}), mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1"})

	v1, err := lib.Catalog.views.Get(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := lib.Catalog.views.Get(ctx, mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t2"}))
	if err != nil {
		t.Fatal(err)
	}
	if v1.Overlay != v2.Overlay {
		t.Error("the view was rebuilt although its listings were reused")
	}
	vb, err := lib.Catalog.views.Get(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := vb.Named("a"); ok {
		t.Error("bob's view has alice's skill a")
	}
	if _, ok := vb.Named("b"); !ok {
		t.Error("bob's view lacks his skill b")
	}
	// As after a bulk upload.
	if err := lib.Catalog.DropIndex(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	c := "---\nname: c\ndescription: d\n---\n"
	if _, err := b.Put(ctx, "alice/skills/c/SKILL.md", strings.NewReader(c), int64(len(c)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	v3, err := lib.Catalog.views.Get(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v3.Named("c"); v3.Overlay == v1.Overlay || !ok {
		t.Error("a new listing did not rebuild the view")
	}
}

// TestRenderReadsOnlySkillMD: invoking a skill pays for its instructions,
// not for sniffing every resource (that is GetSkill's job).
func TestRenderReadsOnlySkillMD(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{
		"alice/skills/pdf/SKILL.md":        "---\nname: pdf\ndescription: d\n---\nbody\n",
		"alice/skills/pdf/scripts/run.py":  "print(1)\n",
		"alice/skills/pdf/assets/logo.png": "\x00png",
	}))
	lib := newTestLibrary(t, b, 0)
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	// The index build hashes every file once; invoking pays for no more.
	if _, err := lib.Catalog.Skills(t.Context(), id, skillview.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var read []string
	record := func(_ context.Context, c objstoretest.Call) error {
		mu.Lock()
		defer mu.Unlock()
		read = append(read, c.Key)
		return nil
	}
	b.Before(objstore.OpGet, record)
	b.Before(objstore.OpGetRange, record)
	if _, _, err := lib.Catalog.Render(context.Background(), id, "pdf", skillview.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range read {
		if k != "alice/skills/pdf/SKILL.md" && k != "alice/settings/skills.json" {
			t.Errorf("Render read %s", k)
		}
	}
}

// TestSharedManifestsShared: every user's view built from one shared index
// holds the same manifest of a shared skill, made once, not a copy per
// user; a new generation of the shared index makes it anew.
func TestSharedManifestsShared(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{
		"_shared/skills/lint/SKILL.md":  "---\nname: lint\ndescription: d\n---\n",
		"_shared/skills/lint/rules.txt": "no tabs\n",
	})
	lib := newTestLibrary(t, b, time.Hour)
	manifest := func(user string) *skillview.Manifest {
		t.Helper()
		v, err := lib.Catalog.views.Get(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t"}))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := v.Named("lint")
		if s == nil || s.Manifest == nil || len(s.Manifest.Files) != 2 {
			t.Fatalf("%s's view: lint = %+v", user, s)
		}
		return s.Manifest
	}
	alice := manifest("alice")
	if bob := manifest("bob"); bob != alice {
		t.Error("bob's view holds its own copy of the shared skill's manifest")
	}
	objstoretest.Put(t, b, "_shared/skills/lint/rules.txt", "no tabs, ever\n")
	if err := lib.Catalog.DropSharedIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	if carol := manifest("carol"); carol == alice || carol.Files[1].SHA256 == alice.Files[1].SHA256 {
		t.Error("a new shared index kept the old manifest")
	}
}
