package versions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Budget is the one memory budget of a replica's authors' path
// (--library.memory-budget): the folders of publishes being received and
// written, and the records and files version reads and rollbacks hold,
// each charged by its bytes while held. Beyond it a call waits up to
// --library.memory-wait, then is RESOURCE_EXHAUSTED with a retry delay.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func NewBudget(size int64, wait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// ErrBusy is a call refused because the replica's memory budget stayed
// spent for --library.memory-wait.
var ErrBusy = fmt.Errorf("%w: the server is busy with other publishes and version reads (--library.memory-budget); try again shortly", errkind.ResourceExhausted)

// Reservation is memory taken from a Budget; Release gives it all back.
// The zero value holds nothing. Not safe for concurrent use.
type Reservation struct {
	b *Budget
	n int64
}

// Reserve starts an empty reservation on b.
func (b *Budget) Reserve() *Reservation { return &Reservation{b: b} }

// Take adds n bytes to the reservation, waiting up to the budget's wait
// for them. A request larger than the whole budget takes the whole budget,
// so one large publish still goes through alone.
func (r *Reservation) Take(ctx context.Context, n int64) error {
	if r == nil || r.b == nil || n <= 0 {
		return nil
	}
	n = min(n, r.b.size-r.n)
	if n <= 0 {
		return nil
	}
	if r.b.sem.TryAcquire(n) {
		r.n += n
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, r.b.wait)
	defer cancel()
	if err := r.b.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return errkind.RetryAfter(ErrBusy, time.Second)
		}
		return err
	}
	r.n += n
	return nil
}

// Held is how many bytes the reservation holds.
func (r *Reservation) Held() int64 {
	if r == nil {
		return 0
	}
	return r.n
}

// Release gives back everything the reservation holds.
func (r *Reservation) Release() {
	if r == nil || r.b == nil || r.n == 0 {
		return
	}
	r.b.sem.Release(r.n)
	r.n = 0
}
