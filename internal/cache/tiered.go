package cache

import (
	"context"
	"errors"
	"time"
)

// Tiered puts a fast cache (l1, in process) in front of a shared one (l2,
// Redis). l1 keeps nothing longer than l1TTL, so a change that another
// replica makes in l2 (or a Delete it runs) shows up here within l1TTL.
//
// Redis being down degrades the cache, never the service: a Fetch that l2
// fails answers from l1 with the rest as misses, and TryLock falls back to
// l1's in-process lock (then each replica, not each caller, may revalidate).
// Store and Delete write l1 even when l2 fails and return l2's error, so the
// caller can log it; cached data is best effort.
type Tiered struct {
	l1, l2 Cache
	l1TTL  time.Duration
}

var _ Cache = (*Tiered)(nil)

// NewTiered returns l1 in front of l2; l1TTL (positive) caps how long l1
// keeps an item. Close closes both.
func NewTiered(l1, l2 Cache, l1TTL time.Duration) *Tiered {
	if l1TTL <= 0 {
		panic("cache: NewTiered needs a positive l1TTL")
	}
	return &Tiered{l1: l1, l2: l2, l1TTL: l1TTL}
}

// Fetch implements Cache: l1 first, then l2 for the misses, whose hits are
// copied into l1. A back-filled item may outlive its l2 TTL by up to l1TTL.
func (t *Tiered) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hits, err := t.l1.Fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, k := range keys {
		if _, ok := hits[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return hits, nil
	}
	more, err := t.l2.Fetch(ctx, missing)
	if err != nil {
		if callerDone(ctx) != nil {
			return nil, err
		}
		return hits, nil // l2 is down or slow: misses, not a failure
	}
	if len(more) == 0 {
		return hits, nil
	}
	// l1 copies the values, so hits may share them. A failed back-fill
	// only costs a later l2 fetch.
	_ = t.l1.Store(ctx, more, t.l1TTL)
	for k, v := range more {
		hits[k] = v
	}
	return hits, nil
}

// Store implements Cache.
func (t *Tiered) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if err := t.l1.Store(ctx, items, min(ttl, t.l1TTL)); err != nil {
		return err
	}
	return t.l2.Store(ctx, items, ttl)
}

// Delete implements Cache: l2 first, so that a concurrent Fetch is less
// likely to copy the old value back into l1 (if it does, it lasts l1TTL).
func (t *Tiered) Delete(ctx context.Context, keys ...string) error {
	err2 := t.l2.Delete(ctx, keys...)
	if err := t.l1.Delete(ctx, keys...); err != nil {
		return err
	}
	return err2
}

// TryLock implements Cache with l2's lock, shared by the replicas; when l2
// fails (not the caller's context), with l1's.
func (t *Tiered) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	unlock, ok, err := t.l2.TryLock(ctx, key, ttl)
	if err == nil || callerDone(ctx) != nil || errors.Is(err, ErrInvalid) {
		return unlock, ok, err
	}
	return t.l1.TryLock(ctx, key, ttl)
}

// Close implements Cache.
func (t *Tiered) Close() error {
	return errors.Join(t.l1.Close(), t.l2.Close())
}

// Shared returns l2, the level every replica sees.
func (t *Tiered) Shared() Cache { return t.l2 }

// LocalTTL returns l1TTL, the longest l1 keeps an item.
func (t *Tiered) LocalTTL() time.Duration { return t.l1TTL }

// LocalTTL returns how long c keeps an item in process in front of the level
// every replica sees (l1TTL of a Tiered): the bound on how late another
// replica's change shows up through c. It is 0 when c has no such level.
// What a package keeps decoded in process from the shared level may be
// kept as long, with the same bound.
func LocalTTL(c Cache) time.Duration {
	if l, ok := c.(interface{ LocalTTL() time.Duration }); ok {
		return l.LocalTTL()
	}
	return 0
}

// Shared returns the level of c that every replica sees: l2 of a Tiered,
// otherwise c itself. Entries that change in place (a stamp, a user's
// settings) are read there, so a change one replica writes is the next read
// of every other; content-addressed entries may use c and its process level.
func Shared(c Cache) Cache {
	if s, ok := c.(interface{ Shared() Cache }); ok {
		return s.Shared()
	}
	return c
}
