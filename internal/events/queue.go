package events

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"golang.org/x/time/rate"
)

// recheckAfter is how long after the last event for a library it is
// dropped once more. A listing that began before an event (a revalidation
// under way on any replica) can publish its index after the event's drop,
// and would then be served until the next revalidation, minutes later with
// events on; the second drop ends that within this. A listing slower than
// this can still slip through, until polling catches it. It is also the
// shortest time between two drops of one library while its events go on.
const recheckAfter = time.Second

// maxDropAttempts bounds the tries of a drop that fails (Redis or storage
// down): it is tried again after 1s, 2s, 4s and 8s, then left to polling
// (--skills.index-refresh), the bound for anything missed.
const maxDropAttempts = 5

// ErrOverloaded is Apply's answer when Config.MaxPending libraries wait
// for a drop and an event names yet another: the sender tries again later.
var ErrOverloaded = errors.New("events: too many libraries waiting for a drop")

var errClosed = errors.New("events: the receiver is closed")

// dropQueue runs the drops events call for, paced, so that a burst of any
// size costs Redis and storage a bounded amount:
//   - coalesced: a library is pending once however many events name it,
//     and dropped at most once per recheckAfter while its events go on;
//   - rate-bounded: at most Config.DropRate drops start a second, at most
//     Config.DropConcurrency run at once, so the shared Redis pool and its
//     breaker stay with the other tenants' calls;
//   - bounded: at most Config.MaxPending libraries wait; past it an event
//     naming another is refused (ErrOverloaded) rather than queued.
//
// Each library is dropped as soon as its turn comes, and again
// recheckAfter after its last event if that is later than the drop began
// (a drop that waited its turn that long is its own recheck).
type dropQueue struct {
	drop       func(context.Context, layout.Change) error
	limiter    *rate.Limiter
	rate       float64
	maxPending int
	metrics    *metrics
	log        *slog.Logger
	ctx        context.Context // ends at close, and with it a wait for the limiter
	cancel     context.CancelFunc
	workers    sync.WaitGroup

	mu      sync.Mutex
	cond    sync.Cond // signalled when ready grows or the queue closes
	pending map[layout.Change]*pendingDrop
	ready   []layout.Change // pending drops whose turn has come, in order
	closed  bool
}

type dropState uint8

const (
	dropQueued  dropState = iota // in ready
	dropRunning                  // a worker has it
	dropWaiting                  // its timer queues it again: a recheck or a retry
)

type pendingDrop struct {
	state     dropState
	lastEvent time.Time
	ran       bool // a drop of it ran: the next is a recheck
	failures  int  // in a row
	timer     *time.Timer
}

func newDropQueue(cfg Config, drop func(context.Context, layout.Change) error, m *metrics, log *slog.Logger) *dropQueue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &dropQueue{
		drop: drop, limiter: rate.NewLimiter(rate.Limit(cfg.DropRate), cfg.DropConcurrency), rate: cfg.DropRate,
		maxPending: cfg.MaxPending, metrics: m, log: log, ctx: ctx, cancel: cancel,
		pending: map[layout.Change]*pendingDrop{},
	}
	q.cond.L = &q.mu
	q.workers.Add(cfg.DropConcurrency)
	for range cfg.DropConcurrency {
		go q.work()
	}
	return q
}

// add queues ch's drop, or notes another event for a drop already pending
// (coalesced).
func (q *dropQueue) add(ch layout.Change) (coalesced bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.pending[ch]
	switch {
	case q.closed:
		return false, errClosed
	case ok:
		p.lastEvent = time.Now()
		return true, nil
	case len(q.pending) >= q.maxPending:
		return false, ErrOverloaded
	}
	q.pending[ch] = &pendingDrop{lastEvent: time.Now()}
	q.ready = append(q.ready, ch)
	q.metrics.pending.Set(float64(len(q.pending)))
	q.cond.Signal()
	return false, nil
}

// retryAfter is about how long the pending drops take at the rate: when a
// refused sender may find room.
func (q *dropQueue) retryAfter() time.Duration {
	q.mu.Lock()
	n := len(q.pending)
	q.mu.Unlock()
	return time.Duration(math.Ceil(math.Max(1, float64(n)/q.rate))) * time.Second
}

func (q *dropQueue) work() {
	defer q.workers.Done()
	for {
		ch, p, ok := q.next()
		if !ok {
			return
		}
		if q.limiter.Wait(q.ctx) != nil {
			return // closed
		}
		// Events from now on may not be seen by this drop's listing.
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
		err := q.drop(ctx, ch)
		cancel()
		q.done(ch, p, start, err)
	}
}

// next waits for a drop whose turn has come.
func (q *dropQueue) next() (layout.Change, *pendingDrop, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return layout.Change{}, nil, false
	}
	ch := q.ready[0]
	q.ready[0] = layout.Change{}
	q.ready = q.ready[1:]
	p := q.pending[ch]
	p.state = dropRunning
	return ch, p, true
}

// done settles a drop that began at start: the library is forgotten, or
// waits for its recheck (an event came less than recheckAfter before the
// drop began, or during it) or for a retry.
func (q *dropQueue) done(ch layout.Change, p *pendingDrop, start time.Time, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	result := "ok"
	if err != nil {
		result = "error"
	}
	q.metrics.drops.WithLabelValues(result).Inc()
	if p.ran {
		q.metrics.rechecks.WithLabelValues(result).Inc()
	}
	p.ran = true
	if q.closed {
		return
	}
	var wait time.Duration
	if err != nil {
		p.failures++
		if p.failures >= maxDropAttempts {
			q.remove(ch)
			q.log.Warn("events: dropping a library failed; polling (--skills.index-refresh) still bounds its staleness",
				"user", ch.Library.User, "shared", ch.Library.Shared, "team", ch.Library.Team, "attempts", p.failures, "err", err)
			return
		}
		wait = recheckAfter << (p.failures - 1)
		q.log.Debug("events: dropping a library failed; trying again", "user", ch.Library.User, "shared", ch.Library.Shared, "team", ch.Library.Team, "in", wait, "err", err)
	} else {
		p.failures = 0
		due := p.lastEvent.Add(recheckAfter)
		if !due.After(start) {
			q.remove(ch)
			return
		}
		wait = time.Until(due)
	}
	p.state = dropWaiting
	p.timer = time.AfterFunc(wait, func() { q.due(ch, p) })
}

// due queues p's recheck or retry.
func (q *dropQueue) due(ch layout.Change, p *pendingDrop) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.pending[ch] != p || p.state != dropWaiting {
		return
	}
	p.state, p.timer = dropQueued, nil
	q.ready = append(q.ready, ch)
	q.cond.Signal()
}

func (q *dropQueue) remove(ch layout.Change) {
	delete(q.pending, ch)
	q.metrics.pending.Set(float64(len(q.pending)))
}

// close forgets the drops not yet started and waits for those running.
func (q *dropQueue) close() {
	q.mu.Lock()
	q.closed = true
	for _, p := range q.pending {
		if p.timer != nil {
			p.timer.Stop()
		}
	}
	clear(q.pending)
	q.ready = nil
	q.metrics.pending.Set(0)
	q.cond.Broadcast()
	q.mu.Unlock()
	q.cancel()
	q.workers.Wait()
}
