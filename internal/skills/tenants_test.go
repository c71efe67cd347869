package skills

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/views"
)

// tenantReplica is one replica as deployed (refresh 5s, max stale 30s)
// over b and c, with a held budget of maxHeld bytes (0: the default), on
// clk.
func tenantReplica(t *testing.T, b objstore.Bucket, c cache.Cache, clk *clock, maxHeld int64) *Library {
	t.Helper()
	cfg := DefaultConfig()
	if maxHeld > 0 {
		cfg.MaxHeldBytes = maxHeld
	}
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler), WithCache(c), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	lib.indexes.SetNow(clk.Now)
	t.Cleanup(lib.Close)
	return lib
}

// checkTenant checks u's listing: the shared skills and u's own, u's
// skill-0007 in place of the shared one.
func checkTenant(t *testing.T, lib *Library, u, shared, personal int) {
	t.Helper()
	list, err := lib.Catalog.Skills(t.Context(), tenant(u), skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != shared+personal-1 {
		t.Fatalf("%s lists %d skills, want %d", tenantName(u), len(list), shared+personal-1)
	}
	for _, s := range list {
		if s.Name == "skill-0007" && s.Layer != skillview.LayerUser {
			t.Fatalf("%s: skill-0007 is the %s one, want the user's", tenantName(u), s.Layer)
		}
	}
}

func heldGauge(lib *Library, kind string) float64 {
	return testutil.ToFloat64(lib.metrics.HeldBytes.WithLabelValues(kind))
}

// TestHeldBound: with more users than the budget holds, what the replica
// holds decoded never passes --skills.max-held-bytes, the least recently
// used users' views and indexes go (the shared library, used by every
// call, stays), every call is still answered right, and the metrics show
// the bound and the evictions.
func TestHeldBound(t *testing.T) {
	const shared, users, personal = 100, 80, 5
	b := objstoretest.NewBucket(t, tenantFiles(shared, users, personal))
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	const budget = 1 << 20 // the shared library and a few dozen users
	lib := tenantReplica(t, b, cache.NewLRU(64<<20), clk, budget)
	held := lib.indexes.Held()
	for round := range 2 {
		for u := range users {
			checkTenant(t, lib, u, shared, personal)
			if n := held.Bytes(); n > budget {
				t.Fatalf("round %d, user %d: %d bytes held, budget %d", round, u, n, budget)
			}
		}
	}
	sum := heldGauge(lib, libindex.HeldIndex) + heldGauge(lib, views.HeldLayer) + heldGauge(lib, views.HeldView) + heldGauge(lib, settings.HeldKind)
	if int64(sum) != held.Bytes() || sum == 0 {
		t.Errorf("skillsvc_skills_held_bytes sums to %v, want %d", sum, held.Bytes())
	}
	if n := testutil.ToFloat64(lib.metrics.HeldMaxBytes); n != budget {
		t.Errorf("skillsvc_skills_held_max_bytes = %v, want %d", n, budget)
	}
	for _, kind := range []string{libindex.HeldIndex, views.HeldView} {
		if n := testutil.ToFloat64(lib.metrics.HeldEvictions.WithLabelValues(kind)); n == 0 {
			t.Errorf("no %s evicted: the budget was never reached", kind)
		}
	}
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(views.HeldLayer)); n != 1 {
		t.Errorf("%v shared layers held, want 1", n)
	}
	if n := testutil.ToFloat64(lib.metrics.HeldEvictions.WithLabelValues(views.HeldLayer)); n != 0 {
		t.Errorf("the shared layer, used by every call, was evicted %v times", n)
	}
}

