package cache_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/cache/cachetest"
)

// Stores far more than the bound, one item at a time: the bytes held never
// exceed it, the newest items and an item read all along survive, the
// oldest are gone.
func TestLRUByteBound(t *testing.T) {
	const maxBytes = 64 << 10
	c := cache.NewLRU(maxBytes)
	ctx := t.Context()
	value := bytes.Repeat([]byte("v"), 1000)
	key := func(i int) string { return fmt.Sprintf("item/%04d", i) }

	if err := c.Store(ctx, map[string][]byte{"hot": value}, time.Hour); err != nil {
		t.Fatal(err)
	}
	const n = 1000 // ~1 MB through a 64 KiB cache
	for i := range n {
		if err := c.Store(ctx, map[string][]byte{key(i): value}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if got := c.Bytes(); got > maxBytes {
			t.Fatalf("after %d stores: %d bytes held, bound %d", i+1, got, maxBytes)
		}
		// Reading "hot" makes it recently used, so it is never the oldest.
		if _, ok := mustFetch(t, c, "hot")["hot"]; !ok {
			t.Fatalf("after %d stores: the item read after every store was evicted", i+1)
		}
	}
	if got := c.Bytes(); got < maxBytes*3/4 {
		t.Errorf("%d bytes held at the end, want the cache nearly full (bound %d)", got, maxBytes)
	}
	recent := mustFetch(t, c, key(n-1), key(n-2), key(n-10))
	if len(recent) != 3 {
		t.Errorf("most recent items: %d of 3 held", len(recent))
	}
	if old := mustFetch(t, c, key(0), key(1), key(n/2)); len(old) != 0 {
		t.Errorf("oldest items: %d still held, want evicted", len(old))
	}
	// One batch larger than the bound is bounded too.
	batch := make(map[string][]byte)
	for i := range 200 {
		batch[fmt.Sprintf("batch/%d", i)] = value
	}
	if err := c.Store(ctx, batch, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := c.Bytes(); got > maxBytes {
		t.Errorf("after a 200 KB batch: %d bytes held, bound %d", got, maxBytes)
	}
}

func TestLRUAccounting(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name      string
		run       func(c *cache.LRU)
		wantItems int
		wantBytes int64
	}{
		{name: "overwrite charges once", run: func(c *cache.LRU) {
			for i := range 100 {
				_ = c.Store(ctx, map[string][]byte{"k": bytes.Repeat([]byte("x"), i)}, time.Hour)
			}
		}, wantItems: 1, wantBytes: 1 + 99 + 64},
		{name: "delete gives bytes back", run: func(c *cache.LRU) {
			_ = c.Store(ctx, map[string][]byte{"a": []byte("1"), "b": []byte("2")}, time.Hour)
			_ = c.Delete(ctx, "a", "b")
		}},
		{name: "item larger than the cache is not kept and drops the old value", run: func(c *cache.LRU) {
			_ = c.Store(ctx, map[string][]byte{"k": []byte("old")}, time.Hour)
			_ = c.Store(ctx, map[string][]byte{"k": make([]byte, 2000)}, time.Hour)
		}},
		{name: "expired item is dropped when read", run: func(c *cache.LRU) {
			_ = c.Store(ctx, map[string][]byte{"k": []byte("v")}, time.Nanosecond)
			cachetest.Poll(t, 10*time.Second, "expiry", func() bool {
				hits, _ := c.Fetch(ctx, []string{"k"})
				return len(hits) == 0
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cache.NewLRU(1024)
			tt.run(c)
			if c.Len() != tt.wantItems || c.Bytes() != tt.wantBytes {
				t.Errorf("Len, Bytes = %d, %d; want %d, %d", c.Len(), c.Bytes(), tt.wantItems, tt.wantBytes)
			}
			if _, ok := mustFetch(t, c, "k")["k"]; ok != (tt.wantItems > 0) {
				t.Errorf("Fetch(k): hit %v, want %v", ok, tt.wantItems > 0)
			}
		})
	}
}

func mustFetch(t testing.TB, c cache.Cache, keys ...string) map[string][]byte {
	t.Helper()
	hits, err := c.Fetch(t.Context(), keys)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return hits
}
