package libindex

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// testClock is a clock the store reads instead of time.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pollingStore is a store as deployed without events (refresh 5s, max
// stale 30s) on clk over b, recording when it lists alice's library.
func pollingStore(t *testing.T, b *objstoretest.Faulty, c cache.Cache, clk *testClock) (*Store, *[]time.Time) {
	t.Helper()
	if c == nil {
		c = cache.NewLRU(32 << 20)
	}
	cfg := testConfig(5 * time.Second)
	cfg.IndexMaxStale = 30 * time.Second
	log := slog.New(slog.DiscardHandler)
	ix := New(b, c, cfg, log, NewCacheLog(log), NewMetrics(nil))
	ix.SetNow(clk.Now)
	t.Cleanup(ix.Close)
	var (
		mu    sync.Mutex
		lists []time.Time
	)
	b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
		mu.Lock()
		defer mu.Unlock()
		lists = append(lists, clk.Now())
		return nil
	})
	return ix, &lists
}

// get is one call for alice's library, with the background revalidation
// it started finished.
func get(t *testing.T, ix *Store) *Index {
	t.Helper()
	x, err := ix.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	return x
}

// shortest and longest bound the interval d gives: it ends on the
// library's point of the phase cycle, within a cycle ending d's slack past
// d.
func shortest(ix *Store, d time.Duration) time.Duration { return d - ix.phase() + ix.slack(d) }
func longest(ix *Store, d time.Duration) time.Duration  { return d + ix.slack(d) }

// gaps are the intervals between consecutive listings.
func gaps(lists []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(lists); i++ {
		out = append(out, lists[i].Sub(lists[i-1]))
	}
	return out
}

// TestRevalidationFollowsChange: a library called every second is listed
// every refresh interval while it is new, less and less often while it
// stays unchanged (up to MaxRefresh, below the max staleness), and every
// refresh interval again once a listing finds it changed. Throughout, a
// change shows up within the max staleness.
func TestRevalidationFollowsChange(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	ix, lists := pollingStore(t, b, nil, clk)
	if ix.MaxRefresh() != 25*time.Second {
		t.Fatalf("MaxRefresh = %v, want 25s (max stale less a refresh interval)", ix.MaxRefresh())
	}
	get(t, ix)
	const quiet = 10 * time.Minute
	for range int(quiet / time.Second) {
		clk.Advance(time.Second)
		get(t, ix)
	}
	g := gaps(*lists)
	// Called every second: listed within a second of falling due.
	young := longest(ix, 5*time.Second) + time.Second
	if len(g) < 5 || g[0] > young {
		t.Fatalf("a new library listed at %v intervals, want every refresh interval at first", g)
	}
	for i := 1; i < len(g); i++ {
		// An interval ends on the library's point of the phase cycle, so
		// it may be up to a cycle shorter than the one before.
		if g[i] <= g[i-1]-ix.phase() {
			t.Errorf("an unchanged library's interval shrank by a phase cycle or more: %v", g)
			break
		}
	}
	if g[len(g)-1] < 4*ix.cfg.IndexRefresh {
		t.Errorf("an unchanged library's interval did not grow: %v", g)
	}
	if last := g[len(g)-1]; last <= shortest(ix, ix.MaxRefresh()) || last > 30*time.Second {
		t.Errorf("after %v unchanged, listed every %v; want between MaxRefresh less its spread and the max staleness (%v)", quiet, last, g)
	}
	// Polling every 5s would have listed 120 times.
	if n := len(*lists); n > 60 {
		t.Errorf("%d listings in %v of calls to an unchanged library, want far fewer than 120", n, quiet)
	}

	// A change made around skillsvc (no drop) shows up within the max
	// staleness, and the library is listed every refresh interval again.
	objstoretest.Put(t, b, keyB, skillMD("b"))
	changedAt := clk.Now()
	for len(get(t, ix).Heads) != 2 {
		if clk.Now().Sub(changedAt) > 30*time.Second {
			t.Fatalf("a change not seen %v after it was made", clk.Now().Sub(changedAt))
		}
		clk.Advance(time.Second)
	}
	found := len(*lists)
	for range 20 {
		clk.Advance(time.Second)
		get(t, ix)
	}
	if g := gaps((*lists)[found-1:]); len(g) < 3 || g[0] > young {
		t.Errorf("after a change, listed at %v intervals; want every refresh interval again", g)
	}
}