// TestSharedLayerNotCopied: every user's view reads the shared library in
// place. N users' views cost the shared layer once and each user's own
// skills: held (as charged) and on the heap (as measured).
func TestSharedLayerNotCopied(t *testing.T) {
	const shared, users, personal = 300, 200, 5
	b := objstoretest.NewBucket(t, tenantFiles(shared, users+1, personal))
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib := tenantReplica(t, b, cache.NewLRU(64<<20), clk, 0)
	checkTenant(t, lib, users, shared, personal) // the shared layer is built
	sharedBytes := heldGauge(lib, views.HeldLayer)
	oneView := heldGauge(lib, views.HeldView)
	before := heapAfter()
	for u := range users {
		checkTenant(t, lib, u, shared, personal)
	}
	perUser := float64(heapAfter()-before) / users
	perView := (heldGauge(lib, views.HeldView) - oneView) / users
	t.Logf("shared layer %.0f bytes; per user: view %.0f bytes held, %.0f bytes of heap (index and cache entries included)", sharedBytes, perView, perUser)
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(views.HeldLayer)); n != 1 {
		t.Errorf("%v shared layers held, want 1", n)
	}
	// A user's 5 skills, with their files, frontmatter and manifests, are
	// about 1/60 of a 300-skill library: a copy would be 60 times that.
	if perView > 1.5*oneView || perView > sharedBytes/20 {
		t.Errorf("a user's view is charged %.0f bytes (the first %.0f); the shared layer %.0f", perView, oneView, sharedBytes)
	}
	if perUser > sharedBytes/10 {
		t.Errorf("each user costs %.0f bytes of heap, a tenth of the shared layer is %.0f: is it copied?", perUser, sharedBytes/10)
	}
}

// tenantFixture is a MinIO bucket holding a shared library and users'
// ones, and a Redis key space every replica of the test shares.
type tenantFixture struct {
	bucket objstore.Bucket
	redis  cache.RedisConfig
}

func newTenantFixture(t *testing.T, shared, users, personal int) tenantFixture {
	t.Helper()
	srv := testserver.SharedMinIO(t)
	b := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	var failed error
	for k, v := range tenantFiles(shared, users, personal) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := b.Put(context.Background(), k, strings.NewReader(v), int64(len(v)), objstore.PutOptions{}); err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	cfg := cache.DefaultConfig().Redis
	cfg.Addrs = []string{testserver.SharedRedis(t).Addr}
	cfg.KeyPrefix = "test-" + rand.Text() + ":"
	return tenantFixture{bucket: b, redis: cfg}
}

