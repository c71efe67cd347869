package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Cache is a byte-oriented cache shared by the replicas of skillsvc, with a
// short lock to coordinate them. Every method takes ctx first, returns the
// context's error when it is already done, and is safe for concurrent use.
type Cache interface {
	// Fetch returns the values of the keys that are cached; missing and
	// expired keys are absent from hits. The values belong to the caller.
	Fetch(ctx context.Context, keys []string) (hits map[string][]byte, err error)
	// Store caches every item for ttl, which must be positive. The cache
	// keeps its own copy of the values.
	Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error
	// Delete removes the keys; keys that are not cached are no error.
	Delete(ctx context.Context, keys ...string) error
	// TryLock takes the lock named key for at most ttl, unless another
	// holder has it (ok false). unlock releases it only while this holder
	// still owns it, never someone who took it after it expired; it is
	// bounded, safe to call more than once, and a failed release leaves the
	// lock to expire. Locks live apart from the values: key may also name a
	// value.
	TryLock(ctx context.Context, key string, ttl time.Duration) (unlock func(), ok bool, err error)
	// Close releases connections. Wrappers close what they wrap.
	Close() error
}

// Sentinel errors. They are internal errkinds: their wrapped text names cache
// keys, which must not reach a caller.
var (
	// ErrUnavailable: the shared cache could not be reached or answer in
	// time, or its circuit breaker is open. Treat it as a miss.
	ErrUnavailable = errkind.NewInternal(errkind.Unavailable, "cache unavailable")
	// ErrInvalid: a call's arguments are unusable (a TTL that is not
	// positive). A programming error, never a miss.
	ErrInvalid = errkind.NewInternal(errkind.InvalidArgument, "invalid cache call")
	// ErrInvalidConfig: Validate found a setting it cannot use.
	ErrInvalidConfig = errors.New("cache: invalid configuration")
)

// checkTTL rejects a TTL that would store nothing or forever: every cached
// key has a TTL, so a Redis with allkeys-lru and a missed Delete both heal.
func checkTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: ttl %v must be positive", ErrInvalid, ttl)
	}
	return nil
}

// callerDone returns the caller's context error, also when the deadline has
// passed but the context's timer has not fired yet: a Redis call that ran
// into the deadline returns at that instant, maybe before ctx.Err is set.
func callerDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
