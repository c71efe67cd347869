// Package keptcopy keeps a copy of a value per key, read once and read
// again in the background once it is stale: a caller waits only for a
// key's first read on a replica, and sees another replica's change within
// about the copy's freshness of use.
package keptcopy

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Copies is the kept copies of one kind of value.
type Copies[V any] struct {
	fresh, readTime time.Duration
	max             int
	read            func(ctx context.Context, key string) (V, error)
	now             func() time.Time
	log             *slog.Logger

	mu sync.Mutex
	m  map[string]*entry[V]
	wg sync.WaitGroup
}

type entry[V any] struct {
	at         time.Time
	v          V
	refreshing bool
}

// New returns copies read by read, fresh for fresh, each background read
// bounded by readTime, at most max keys kept (past it they are dropped and
// read again as asked for). now is the clock (time.Now when nil).
func New[V any](fresh, readTime time.Duration, max int, read func(ctx context.Context, key string) (V, error), now func() time.Time, log *slog.Logger) *Copies[V] {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Copies[V]{fresh: fresh, readTime: readTime, max: max, read: read, now: now, log: log, m: make(map[string]*entry[V])}
}

// Get returns key's copy: read now when there is none, else the copy, read
// again in the background when it is stale (one read at a time per key).
func (c *Copies[V]) Get(ctx context.Context, key string) (V, error) {
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		if !e.refreshing && c.now().Sub(e.at) >= c.fresh {
			e.refreshing = true
			c.wg.Go(func() { c.refresh(key, e) })
		}
		v := e.v
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, err := c.read(ctx, key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		return e.v, nil // set while this read ran: a write made here, newer
	}
	c.put(key, v)
	return v, nil
}

// put makes v key's copy, fresh from now (c.mu held).
func (c *Copies[V]) put(key string, v V) {
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[key] = &entry[V]{at: c.now(), v: v}
}

// Set makes v key's copy, fresh from now: a write made here, whose result
// is what a read would find, so no call waits to read it again. A
// background read under way for the copy it replaces is dropped.
func (c *Copies[V]) Set(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(key, v)
}

// refresh reads key again for e; on a failure the copy is kept and read
// again once stale.
func (c *Copies[V]) refresh(key string, e *entry[V]) {
	ctx, cancel := context.WithTimeout(context.Background(), c.readTime)
	defer cancel()
	v, err := c.read(ctx, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.log.Warn("kept copy not read again; the copy is kept", "key", key, "err", err)
	} else {
		e.v = v
	}
	e.at, e.refreshing = c.now(), false
}

// Forget drops key's copy: the next Get reads it (a change made here).
func (c *Copies[V]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// Wait waits for the background reads under way (tests).
func (c *Copies[V]) Wait() { c.wg.Wait() }
