package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/cache/cachetest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// outageConfig has the short timeouts and breaker of a production config, a
// little shorter so the tests stay quick.
func outageConfig(addr string) cache.RedisConfig {
	cfg := redisConfig(addr)
	cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout, cfg.PoolTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	cfg.Breaker = cache.BreakerConfig{Failures: 3, CoolDown: 300 * time.Millisecond}
	return cfg
}

// callBound is how long any call may take while Redis is down or hung: one
// dial, write and read timeout each, plus slack for a slow machine under
// -race.
const callBound = 3 * 200 * time.Millisecond * 2

// stack is what New builds with Redis, with its parts in reach.
type stack struct {
	lru     *cache.LRU
	breaker *cache.Breaker
	tiered  *cache.Tiered
}

func newStack(t *testing.T, cfg cache.RedisConfig) stack {
	lru := cache.NewLRU(1 << 20)
	breaker := cache.NewBreaker(newRedis(t, cfg), cfg.Breaker, nil)
	// A short l1 TTL, so items age out of the LRU and fetches reach Redis.
	tiered := cache.NewTiered(lru, breaker, 50*time.Millisecond)
	t.Cleanup(func() { tiered.Close() })
	return stack{lru: lru, breaker: breaker, tiered: tiered}
}

// fetchWithin fetches keys from c, failing the test if the call errs or
// takes longer than bound.
func fetchWithin(t *testing.T, c cache.Cache, bound time.Duration, keys ...string) map[string][]byte {
	t.Helper()
	start := time.Now()
	hits, err := c.Fetch(t.Context(), keys)
	if d := time.Since(start); d > bound {
		t.Errorf("Fetch took %v, bound %v", d, bound)
	}
	if err != nil {
		t.Fatalf("Fetch: %v, want misses instead of an error", err)
	}
	return hits
}

// openBreaker fetches until the breaker opens; every fetch must answer
// (misses) without error within callBound.
func openBreaker(t *testing.T, s stack) {
	t.Helper()
	for i := 0; s.breaker.State() != cache.BreakerOpen; i++ {
		if i == 10 {
			t.Fatalf("breaker still %v after %d failing fetches", s.breaker.State(), i)
		}
		if hits := fetchWithin(t, s.tiered, callBound, "remote"); len(hits) != 0 {
			t.Fatalf("Fetch while Redis is down: %d hits, want misses", len(hits))
		}
	}
	// Open: calls skip Redis and answer at once.
	fetchWithin(t, s.tiered, 100*time.Millisecond, "remote")
	if _, err := s.breaker.Fetch(t.Context(), []string{"remote"}); !errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("Fetch through the open breaker: %v, want ErrUnavailable", err)
	}
}

// recovers waits until the breaker closed again and a value another replica
// stores in Redis reaches this one.
func recovers(t *testing.T, s stack, other cache.Cache) {
	t.Helper()
	want := []byte("from another replica")
	cachetest.Poll(t, 15*time.Second, "breaker closes and Redis hits come back", func() bool {
		if err := other.Store(t.Context(), map[string][]byte{"remote": want}, time.Minute); err != nil {
			return false
		}
		hits := fetchWithin(t, s.tiered, callBound, "remote")
		return string(hits["remote"]) == string(want)
	})
	if st := s.breaker.State(); st != cache.BreakerClosed {
		t.Errorf("breaker %v after Redis answered, want closed", st)
	}
}

func TestRedisKilled(t *testing.T) {
	t.Parallel()
	r := testserver.StartRestartableRedis(t)
	cfg := outageConfig(r.Addr)
	s := newStack(t, cfg)
	other := newRedis(t, cfg) // another replica, talking to Redis directly
	t.Cleanup(func() { other.Close() })
	ctx := t.Context()

	if err := s.tiered.Store(ctx, map[string][]byte{"local": []byte("v")}, time.Minute); err != nil {
		t.Fatalf("Store while Redis is up: %v", err)
	}
	r.Stop(t)
	openBreaker(t, s)

	// Writes report the outage but still reach the LRU.
	err := s.tiered.Store(ctx, map[string][]byte{"written-during-outage": []byte("v")}, time.Minute)
	if !errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("Store while Redis is down: %v, want ErrUnavailable", err)
	}
	if hits := fetchWithin(t, s.lru, 100*time.Millisecond, "written-during-outage"); len(hits) != 1 {
		t.Error("Store while Redis is down did not write the LRU")
	}
	// Locks fall back to this process's.
	unlock, ok, err := s.tiered.TryLock(ctx, "index", time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock while Redis is down: %v, %v; want the in-process lock", ok, err)
	}
	if _, ok, _ := s.tiered.TryLock(ctx, "index", time.Minute); ok {
		t.Error("second TryLock while Redis is down: acquired, want the in-process lock held")
	}
	unlock()

	r.Restart(t)
	recovers(t, s, other)
}

// A hung Redis (it accepts connections but answers nothing) costs each
// call its timeout, and the caller's deadline when that is sooner, until
// the breaker opens.
func TestRedisHung(t *testing.T) {
	t.Parallel()
	r := testserver.StartRestartableRedis(t)
	cfg := outageConfig(r.Addr)
	s := newStack(t, cfg)
	other := newRedis(t, cfg)
	t.Cleanup(func() { other.Close() })
	// A client whose own timeouts are long: only the caller's deadline
	// bounds its calls.
	slowCfg := cfg
	slowCfg.ReadTimeout, slowCfg.WriteTimeout = time.Minute, time.Minute
	slow := newRedis(t, slowCfg)
	t.Cleanup(func() { slow.Close() })
	// Connect everything while Redis answers.
	for _, c := range []cache.Cache{s.tiered, other, slow} {
		if _, err := c.Fetch(t.Context(), []string{"warm-up"}); err != nil {
			t.Fatalf("Fetch while Redis is up: %v", err)
		}
	}

	r.Pause(t)
	t.Cleanup(func() { r.Resume(t) })

	t.Run("own timeout", func(t *testing.T) {
		start := time.Now()
		_, err := other.Fetch(t.Context(), []string{"remote"})
		if d := time.Since(start); d > callBound {
			t.Errorf("Fetch from a hung Redis took %v, bound %v", d, callBound)
		}
		if !errors.Is(err, cache.ErrUnavailable) {
			t.Errorf("Fetch from a hung Redis: %v, want ErrUnavailable", err)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := slow.Fetch(ctx, []string{"remote"})
		if d := time.Since(start); d > time.Second {
			t.Errorf("Fetch with a 100ms deadline took %v", d)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Fetch past the caller's deadline: %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("tiered", func(t *testing.T) { openBreaker(t, s) })

	r.Resume(t)
	recovers(t, s, other)
}