// TestMaxStaleBoundsQuietLibrary: a library quiet long enough to be at
// MaxRefresh, changed just after a listing and not called until past the
// max staleness, is listed before the next call is answered.
func TestMaxStaleBoundsQuietLibrary(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	ix, lists := pollingStore(t, b, nil, clk)
	get(t, ix)
	for range 600 {
		clk.Advance(time.Second)
		get(t, ix)
	}
	if g := gaps(*lists); g[len(g)-1] <= shortest(ix, ix.MaxRefresh()) {
		t.Fatalf("not at MaxRefresh after 10 quiet minutes: %v", g)
	}
	// Just listed: the next listing is MaxRefresh away.
	for n := len(*lists); len(*lists) == n; {
		clk.Advance(time.Second)
		get(t, ix)
	}
	objstoretest.Put(t, b, keyB, skillMD("b"))
	clk.Advance(30 * time.Second)
	if x := get(t, ix); len(x.Heads) != 2 {
		t.Errorf("a change %v old not seen on a quiet library: the max staleness must still bound it", 30*time.Second)
	}
}

// TestChangedTravels: when a library last changed travels with its index,
// so a replica that takes another's index from the shared cache gives it
// the same interval instead of starting it afresh.
func TestChangedTravels(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	shared := cache.NewLRU(32 << 20)
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	a, _ := pollingStore(t, b, shared, clk)
	get(t, a)
	for range 600 {
		clk.Advance(time.Second)
		get(t, a)
	}
	x := get(t, a)
	if d := a.FreshFor(x); d > a.MaxRefresh() || d <= shortest(a, a.MaxRefresh()) {
		t.Fatalf("A's quiet index is fresh for %v, want up to %v, within a phase cycle of it", d, a.MaxRefresh())
	}
	other, lists := pollingStore(t, objstoretest.NewFaulty(b), shared, clk)
	y := get(t, other)
	if len(*lists) != 0 || y.Gen != x.Gen || !y.Changed.Equal(x.Changed) || other.FreshFor(y) != a.FreshFor(x) {
		t.Errorf("B: %d listings, gen %x changed %v fresh for %v; want A's index (gen %x, changed %v, fresh for %v) from the shared cache",
			len(*lists), y.Gen, y.Changed, other.FreshFor(y), x.Gen, x.Changed, a.FreshFor(x))
	}
}

// manyLibraries is a bucket of n users' libraries of one skill each, and
// their layers.
func manyLibraries(t *testing.T, n int) ([]Layer, *objstoretest.Faulty) {
	t.Helper()
	files := map[string]string{}
	layers := make([]Layer, n)
	for i := range layers {
		u := fmt.Sprintf("u%05d", i)
		layers[i] = Layer{Tag: u, Prefix: u + "/skills/", Object: u + "/settings/skills.index"}
		files[layers[i].Prefix+"s/SKILL.md"] = skillMD("s")
	}
	return layers, objstoretest.NewFaulty(objstoretest.NewBucket(t, files))
}

// TestRevalidationsSpread: libraries first listed in the same second (a
// replica's start, a flushed cache) are not all listed again in one second
// of every interval after: each falls due at its own point of a cycle of
// one refresh interval, so with events' 5-minute refresh 200 libraries
// called every second fall due across about 5 minutes, and again across
// them an interval later.
func TestRevalidationsSpread(t *testing.T) {
	const libraries = 200
	layers, b := manyLibraries(t, libraries)
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	cfg := testConfig(5 * time.Minute)
	cfg.IndexMaxStale = 15 * time.Minute
	log := slog.New(slog.DiscardHandler)
	ix := New(b, cache.NewLRU(32<<20), cfg, log, NewCacheLog(log), NewMetrics(nil))
	ix.SetNow(clk.Now)
	t.Cleanup(ix.Close)
	var (
		mu        sync.Mutex
		perSecond = map[time.Time]int{}
	)
	b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
		mu.Lock()
		defer mu.Unlock()
		perSecond[clk.Now()]++
		return nil
	})
	callAll := func() {
		for _, l := range layers {
			if _, err := ix.Get(t.Context(), l); err != nil {
				t.Fatal(err)
			}
		}
		ix.Close()
	}
	callAll()
	if perSecond[clk.Now()] != libraries {
		t.Fatalf("first pass listed %d libraries, want %d", perSecond[clk.Now()], libraries)
	}
	// Two intervals: the first after the listing together, and the one
	// after, when each library was listed when it fell due; each a cycle
	// long, from the earliest a library listed at the start falls due.
	start := clk.Now().Add(shortest(ix, cfg.IndexRefresh))
	for i := range 2 {
		from, to := start.Add(time.Duration(i)*ix.phase()), start.Add(time.Duration(i+1)*ix.phase())
		for clk.Now().Before(to.Add(time.Second)) {
			clk.Advance(time.Second)
			callAll()
		}
		var first, last time.Time
		busiest, total := 0, 0
		for at, n := range perSecond {
			if !at.After(from) || at.After(to) {
				continue
			}
			total += n
			busiest = max(busiest, n)
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		if total != libraries {
			t.Fatalf("interval %d: %d revalidations, want one a library (%d)", i+1, total, libraries)
		}
		t.Logf("interval %d: revalidations from %v to %v after its start, at most %d in one second", i+1, first.Sub(from), last.Sub(from), busiest)
		// 200 libraries over 300 seconds: a few a second.
		if busiest > libraries/20 || last.Sub(first) < 2*ix.phase()/3 {
			t.Errorf("interval %d: revalidations from %v to %v after its start, at most %d in one second; want them spread over about %v",
				i+1, first.Sub(from), last.Sub(from), busiest, ix.phase())
		}
	}
}

