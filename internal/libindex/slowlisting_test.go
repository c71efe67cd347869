package libindex

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestSlowListingServedStaleWhileListed: a library whose listing takes
// longer than --skills.index-max-stale (the local store's 1s bound and a
// library of 10,000 skills) is served as held while it is listed again in
// the background, for staleListings of its listings' time, rather than
// making almost every call wait for a listing; a quick library keeps the
// configured bound.
func TestSlowListingServedStaleWhileListed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		listing time.Duration
		stale   bool // the call after the bound is answered with the held index
	}{
		{"slow listing", 2 * time.Second, true},
		{"quick listing", 10 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layers, b := manyLibraries(t, 1)
			clk := &testClock{now: time.Unix(1_800_000_000, 0)}
			b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
				clk.Advance(tc.listing) // the listing takes this long by the store's clock
				return nil
			})
			cfg := testConfig(time.Second)
			cfg.IndexMaxStale = time.Second
			log := slog.New(slog.DiscardHandler)
			ix := New(b, cache.NewLRU(16<<20), cfg, log, NewCacheLog(log), NewMetrics(nil))
			ix.SetNow(clk.Now)
			t.Cleanup(ix.Close)

			first, err := ix.Get(t.Context(), layers[0])
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(1500 * time.Millisecond) // past the configured 1s bound, within 4 slow listings
			x, err := ix.Get(t.Context(), layers[0])
			if err != nil {
				t.Fatal(err)
			}
			if stale := x.Listed.Equal(first.Listed); stale != tc.stale {
				t.Errorf("listing %v: answered with the held index %v, want %v", tc.listing, stale, tc.stale)
			}
		})
	}
}
