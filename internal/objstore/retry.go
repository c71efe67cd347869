package objstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// LostRace reports whether err is a conditional write that lost to another
// writer (the version changed, or a concurrent write won).
func LostRace(err error) bool {
	return errors.Is(err, ErrPrecondition) || errors.Is(err, ErrConflict)
}

// RetryConditional runs attempt, a read-modify-write ending in a conditional
// Put, until it returns anything but a lost race, at most attempts times.
// Between tries it waits a random time up to base·2^try (capped at 64·base),
// so writers that collided spread out instead of colliding again. After the
// last try it returns the last lost-race error.
func RetryConditional(ctx context.Context, attempts int, base time.Duration, attempt func() error) error {
	for try := 0; ; try++ {
		err := attempt()
		if !LostRace(err) || try+1 >= attempts {
			return err
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(base<<min(try, 6)) + 1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