// TestDue: an interval ends on the library's point of the phase cycle,
// within the cycle ending its slack past it, wherever in the cycle the
// listing was; and gens spread those points across the cycle.
func TestDue(t *testing.T) {
	for _, slack := range []time.Duration{0, 1250 * time.Millisecond} {
		t.Run(fmt.Sprintf("slack %v", slack), func(t *testing.T) { testDue(t, slack) })
	}
}

func testDue(t *testing.T, slack time.Duration) {
	const d, p = 25 * time.Second, 2500 * time.Millisecond
	base := time.Unix(1_800_000_000, 0)
	points := map[time.Duration]bool{}
	for g := range uint64(64) {
		gen := g * (^uint64(0) / 64)
		var point time.Duration = -1
		for off := range 50 {
			listed := base.Add(time.Duration(off) * 137 * time.Millisecond)
			got := due(listed, d, p, slack, gen)
			if got <= d-p+slack || got > d+slack {
				t.Fatalf("due(+%v, gen %x) = %v, want in (%v, %v]", listed.Sub(base), gen, got, d-p+slack, d+slack)
			}
			at := time.Duration(listed.Add(got).UnixNano() % int64(p))
			if point >= 0 && at != point {
				t.Fatalf("gen %x falls due at %v of the cycle after one listing and %v after another", gen, point, at)
			}
			point = at
		}
		points[point/(p/8)] = true
	}
	if len(points) != 8 {
		t.Errorf("64 gens fall due in %d of the cycle's 8 eighths, want all", len(points))
	}
	if got := due(base, d, 0, slack, 42); got != d {
		t.Errorf("without a cycle, due = %v, want %v", got, d)
	}
}

// TestListingOffPhaseServedHalfAnInterval: an index listed off its
// library's point (a first listing; a new replica taking a persisted index
// listed seconds before) is served at least half a refresh interval before
// it falls due, not for anything from no time at all, and at most half an
// interval longer than one.
func TestListingOffPhaseServedHalfAnInterval(t *testing.T) {
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	ix, _ := pollingStore(t, b, nil, clk) // refresh 5s, max stale 30s
	refresh := ix.cfg.IndexRefresh
	for g := range uint64(64) {
		for off := range 20 {
			x := &Index{Listed: clk.Now().Add(time.Duration(off) * 263 * time.Millisecond), Gen: g * (^uint64(0) / 64)}
			if got := ix.FreshFor(x); got <= refresh/2 || got > refresh+refresh/2 {
				t.Fatalf("a new index (gen %x) listed at +%v is fresh for %v, want in (%v, %v]",
					x.Gen, x.Listed.Sub(clk.Now()), got, refresh/2, refresh+refresh/2)
			}
		}
	}
	// With --storage=local's equal refresh and staleness there is no room
	// past the refresh interval: an interval never runs past it.
	local := testConfig(time.Second)
	local.IndexMaxStale = time.Second
	log := slog.New(slog.DiscardHandler)
	lx := New(b, cache.NewLRU(1<<20), local, log, NewCacheLog(log), NewMetrics(nil))
	t.Cleanup(lx.Close)
	for g := range uint64(64) {
		x := &Index{Listed: clk.Now().Add(time.Duration(g) * 37 * time.Millisecond), Gen: g * (^uint64(0) / 64)}
		if got := lx.FreshFor(x); got <= 0 || got > time.Second {
			t.Fatalf("local: fresh for %v, want in (0, 1s]", got)
		}
	}
}
