// Package cachetest holds the conformance suite that every cache.Cache
// implementation (and every wrapper around one) must pass.
package cachetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
)

// Run runs the suite. newCache must return a cache that holds none of the
// keys the suite uses (a fresh one, or one with a fresh key prefix) and
// that can hold at least 8 MiB; it is called once per subtest, and Run
// closes the cache when the subtest ends.
func Run(t *testing.T, newCache func(t *testing.T) cache.Cache) {
	c := func(t *testing.T) cache.Cache {
		c := newCache(t)
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return c
	}
	t.Run("FetchMissing", func(t *testing.T) { testFetchMissing(t, c(t)) })
	t.Run("StoreFetchMany", func(t *testing.T) { testStoreFetchMany(t, c(t)) })
	t.Run("Overwrite", func(t *testing.T) { testOverwrite(t, c(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, c(t)) })
	t.Run("TTLExpiry", func(t *testing.T) { testTTL(t, c(t)) })
	t.Run("InvalidTTL", func(t *testing.T) { testInvalidTTL(t, c(t)) })
	t.Run("ValuesCopied", func(t *testing.T) { testCopied(t, c(t)) })
	t.Run("EmptyAndLargeValues", func(t *testing.T) { testSizes(t, c(t)) })
	t.Run("BinaryValues", func(t *testing.T) { testBinary(t, c(t)) })
	t.Run("OddKeys", func(t *testing.T) { testOddKeys(t, c(t)) })
	t.Run("CancelledContext", func(t *testing.T) { testCancelled(t, c(t)) })
	t.Run("Lock", func(t *testing.T) { testLock(t, c(t)) })
	t.Run("LockReleasedByHolderOnly", func(t *testing.T) { testLockHolderOnly(t, c(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, c(t)) })
	t.Run("ConcurrentLock", func(t *testing.T) { testConcurrentLock(t, c(t)) })
}

// Poll calls cond every few milliseconds until it returns true, failing the
// test when it has not after within. Use it instead of sleeping for
// anything that happens "eventually" (an expiry, a recovery).
func Poll(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

const long = time.Hour

func store(t *testing.T, c cache.Cache, items map[string][]byte, ttl time.Duration) {
	t.Helper()
	if err := c.Store(ctx(t), items, ttl); err != nil {
		t.Fatalf("Store(%d items, %v): %v", len(items), ttl, err)
	}
}

func fetch(t *testing.T, c cache.Cache, keys ...string) map[string][]byte {
	t.Helper()
	hits, err := c.Fetch(ctx(t), keys)
	if err != nil {
		t.Fatalf("Fetch(%q): %v", keys, err)
	}
	if hits == nil {
		t.Fatalf("Fetch(%q) returned a nil map", keys)
	}
	return hits
}

// want checks that hits holds exactly want.
func want(t *testing.T, hits, want map[string][]byte) {
	t.Helper()
	for k, v := range want {
		got, ok := hits[k]
		switch {
		case !ok:
			t.Errorf("key %q: missing, want %d bytes", k, len(v))
		case !bytes.Equal(got, v):
			t.Errorf("key %q: got %d bytes %.40q, want %d bytes %.40q", k, len(got), got, len(v), v)
		}
	}
	for k := range hits {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q: a hit, want none", k)
		}
	}
}

func testFetchMissing(t *testing.T, c cache.Cache) {
	want(t, fetch(t, c, "missing-a", "missing-b"), nil)
	want(t, fetch(t, c), nil)
	// Deleting what is not there is no error.
	if err := c.Delete(ctx(t), "missing-a"); err != nil {
		t.Errorf("Delete(missing): %v", err)
	}
	if err := c.Delete(ctx(t)); err != nil {
		t.Errorf("Delete(): %v", err)
	}
	if err := c.Store(ctx(t), nil, long); err != nil {
		t.Errorf("Store(nil): %v", err)
	}
}

func testStoreFetchMany(t *testing.T, c cache.Cache) {
	items := make(map[string][]byte)
	var keys []string
	for i := range 200 {
		k := fmt.Sprintf("many/%03d", i)
		items[k] = fmt.Appendf(nil, "value of %s", k)
		keys = append(keys, k)
	}
	store(t, c, items, long)
	want(t, fetch(t, c, append(keys, "many/missing")...), items)
	// A subset, and a key asked for twice.
	want(t, fetch(t, c, "many/007", "many/007", "many/199"), map[string][]byte{
		"many/007": items["many/007"], "many/199": items["many/199"],
	})
}

func testOverwrite(t *testing.T, c cache.Cache) {
	store(t, c, map[string][]byte{"ow": []byte("first, and longer")}, long)
	store(t, c, map[string][]byte{"ow": []byte("second")}, long)
	want(t, fetch(t, c, "ow"), map[string][]byte{"ow": []byte("second")})
}

func testDelete(t *testing.T, c cache.Cache) {
	store(t, c, map[string][]byte{"del/a": []byte("a"), "del/b": []byte("b"), "del/c": []byte("c")}, long)
	if err := c.Delete(ctx(t), "del/a", "del/c", "del/missing"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	want(t, fetch(t, c, "del/a", "del/b", "del/c"), map[string][]byte{"del/b": []byte("b")})
	// A deleted key can be stored again.
	store(t, c, map[string][]byte{"del/a": []byte("again")}, long)
	want(t, fetch(t, c, "del/a"), map[string][]byte{"del/a": []byte("again")})
}

func testTTL(t *testing.T, c cache.Cache) {
	const short = 150 * time.Millisecond
	start := time.Now()
	store(t, c, map[string][]byte{"ttl/short": []byte("short")}, short)
	store(t, c, map[string][]byte{"ttl/long": []byte("long")}, long)
	hits := fetch(t, c, "ttl/short")
	// Only a fetch well inside the TTL must hit: a slow machine may take
	// longer than the TTL to get here.
	if time.Since(start) < short/2 {
		want(t, hits, map[string][]byte{"ttl/short": []byte("short")})
	}
	Poll(t, 10*time.Second, "short-TTL item expires", func() bool {
		_, ok := fetch(t, c, "ttl/short")["ttl/short"]
		return !ok
	})
	if elapsed := time.Since(start); elapsed < short {
		t.Errorf("item with TTL %v expired after %v", short, elapsed)
	}
	want(t, fetch(t, c, "ttl/long"), map[string][]byte{"ttl/long": []byte("long")})
}

func testInvalidTTL(t *testing.T, c cache.Cache) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		if err := c.Store(ctx(t), map[string][]byte{"ttl/bad": []byte("x")}, ttl); !errors.Is(err, cache.ErrInvalid) {
			t.Errorf("Store with TTL %v: got %v, want ErrInvalid", ttl, err)
		}
		if _, _, err := c.TryLock(ctx(t), "ttl/bad", ttl); !errors.Is(err, cache.ErrInvalid) {
			t.Errorf("TryLock with TTL %v: got %v, want ErrInvalid", ttl, err)
		}
	}
	want(t, fetch(t, c, "ttl/bad"), nil)
}

func testCopied(t *testing.T, c cache.Cache) {
	v := []byte("original")
	store(t, c, map[string][]byte{"copy": v}, long)
	copy(v, "MUTATED!")
	got := fetch(t, c, "copy")["copy"]
	if string(got) != "original" {
		t.Fatalf("after mutating the stored slice, Fetch = %q, want %q", got, "original")
	}
	copy(got, "MUTATED!")
	if again := fetch(t, c, "copy")["copy"]; string(again) != "original" {
		t.Fatalf("after mutating a fetched slice, Fetch = %q, want %q", again, "original")
	}
}

func testSizes(t *testing.T, c cache.Cache) {
	large := make([]byte, 1<<20)
	for i := range large {
		large[i] = byte(rand.IntN(256))
	}
	items := map[string][]byte{"size/empty": {}, "size/large": large}
	store(t, c, items, long)
	hits := fetch(t, c, "size/empty", "size/large")
	want(t, hits, items)
	if v, ok := hits["size/empty"]; ok && v == nil {
		t.Errorf("empty value: Fetch returned nil, want an empty non-nil slice")
	}
}

func testBinary(t *testing.T, c cache.Cache) {
	all := make([]byte, 0, 512)
	for i := range 256 {
		all = append(all, byte(i))
	}
	all = append(all, all...)
	items := map[string][]byte{
		"bin/bytes":         all,
		"bin/nuls":          {0, 0, 0},
		"bin/nul-in-middle": []byte("a\x00b\r\n$3\r\nc"), // RESP-looking too
	}
	store(t, c, items, long)
	want(t, fetch(t, c, "bin/bytes", "bin/nuls", "bin/nul-in-middle"), items)
}

func testOddKeys(t *testing.T, c cache.Cache) {
	keys := []string{
		"", "with space", "new\nline", "tab\tkey", "nul\x00key", "crlf\r\n",
		"ünïcødé/キー", "{alice}/hash-tag", "glob*?[x]", "quote\"'`", "back\\slash",
		"emoji-🙂", "percent%s%d", "colon:key:", "/leading/slash", "v:l:", string(bytes.Repeat([]byte("k"), 1000)),
	}
	items := make(map[string][]byte)
	for i, k := range keys {
		items[k] = fmt.Appendf(nil, "value %d", i)
	}
	store(t, c, items, long)
	want(t, fetch(t, c, keys...), items)
	if err := c.Delete(ctx(t), keys...); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	want(t, fetch(t, c, keys...), nil)
}

func testCancelled(t *testing.T, c cache.Cache) {
	store(t, c, map[string][]byte{"cancel": []byte("v")}, long)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if hits, err := c.Fetch(done, []string{"cancel"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch: got %v, %v; want context.Canceled", hits, err)
	}
	if err := c.Store(done, map[string][]byte{"cancel/new": []byte("v")}, long); !errors.Is(err, context.Canceled) {
		t.Errorf("Store: got %v, want context.Canceled", err)
	}
	if err := c.Delete(done, "cancel"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: got %v, want context.Canceled", err)
	}
	if _, ok, err := c.TryLock(done, "cancel", long); !errors.Is(err, context.Canceled) || ok {
		t.Errorf("TryLock: got %v, %v; want context.Canceled", ok, err)
	}
	// Nothing was changed.
	want(t, fetch(t, c, "cancel", "cancel/new"), map[string][]byte{"cancel": []byte("v")})
	if unlock, ok, err := c.TryLock(ctx(t), "cancel", long); err != nil || !ok {
		t.Errorf("TryLock after the cancelled one: %v, %v; want the lock", ok, err)
	} else {
		unlock()
	}
}

func tryLock(t *testing.T, c cache.Cache, key string, ttl time.Duration) (func(), bool) {
	t.Helper()
	unlock, ok, err := c.TryLock(ctx(t), key, ttl)
	if err != nil {
		t.Fatalf("TryLock(%q): %v", key, err)
	}
	if ok && unlock == nil {
		t.Fatalf("TryLock(%q): ok with a nil unlock", key)
	}
	return unlock, ok
}

func testLock(t *testing.T, c cache.Cache) {
	unlock, ok := tryLock(t, c, "lock/a", long)
	if !ok {
		t.Fatal("first TryLock: not acquired")
	}
	if _, ok := tryLock(t, c, "lock/a", long); ok {
		t.Fatal("second TryLock of a held lock: acquired")
	}
	other, ok := tryLock(t, c, "lock/b", long)
	if !ok {
		t.Fatal("TryLock of another key: not acquired")
	}
	defer other()

	// Locks and values do not share keys.
	want(t, fetch(t, c, "lock/a"), nil)
	store(t, c, map[string][]byte{"lock/a": []byte("value")}, long)
	if _, ok := tryLock(t, c, "lock/a", long); ok {
		t.Fatal("storing a value under a held lock's key released the lock")
	}
	if err := c.Delete(ctx(t), "lock/a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, ok := tryLock(t, c, "lock/a", long); ok {
		t.Fatal("deleting a value under a held lock's key released the lock")
	}

	unlock()
	unlock() // a second release is harmless
	again, ok := tryLock(t, c, "lock/a", long)
	if !ok {
		t.Fatal("TryLock after unlock: not acquired")
	}
	again()
}

func testLockHolderOnly(t *testing.T, c cache.Cache) {
	const short = 100 * time.Millisecond
	first, ok := tryLock(t, c, "lock/expiring", short)
	if !ok {
		t.Fatal("first TryLock: not acquired")
	}
	// The lock expires by its TTL and someone else takes it.
	var second func()
	Poll(t, 10*time.Second, "lock expires by its TTL", func() bool {
		second, ok = tryLock(t, c, "lock/expiring", long)
		return ok
	})
	// The first holder's late release must not free the second's lock.
	first()
	if _, ok := tryLock(t, c, "lock/expiring", long); ok {
		t.Fatal("a former holder's unlock released the current holder's lock")
	}
	second()
	third, ok := tryLock(t, c, "lock/expiring", long)
	if !ok {
		t.Fatal("TryLock after the holder's unlock: not acquired")
	}
	third()
}

// testConcurrent has writers, readers and deleters share keys; a value read
// must always be one some writer stored whole for that key.
func testConcurrent(t *testing.T, c cache.Cache) {
	const (
		workers = 8
		rounds  = 100
		nkeys   = 16
	)
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("conc/%02d", i)
	}
	valid := func(k string, v []byte) bool {
		var w, r int
		var got string
		_, err := fmt.Sscanf(string(v), "%s %d %d", &got, &w, &r)
		return err == nil && got == k && bytes.Equal(v, value(k, w, r))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for r := range rounds {
				k := keys[rng.IntN(nkeys)]
				var err error
				switch rng.IntN(4) {
				case 0, 1:
					k2 := keys[rng.IntN(nkeys)]
					err = c.Store(ctx(t), map[string][]byte{k: value(k, w, r), k2: value(k2, w, r)}, long)
				case 2:
					err = c.Delete(ctx(t), k)
				case 3:
					var hits map[string][]byte
					hits, err = c.Fetch(ctx(t), keys)
					for hk, v := range hits {
						if !valid(hk, v) {
							err = fmt.Errorf("key %q holds %q, which no writer stored for it", hk, v)
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// value is a value that says which key, writer and round it is for, padded
// so that a torn write would show.
func value(key string, writer, round int) []byte {
	v := fmt.Appendf(nil, "%s %d %d ", key, writer, round)
	return append(v, bytes.Repeat([]byte{byte('a' + writer)}, 1000)...)
}

// testConcurrentLock checks that a lock has at most one holder at a time.
func testConcurrentLock(t *testing.T, c cache.Cache) {
	const workers, rounds = 8, 50
	var holders, maxHolders, acquired atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range rounds {
				unlock, ok, err := c.TryLock(ctx(t), "conc/lock", long)
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					continue
				}
				n := holders.Add(1)
				for {
					m := maxHolders.Load()
					if n <= m || maxHolders.CompareAndSwap(m, n) {
						break
					}
				}
				acquired.Add(1)
				time.Sleep(time.Millisecond) // hold it for a moment
				holders.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := maxHolders.Load(); m > 1 {
		t.Errorf("%d holders of one lock at once", m)
	}
	if acquired.Load() == 0 {
		t.Error("no worker ever acquired the lock")
	}
}