// cache is a replica's cache: the stack cmd/skillsvc builds with Redis
// (the process level in front).
func (f tenantFixture) cache(t *testing.T) cache.Cache {
	t.Helper()
	cfg := cache.DefaultConfig()
	cfg.Redis = f.redis
	c, err := cache.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// lister records the prefixes a replica lists.
type lister struct {
	*objstoretest.Faulty
	mu       sync.Mutex
	prefixes map[string]int
}

func newLister(b objstore.Bucket) *lister {
	l := &lister{Faulty: objstoretest.NewFaulty(b), prefixes: map[string]int{}}
	l.Before(objstore.OpList, func(_ context.Context, c objstoretest.Call) error {
		if c.List.Token == "" { // a listing's first page
			l.mu.Lock()
			l.prefixes[c.Key]++
			l.mu.Unlock()
		}
		return nil
	})
	return l
}

func (l *lister) listed(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prefixes[prefix]
}

// TestRevalidatedOncePerInterval: two replicas serving one user, and the
// shared library, for several refresh intervals, list each library once an
// interval between them, whichever serves first; a user nobody calls is
// not listed again.
func TestRevalidatedOncePerInterval(t *testing.T) {
	f := newTenantFixture(t, 3, 2, 2)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	la, lb := newLister(f.bucket), newLister(f.bucket)
	a := tenantReplica(t, la, f.cache(t), clk, 0)
	b := tenantReplica(t, lb, f.cache(t), clk, 0)
	active, idle := tenant(0), tenant(1)
	serve := func(lib *Library, id mounts.Caller) {
		t.Helper()
		if _, err := lib.Catalog.Skills(t.Context(), id, skillview.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		lib.indexes.Close() // the background revalidations it started
	}
	serve(a, active)
	serve(a, idle)
	serve(b, active)
	const rounds = 6
	for r := range rounds {
		clk.Advance(pastDue())
		first, second := a, b
		if r%2 == 1 {
			first, second = b, a
		}
		serve(first, active)
		serve(second, active)
		serve(second, active)
	}
	listed := func(prefix string) int { return la.listed(prefix) + lb.listed(prefix) }
	for _, tc := range []struct {
		prefix string
		want   int
	}{
		{tenantName(0) + "/skills/", rounds + 1},
		{"_shared/skills/", rounds + 1},
		{tenantName(1) + "/skills/", 1},
	} {
		if n := listed(tc.prefix); n != tc.want {
			t.Errorf("%s listed %d times over %d intervals on two replicas, want %d", tc.prefix, n, rounds, tc.want)
		}
	}

}

// lockHook runs before once, ahead of the first TryLock through it.
type lockHook struct {
	cache.Cache
	once   sync.Once
	before func()
}

func (h *lockHook) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	h.once.Do(h.before)
	return h.Cache.TryLock(ctx, key, ttl)
}

// TestRevalidationRace: replica B finds its index too old and goes to
// revalidate it, but replica A revalidates it first (between B's look at
// the shared cache and B's taking the lock): B takes A's index from Redis
// instead of listing again, in the background as when the caller waits.
func TestRevalidationRace(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  time.Duration
		mode string
	}{
		{"background", pastDue(), libindex.ModeBackground},
		{"sync", 31 * time.Second, libindex.ModeSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTenantFixture(t, 3, 1, 2)
			clk := &clock{now: time.Unix(1_800_000_000, 0)}
			la, lb := newLister(f.bucket), newLister(f.bucket)
			a := tenantReplica(t, la, f.cache(t), clk, 0)
			red, err := cache.NewRedis(f.redis) // B's locks and values in Redis alone
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { red.Close() })
			hook := &lockHook{Cache: red}
			b := tenantReplica(t, lb, hook, clk, 0)
			id := tenant(0)
			serve := func(lib *Library) {
				t.Helper()
				if _, err := lib.Catalog.Skills(t.Context(), id, skillview.ListOptions{}); err != nil {
					t.Fatal(err)
				}
				lib.indexes.Close()
			}
			hook.before = func() {} // warming up takes no detour
			serve(a)
			serve(b)
			hook.once = sync.Once{}
			hook.before = func() { serve(a) } // A revalidates both layers first
			listsA, listsB := la.Calls(objstore.OpList), lb.Calls(objstore.OpList)
			clk.Advance(tc.age)
			serve(b)
			if n := la.Calls(objstore.OpList) - listsA; n != 2 {
				t.Errorf("replica A listed %d times, want 2 (both layers)", n)
			}
			if n := lb.Calls(objstore.OpList) - listsB; n != 0 {
				t.Errorf("replica B listed %d times after A had revalidated, want 0", n)
			}
			if n := testutil.ToFloat64(b.metrics.Revalidations.WithLabelValues(tc.mode, libindex.ResultElsewhere)); n != 2 {
				t.Errorf("replica B took %v indexes another replica revalidated, want 2", n)
			}
		})
	}
}

// TestDroppedViewReloadsFromRedis: a replica that dropped a user's view
// and index (its budget full of other users) serves that user again from
// Redis, without a storage request: the index, the settings and the
// SKILL.md another replica read.
func TestDroppedViewReloadsFromRedis(t *testing.T) {
	const shared, users, personal = 20, 30, 3
	f := newTenantFixture(t, shared, users, personal)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	a := tenantReplica(t, f.bucket, f.cache(t), clk, 0)
	for u := range users {
		checkTenant(t, a, u, shared, personal)
	}
	fb := objstoretest.NewFaulty(f.bucket)
	b := tenantReplica(t, fb, f.cache(t), clk, 128<<10) // the shared library and a few users
	get := func(u int) {
		t.Helper()
		if _, err := b.Catalog.Get(t.Context(), tenant(u), "mine-1"); err != nil {
			t.Fatal(err)
		}
	}
	get(0)
	for u := 1; u < users; u++ {
		checkTenant(t, b, u, shared, personal)
	}
	own, _, err := b.Catalog.views.Layers(tenant(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Catalog.views.Overlays.Get(own.Prefix); ok {
		t.Fatal("user 0's view is still held: the budget is too large for the test")
	}
	calls := fb.Calls("")
	get(0)
	checkTenant(t, b, 0, shared, personal)
	if n := fb.Calls("") - calls; n != 0 {
		t.Errorf("serving a dropped view made %d storage requests, want 0", n)
	}
	if n := fb.Calls(""); n != 0 {
		t.Logf("(replica B made %d storage requests in all: none, as A had served every user)", n)
	}
}
