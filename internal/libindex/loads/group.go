package loads

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// Group runs the loads of values of type V by key: one at a time per key,
// joined by every caller that comes meanwhile, each bounded by a timeout
// rather than by its first caller's context (callers share it, so one
// giving up must not fail the others).
//
// It counts the Drop and Forget calls, and the Drops under way, by stripe
// of keys: a load keeps (holds, publishes) what it read only while no drop
// of its stripe began since the load did (Keeps, KeepIf), so a value read
// before a change that dropped it is never kept after the drop. mu makes
// that check and the keeping one step.
type Group[V any] struct {
	timeout  time.Duration
	onShared func() // a caller joined a load under way
	flight   singleflight.Group

	mu    sync.Mutex
	drops [stripes]dropState
}

// NewGroup returns a group whose loads run for at most timeout; onShared
// (nil: nothing) is called for each caller that joined a load under way.
func NewGroup[V any](timeout time.Duration, onShared func()) *Group[V] {
	if onShared == nil {
		onShared = func() {}
	}
	return &Group[V]{timeout: timeout, onShared: onShared}
}

// dropState is one stripe's drops: how many began or were forgotten, and
// how many Drops are deleting copies now.
type dropState struct {
	count   uint64
	running int
}

// keeps reports whether a load that began at count since may keep what it
// read: no drop began since, and none is deleting (a load during one may
// have read a copy just before it was deleted).
func (d dropState) keeps(since uint64) bool { return d.running == 0 && d.count == since }

// stripes spreads the drop counts, so dropping one key rarely keeps
// another's concurrent load from being kept.
const stripes = 64

func stripe(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % stripes)
}

// Since is where a load of key begins: its stripe's count of drops.
func (g *Group[V]) Since(key string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.drops[stripe(key)].count
}

// Keeps reports whether a load of key that began at since may keep what
// it read.
func (g *Group[V]) Keeps(key string, since uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.drops[stripe(key)].keeps(since)
}

// KeepIf runs keep when a load of key that began at since may keep what it
// read, in one step against the drops.
func (g *Group[V]) KeepIf(key string, since uint64, keep func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.drops[stripe(key)].keeps(since) {
		keep()
	}
}

// Dropped counts a drop of key (running says how many Drops of its stripe
// began, +1, or ended, -1, 0 for a Forget) and runs forget, which forgets
// what is kept of it, in one step against KeepIf.
func (g *Group[V]) Dropped(key string, running int, forget func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := &g.drops[stripe(key)]
	d.count++
	d.running += running
	forget()
}

// DroppedAll counts a drop of every key and runs forget, in one step
// against KeepIf.
func (g *Group[V]) DroppedAll(forget func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.drops {
		g.drops[i].count++
	}
	forget()
}

// loaded is a shared load's outcome: its value, when it began, and the
// count of drops of its stripe then (Since).
type loaded[V any] struct {
	v       V
	started time.Time
	since   uint64
}

// Do returns the value load loads of key, joining a load of key under way
// if there is one; load is given the count of drops it began at (Since),
// for Keeps and KeepIf. A caller that joined a load that began before it
// came is given one more load, itself shared, when that load found storage
// failing (storage may have recovered since: the first caller after an
// outage would otherwise get the outage's answer), or began before a drop
// that ended before the caller came (it may predate a write the caller was
// answered for; any load joined now began after the drop).
func (g *Group[V]) Do(ctx context.Context, key string, load func(ctx context.Context, since uint64) (V, error)) (V, error) {
	arrived, drops := time.Now(), g.Since(key)
	got, err := g.join(ctx, key, load)
	switch {
	case err != nil && got.started.Before(arrived) && errkind.Of(err) == errkind.Unavailable && ctx.Err() == nil:
		got, err = g.join(ctx, key, load)
	case err == nil && got.since < drops:
		got, err = g.join(ctx, key, load)
	}
	return got.v, err
}

// join loads key, joining a load of it under way if there is one.
func (g *Group[V]) join(ctx context.Context, key string, load func(ctx context.Context, since uint64) (V, error)) (loaded[V], error) {
	ch := g.flight.DoChan(key, func() (any, error) {
		started, since := time.Now(), g.Since(key)
		v, err := panics.GuardValue(func() (V, error) {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
			defer cancel()
			return load(lctx, since)
		})()
		return loaded[V]{v, started, since}, err
	})
	select {
	case <-ctx.Done():
		return loaded[V]{}, ctx.Err()
	case res := <-ch:
		if res.Shared {
			g.onShared()
		}
		out, _ := res.Val.(loaded[V])
		return out, res.Err
	}
}
