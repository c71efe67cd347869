package cache

import (
	"context"
	"crypto/rand"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// entryOverhead is charged per item on top of its key and value, for the
// list element, map slot and expiry, so a flood of tiny items is bounded too.
const entryOverhead = 64

// maxLocks bounds the lock table; past it, expired locks are swept.
const maxLocks = 1024

// LRU is an in-process Cache bounded in bytes, with a TTL per item.
//
// It is built on golang-lru's simplelru rather than its expirable LRU: that
// one has a single TTL for the whole cache and is bounded by count, and a
// bound in bytes needs "add, then evict the oldest until under budget" under
// one lock, which the thread-unsafe simplelru under our own mutex gives. The
// eviction callback is the one place bytes are given back.
type LRU struct {
	maxBytes int64

	mu    sync.Mutex
	lru   *simplelru.LRU[string, lruEntry]
	bytes int64
	locks map[string]lruLock
}

type lruEntry struct {
	value   []byte // never changed after Store: Fetch copies it outside mu
	expires time.Time
}

type lruLock struct {
	token   string
	expires time.Time
}

var _ Cache = (*LRU)(nil)

// NewLRU returns an empty LRU holding at most maxBytes, which must be
// positive (NewLRU panics otherwise: a programming error that
// LRUConfig.Validate catches for configured values).
func NewLRU(maxBytes int64) *LRU {
	if maxBytes <= 0 {
		panic("cache: NewLRU needs a positive maxBytes")
	}
	c := &LRU{maxBytes: maxBytes, locks: make(map[string]lruLock)}
	// Bounded by bytes, not count: the count bound is never reached.
	l, err := simplelru.NewLRU(math.MaxInt, func(key string, e lruEntry) {
		c.bytes -= cost(key, e.value)
	})
	if err != nil {
		panic(err) // only for a size that is not positive
	}
	c.lru = l
	return c
}

func cost(key string, value []byte) int64 {
	return int64(len(key)) + int64(len(value)) + entryOverhead
}

// Fetch implements Cache.
func (c *LRU) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	found := make(map[string][]byte, len(keys))
	now := time.Now()
	c.mu.Lock()
	for _, k := range keys {
		e, ok := c.lru.Get(k)
		if !ok {
			continue
		}
		if !now.Before(e.expires) {
			c.lru.Remove(k)
			continue
		}
		found[k] = e.value
	}
	c.mu.Unlock()
	// Stored values are never written to, so copying outside the lock is
	// safe and keeps large values from blocking other callers.
	for k, v := range found {
		found[k] = clone(v)
	}
	return found, nil
}

// Store implements Cache. An item larger than the whole cache is not kept
// (and replaces nothing: an older value under its key is removed).
func (c *LRU) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	expires := time.Now().Add(ttl)
	copies := make(map[string][]byte, len(items))
	for k, v := range items {
		if cost(k, v) <= c.maxBytes {
			copies[k] = clone(v)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range items {
		v, ok := copies[k]
		// Remove first: simplelru's Add of an existing key calls no
		// eviction callback, so the old value's bytes would be lost.
		c.lru.Remove(k)
		if !ok {
			continue
		}
		c.lru.Add(k, lruEntry{value: v, expires: expires})
		c.bytes += cost(k, v)
		for c.bytes > c.maxBytes {
			c.lru.RemoveOldest()
		}
	}
	return nil
}

// Delete implements Cache.
func (c *LRU) Delete(ctx context.Context, keys ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.lru.Remove(k)
	}
	return nil
}

// TryLock implements Cache for the callers of this process.
func (c *LRU) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, false, err
	}
	token := rand.Text() // tells this holder's lock from the next holder's
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, held := c.locks[key]; held && now.Before(l.expires) {
		return nil, false, nil
	}
	if len(c.locks) >= maxLocks {
		for k, l := range c.locks {
			if !now.Before(l.expires) {
				delete(c.locks, k)
			}
		}
	}
	c.locks[key] = lruLock{token: token, expires: now.Add(ttl)}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if l, held := c.locks[key]; held && l.token == token {
			delete(c.locks, key)
		}
	}, true, nil
}

// Close implements Cache; the LRU holds no connections.
func (c *LRU) Close() error { return nil }

// Len returns the number of items held, expired ones not yet evicted included.
func (c *LRU) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the bytes charged for the items held.
func (c *LRU) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// clone copies v; an empty value stays non-nil so it reads as a hit.
func clone(v []byte) []byte {
	return append(make([]byte, 0, len(v)), v...)
}
