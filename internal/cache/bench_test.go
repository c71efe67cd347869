package cache_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// BenchmarkFetch fetches 1 and 100 cached keys of 1 KiB each. Tiered-warm
// finds them all in its LRU; Redis runs on loopback.
func BenchmarkFetch(b *testing.B) {
	impls := []struct {
		name string
		new  func(b *testing.B) cache.Cache
	}{
		{"LRU", func(b *testing.B) cache.Cache { return cache.NewLRU(64 << 20) }},
		{"Redis", func(b *testing.B) cache.Cache { return newRedis(b, redisConfig(testserver.SharedRedis(b).Addr)) }},
		{"Tiered-warm", func(b *testing.B) cache.Cache {
			return cache.NewTiered(cache.NewLRU(64<<20), newRedis(b, redisConfig(testserver.SharedRedis(b).Addr)), time.Hour)
		}},
	}
	for _, impl := range impls {
		for _, n := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/keys=%d", impl.name, n), func(b *testing.B) {
				c := impl.new(b)
				b.Cleanup(func() { c.Close() })
				items := make(map[string][]byte, n)
				keys := make([]string, 0, n)
				for i := range n {
					k := fmt.Sprintf("bench/{alice}/%03d", i)
					items[k] = bytes.Repeat([]byte{byte(i)}, 1024)
					keys = append(keys, k)
				}
				if err := c.Store(b.Context(), items, time.Hour); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					hits, err := c.Fetch(b.Context(), keys)
					if err != nil || len(hits) != n {
						b.Fatalf("Fetch: %d hits, %v", len(hits), err)
					}
				}
			})
		}
	}
}
