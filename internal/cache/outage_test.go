package cache_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
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

// stack is what New builds with Redis, with its parts in reach.
type stack struct {
	lru     *cache.LRU
	breaker *cache.Breaker
	tiered  *cache.Tiered
	redis   *counted // the calls that reached the Redis client
}

func newStack(t *testing.T, cfg cache.RedisConfig) stack {
	lru := cache.NewLRU(1 << 20)
	redis := &counted{Cache: newRedis(t, cfg)}
	breaker := cache.NewBreaker(redis, cfg.Breaker, nil)
	// A short l1 TTL, so items age out of the LRU and fetches reach Redis.
	tiered := cache.NewTiered(lru, breaker, 50*time.Millisecond)
	t.Cleanup(func() { tiered.Close() })
	return stack{lru: lru, breaker: breaker, tiered: tiered, redis: redis}
}

// counted counts the fetches that reach the cache it wraps: what an open
// breaker saves is calls, which a test can count on any machine.
type counted struct {
	cache.Cache
	fetches atomic.Int64
}

func (c *counted) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	c.fetches.Add(1)
	return c.Cache.Fetch(ctx, keys)
}

// fetch fetches keys from c, failing the test if the call errs: an outage
// must read as misses. Calls that wait on a down or hung Redis end on its
// client's timeouts (a missing one would hang the test, not slow it).
func fetch(t *testing.T, c cache.Cache, keys ...string) map[string][]byte {
	t.Helper()
	hits, err := c.Fetch(t.Context(), keys)
	if err != nil {
		t.Fatalf("Fetch: %v, want misses instead of an error", err)
	}
	return hits
}

// openBreaker fetches until the breaker opens; every fetch must answer
// (misses) without error. Once open, calls answer without reaching Redis.
func openBreaker(t *testing.T, s stack) {
	t.Helper()
	for i := 0; s.breaker.State() != cache.BreakerOpen; i++ {
		if i == 10 {
			t.Fatalf("breaker still %v after %d failing fetches", s.breaker.State(), i)
		}
		if hits := fetch(t, s.tiered, "remote"); len(hits) != 0 {
			t.Fatalf("Fetch while Redis is down: %d hits, want misses", len(hits))
		}
	}
	// Open: calls skip Redis and answer at once.
	before := s.redis.fetches.Load()
	fetch(t, s.tiered, "remote")
	if _, err := s.breaker.Fetch(t.Context(), []string{"remote"}); !errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("Fetch through the open breaker: %v, want ErrUnavailable", err)
	}
	if n := s.redis.fetches.Load() - before; n != 0 {
		t.Errorf("%d fetches reached Redis through the open breaker, want none", n)
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
		hits := fetch(t, s.tiered, "remote")
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
	if hits := fetch(t, s.lru, "written-during-outage"); len(hits) != 1 {
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

	// Which bound ended each call shows in its error, whatever the time
	// it took on this machine; the minute only bounds a hang.
	t.Run("own timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, err := other.Fetch(ctx, []string{"remote"})
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded)
		if !errors.Is(err, cache.ErrUnavailable) || !timeout {
			t.Errorf("Fetch from a hung Redis: %v, want ErrUnavailable from the client's read timeout", err)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := slow.Fetch(ctx, []string{"remote"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Fetch past the caller's deadline: %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("tiered", func(t *testing.T) { openBreaker(t, s) })

	r.Resume(t)
	recovers(t, s, other)
}
