package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"
)

// BreakerState is the state of a Breaker.
type BreakerState int

// The states, valued as the skillsvc_cache_breaker_state gauge reports them.
const (
	// BreakerClosed: calls go through.
	BreakerClosed BreakerState = iota
	// BreakerHalfOpen: the cool-down is over; one probe call goes through
	// and the others fail at once until it succeeds (closed) or fails
	// (open again).
	BreakerHalfOpen
	// BreakerOpen: calls fail at once with ErrUnavailable.
	BreakerOpen
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerHalfOpen:
		return "half-open"
	case BreakerOpen:
		return "open"
	}
	return fmt.Sprintf("BreakerState(%d)", int(s))
}

// Breaker stops calling a cache that keeps failing, so that callers do not
// each wait out its timeouts: after cfg.Failures failed calls in a row it
// fails every call with ErrUnavailable for cfg.CoolDown, then lets one probe
// through and closes again when that succeeds. It is sony/gobreaker's
// two-step breaker, which counts the outcome after the call without a
// closure per call. Calls the caller cancelled and invalid calls count
// neither way; a call that ran out of the caller's deadline is a failure,
// since a Redis that slow is what the breaker is for.
type Breaker struct {
	c  Cache
	cb *gobreaker.TwoStepCircuitBreaker[struct{}]
}

var _ Cache = (*Breaker)(nil)

// NewBreaker wraps c; state changes are logged to log (nil discards them).
func NewBreaker(c Cache, cfg BreakerConfig, log *slog.Logger) *Breaker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	failures := uint32(max(cfg.Failures, 1))
	return &Breaker{
		c: c,
		cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "redis",
			MaxRequests: 1, // one probe when half-open; its success closes
			Timeout:     cfg.CoolDown,
			ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= failures },
			IsExcluded: func(err error) bool {
				return errors.Is(err, context.Canceled) || errors.Is(err, ErrInvalid)
			},
			OnStateChange: func(_ string, from, to gobreaker.State) {
				switch to {
				case gobreaker.StateOpen:
					log.Warn("cache: Redis failing, skipping it", "breaker", "open", "from", from.String(), "cool_down", cfg.CoolDown)
				case gobreaker.StateHalfOpen:
					log.Info("cache: probing Redis", "breaker", "half-open")
				case gobreaker.StateClosed:
					log.Info("cache: Redis answers again", "breaker", "closed")
				}
			},
		}),
	}
}

// State returns the breaker's state now.
func (b *Breaker) State() BreakerState {
	switch b.cb.State() {
	case gobreaker.StateOpen:
		return BreakerOpen
	case gobreaker.StateHalfOpen:
		return BreakerHalfOpen
	}
	return BreakerClosed
}

// allow returns done to report the call's outcome, or ErrUnavailable.
func (b *Breaker) allow(ctx context.Context) (done func(error), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done, err = b.cb.Allow()
	if err != nil {
		return nil, fmt.Errorf("%w: circuit breaker: %w", ErrUnavailable, err)
	}
	return done, nil
}

// finish reports the call's outcome; a panic counts as a failure, so a
// half-open breaker is not left waiting for a probe that never ends.
func finish(done func(error), err *error) {
	if p := recover(); p != nil {
		done(fmt.Errorf("panic: %v", p))
		panic(p)
	}
	done(*err)
}

// Fetch implements Cache.
func (b *Breaker) Fetch(ctx context.Context, keys []string) (hits map[string][]byte, err error) {
	done, err := b.allow(ctx)
	if err != nil {
		return nil, err
	}
	defer finish(done, &err)
	return b.c.Fetch(ctx, keys)
}

// Store implements Cache.
func (b *Breaker) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) (err error) {
	done, err := b.allow(ctx)
	if err != nil {
		return err
	}
	defer finish(done, &err)
	return b.c.Store(ctx, items, ttl)
}

// Delete implements Cache.
func (b *Breaker) Delete(ctx context.Context, keys ...string) (err error) {
	done, err := b.allow(ctx)
	if err != nil {
		return err
	}
	defer finish(done, &err)
	return b.c.Delete(ctx, keys...)
}

// TryLock implements Cache. The release is not counted: it runs after the
// caller's work and is bounded by the wrapped cache.
func (b *Breaker) TryLock(ctx context.Context, key string, ttl time.Duration) (unlock func(), ok bool, err error) {
	done, err := b.allow(ctx)
	if err != nil {
		return nil, false, err
	}
	defer finish(done, &err)
	return b.c.TryLock(ctx, key, ttl)
}

// Close implements Cache.
func (b *Breaker) Close() error { return b.c.Close() }
