package cache_test

import (
	"crypto/rand"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/cache/cachetest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// redisConfig is the default config for the server at addr with a fresh key
// prefix, so tests sharing a server never see each other's keys. The
// suite's timeouts are generous: under -race on a small machine a 1 MiB
// value may take a while, and these tests are about answers, not speed.
func redisConfig(addr string) cache.RedisConfig {
	cfg := cache.DefaultConfig().Redis
	cfg.Addrs = []string{addr}
	cfg.KeyPrefix = "test:" + rand.Text() + ":"
	cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout, cfg.PoolTimeout = 2*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	return cfg
}

func newRedis(t testing.TB, cfg cache.RedisConfig) *cache.Redis {
	t.Helper()
	r, err := cache.NewRedis(cfg)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	return r
}

// The suite proves every implementation and the stacks New builds.
func TestConformance(t *testing.T) {
	tests := []struct {
		name     string
		needsRed bool
		newCache func(t *testing.T, addr string) cache.Cache
	}{
		{name: "LRU", newCache: func(t *testing.T, _ string) cache.Cache {
			return cache.NewLRU(64 << 20)
		}},
		{name: "Redis", needsRed: true, newCache: func(t *testing.T, addr string) cache.Cache {
			return newRedis(t, redisConfig(addr))
		}},
		{name: "Breaker(Redis)", needsRed: true, newCache: func(t *testing.T, addr string) cache.Cache {
			cfg := redisConfig(addr)
			return cache.NewBreaker(newRedis(t, cfg), cfg.Breaker, nil)
		}},
		{name: "Tiered(LRU,Redis)", needsRed: true, newCache: func(t *testing.T, addr string) cache.Cache {
			return cache.NewTiered(cache.NewLRU(64<<20), newRedis(t, redisConfig(addr)), time.Second)
		}},
		{name: "New/LRU", newCache: func(t *testing.T, _ string) cache.Cache {
			c, err := cache.New(cache.DefaultConfig(), prometheus.NewRegistry(), nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return c
		}},
		{name: "New/Redis", needsRed: true, newCache: func(t *testing.T, addr string) cache.Cache {
			cfg := cache.DefaultConfig()
			cfg.Redis = redisConfig(addr)
			cfg.Redis.Keyspace = cache.NewKeyspace("local\x00/srv/skillsvc") // as the service runs it
			c, err := cache.New(cfg, prometheus.NewRegistry(), nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return c
		}},
	}
	// Cluster mode runs other code (no multi-key commands across slots).
	// One node owning every slot is enough: Redis refuses CROSSSLOT
	// commands even then.
	t.Run("Redis/Cluster", func(t *testing.T) {
		t.Parallel()
		addr := testserver.StartRedisCluster(t).Addr
		cachetest.Run(t, func(t *testing.T) cache.Cache {
			cfg := redisConfig(addr)
			cfg.Cluster = true
			cfg.Keyspace = cache.NewKeyspace("local\x00/srv/skillsvc") // framed values on the cluster's path
			return newRedis(t, cfg)
		})
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var addr string
			if tt.needsRed {
				addr = testserver.SharedRedis(t).Addr
			}
			cachetest.Run(t, func(t *testing.T) cache.Cache { return tt.newCache(t, addr) })
		})
	}
}
