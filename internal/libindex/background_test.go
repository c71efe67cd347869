package libindex

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex/loads"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestBackgroundRevalidationsBounded: however many libraries fall due at
// once, a replica runs at most --skills.background-revalidations listings
// of them in the background; the rest wait in the queue and are all
// revalidated, and past the queue one is deferred (served as it is, its
// metric counted) and revalidated on a call a refresh interval later.
func TestBackgroundRevalidationsBounded(t *testing.T) {
	const workers = 4
	libraries := workers + loads.BackgroundQueue + 1
	layers, b := manyLibraries(t, libraries)
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	cfg := testConfig(5 * time.Second)
	cfg.IndexMaxStale = time.Minute
	cfg.BackgroundRevalidations = workers
	cfg.MaxHeldBytes = 256 << 20
	log := slog.New(slog.DiscardHandler)
	m := NewMetrics(nil)
	ix := New(b, cache.NewLRU(256<<20), cfg, log, NewCacheLog(log), m)
	ix.SetNow(clk.Now)
	t.Cleanup(ix.Close)

	var (
		mu               sync.Mutex
		block            bool
		inFlight, most   int
		lists            = map[string]int{}
		entered, release = make(chan struct{}, libraries), make(chan struct{})
	)
	b.Before(objstore.OpList, func(_ context.Context, c objstoretest.Call) error {
		mu.Lock()
		lists[c.Key]++
		inFlight++
		most = max(most, inFlight)
		blocking := block
		mu.Unlock()
		if blocking {
			entered <- struct{}{}
			<-release
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return nil
	})
	get := func(l Layer) {
		t.Helper()
		if x, err := ix.Get(t.Context(), l); err != nil || len(x.Heads) != 1 {
			t.Fatalf("Get(%s) = %v, %v", l.Prefix, x, err)
		}
	}
	for _, l := range layers {
		get(l) // listed before answering: nothing held yet
	}

	// Every library due: each call is answered with the index held and
	// starts its revalidation in the background.
	clk.Advance(longest(ix, cfg.IndexRefresh))
	mu.Lock()
	block = true
	mu.Unlock()
	for _, l := range layers[:workers] {
		get(l)
	}
	for range workers {
		<-entered // every worker in a listing
	}
	for _, l := range layers[workers:] {
		get(l) // queued, the last one past the queue
	}
	if n := testutil.ToFloat64(m.Revalidations.WithLabelValues(ModeBackground, ResultDeferred)); n != 1 {
		t.Errorf("%v revalidations deferred with %d workers busy and %d queued, want 1", n, workers, loads.BackgroundQueue)
	}
	close(release)
	ix.Close()
	mu.Lock()
	if most > workers {
		t.Errorf("%d listings at once, want at most %d", most, workers)
	}
	for i, l := range layers {
		want := 2
		if i == libraries-1 {
			want = 1 // deferred
		}
		if lists[l.Prefix] != want {
			t.Fatalf("%s listed %d times, want %d", l.Prefix, lists[l.Prefix], want)
		}
	}
	block = false
	mu.Unlock()

	// The deferred library is tried again a refresh interval later.
	clk.Advance(cfg.IndexRefresh)
	get(layers[libraries-1])
	ix.Close()
	mu.Lock()
	defer mu.Unlock()
	if n := lists[layers[libraries-1].Prefix]; n != 2 {
		t.Errorf("the deferred library listed %d times a refresh interval later, want 2", n)
	}
}
