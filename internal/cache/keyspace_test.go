package cache_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// gathered is the value of the counter name in reg (0 when absent).
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestKeyspace: two deployments on one Redis under the same key prefix,
// each bound to its own storage, share no value, lock or channel; a value
// found under a deployment's key that another deployment (or a binary
// without a keyspace) wrote there is refused as a miss and counted, never
// served.
func TestKeyspace(t *testing.T) {
	addr := testserver.SharedRedis(t).Addr
	base := redisConfig(addr) // one key prefix for both
	cfgA, cfgB := base, base
	cfgA.Keyspace = cache.NewKeyspace("s3\x00http://127.0.0.1:9000\x00bucket-a")
	cfgB.Keyspace = cache.NewKeyspace("s3\x00http://127.0.0.1:9000\x00bucket-b")
	open := func(cfg cache.RedisConfig) (cache.Cache, *prometheus.Registry) {
		reg := prometheus.NewRegistry()
		c, err := cache.New(cache.Config{LRU: cache.DefaultConfig().LRU, Redis: cfg}, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return cache.Shared(c), reg // Redis itself, not the in-process level
	}
	a, regA := open(cfgA)
	b, _ := open(cfgB)
	ctx := t.Context()

	t.Run("values", func(t *testing.T) {
		if err := a.Store(ctx, map[string][]byte{"index:{alice}:alice/skills/": []byte("A's catalog")}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if hits, err := b.Fetch(ctx, []string{"index:{alice}:alice/skills/"}); err != nil || len(hits) != 0 {
			t.Fatalf("B fetched %q, %v; want a miss: A's entries are not B's", hits, err)
		}
		if err := b.Store(ctx, map[string][]byte{"index:{alice}:alice/skills/": []byte("B's catalog")}, time.Minute); err != nil {
			t.Fatal(err)
		}
		hits, err := a.Fetch(ctx, []string{"index:{alice}:alice/skills/"})
		if got := string(hits["index:{alice}:alice/skills/"]); err != nil || got != "A's catalog" {
			t.Fatalf("A fetched %q, %v; want its own value", got, err)
		}
	})
	t.Run("locks", func(t *testing.T) {
		unlock, ok, err := a.TryLock(ctx, "revalidate:{alice}", time.Minute)
		if err != nil || !ok {
			t.Fatalf("A's TryLock: %t, %v", ok, err)
		}
		defer unlock()
		unlockB, ok, err := b.TryLock(ctx, "revalidate:{alice}", time.Minute)
		if err != nil || !ok {
			t.Fatalf("B's TryLock of the same name while A holds its own: %t, %v; want its own lock", ok, err)
		}
		unlockB()
	})
	t.Run("topics", func(t *testing.T) {
		ra, rb := newRedis(t, cfgA), newRedis(t, cfgB)
		t.Cleanup(func() { ra.Close(); rb.Close() })
		subB := subscribe(t, rb.Topic("skills-invalidations"))
		subA := subscribe(t, ra.Topic("skills-invalidations"))
		waitFor(t, subA.subscribed, "A's subscription")
		waitFor(t, subB.subscribed, "B's subscription")
		if err := ra.Topic("skills-invalidations").Publish(ctx, []byte("drop alice (A)")); err != nil {
			t.Fatal(err)
		}
		if got := waitFor(t, subA.msgs, "A's message"); got != "drop alice (A)" {
			t.Fatalf("A heard %q", got)
		}
		// Redis delivers in publish order: had A's message reached B, it
		// would come before B's own.
		if err := rb.Topic("skills-invalidations").Publish(ctx, []byte("drop alice (B)")); err != nil {
			t.Fatal(err)
		}
		if got := waitFor(t, subB.msgs, "B's message"); got != "drop alice (B)" {
			t.Fatalf("B heard %q first; A's channel is not B's", got)
		}
	})
	t.Run("foreign values refused", func(t *testing.T) {
		// Writers that reach A's keys: one framing values for B, one
		// framing none (a binary without a keyspace).
		probe := newRedis(t, cfgA)
		asB, bare := newRedis(t, cfgB), newRedis(t, base)
		t.Cleanup(func() { probe.Close(); asB.Close(); bare.Close() })
		asB.WriteUnder(probe)
		bare.WriteUnder(probe)
		for i, w := range []*cache.Redis{asB, bare} {
			if err := w.Store(ctx, map[string][]byte{"settings:{alice}": []byte(`{"disabled":["pdf"]}`)}, time.Minute); err != nil {
				t.Fatal(err)
			}
			if hits, err := a.Fetch(ctx, []string{"settings:{alice}"}); err != nil || len(hits) != 0 {
				t.Fatalf("A fetched %q, %v; want another deployment's value refused", hits, err)
			}
			if n := gathered(t, regA, "skillsvc_cache_foreign_values_total"); n != float64(i+1) {
				t.Fatalf("skillsvc_cache_foreign_values_total = %v after %d foreign values", n, i+1)
			}
		}
		// A's own value replaces it and is served.
		if err := a.Store(ctx, map[string][]byte{"settings:{alice}": []byte("{}")}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if hits, err := a.Fetch(ctx, []string{"settings:{alice}"}); err != nil || string(hits["settings:{alice}"]) != "{}" {
			t.Fatalf("A fetched %q, %v; want its own value", hits, err)
		}
	})
}
