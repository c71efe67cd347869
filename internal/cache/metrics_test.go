package cache_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	cfg := cache.DefaultConfig()
	cfg.Redis = redisConfig(testserver.SharedRedis(t).Addr)
	c, err := cache.New(cfg, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	// Every label is there before any traffic.
	for _, name := range []string{"skillsvc_cache_requests_total", "skillsvc_cache_errors_total"} {
		if n, _ := series(t, reg, name, nil); n != 8 {
			t.Errorf("%s: %d series before traffic, want 8 (4 operations × 2 levels)", name, n)
		}
	}

	ctx := t.Context()
	if err := c.Store(ctx, map[string][]byte{"a": []byte("1"), "b": []byte("22")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	// a and b hit the LRU; c misses it and then misses Redis.
	if _, err := c.Fetch(ctx, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skillsvc_cache_requests_total", map[string]string{"operation": "store", "level": "lru"}, 1},
		{"skillsvc_cache_requests_total", map[string]string{"operation": "store", "level": "redis"}, 1},
		{"skillsvc_cache_requests_total", map[string]string{"operation": "fetch", "level": "lru"}, 1},
		{"skillsvc_cache_requests_total", map[string]string{"operation": "fetch", "level": "redis"}, 1},
		{"skillsvc_cache_requests_total", map[string]string{"operation": "lock", "level": "redis"}, 0},
		{"skillsvc_cache_hits_total", map[string]string{"level": "lru"}, 2},
		{"skillsvc_cache_misses_total", map[string]string{"level": "lru"}, 1},
		{"skillsvc_cache_hits_total", map[string]string{"level": "redis"}, 0},
		{"skillsvc_cache_misses_total", map[string]string{"level": "redis"}, 1},
		{"skillsvc_cache_errors_total", map[string]string{"operation": "fetch", "level": "redis"}, 0},
		{"skillsvc_cache_breaker_state", map[string]string{}, 0},
		{"skillsvc_cache_lru_items", map[string]string{}, 2},
		{"skillsvc_cache_lru_bytes", map[string]string{}, 1 + 1 + 64 + 1 + 2 + 64},
	}
	for _, tt := range tests {
		if _, got := series(t, reg, tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
}

// series returns the number of series of name and, when labels is not nil,
// the value of the one with exactly those labels.
func series(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (n int, v float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		if labels == nil {
			return len(f.GetMetric()), 0
		}
		for _, m := range f.GetMetric() {
			match := len(m.GetLabel()) == len(labels)
			for _, l := range m.GetLabel() {
				match = match && labels[l.GetName()] == l.GetValue()
			}
			if match {
				return len(f.GetMetric()), m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0, 0
}
