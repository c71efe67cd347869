package events

import (
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/skills"
)

// recheckAfter is how long after the last event for a library it is
// dropped once more. A listing that began before an event (a revalidation
// under way on any replica) can publish its index after the event's drop,
// and would then be served until the next revalidation, minutes later with
// events on; the second drop ends that within this. A listing slower than
// this can still slip through, until polling catches it.
const recheckAfter = time.Second

// maxPendingRechecks bounds the rechecks waiting at once; past it an
// event's change is applied without one.
const maxPendingRechecks = 10000

// rechecker applies each change once more recheckAfter the last time it was
// scheduled, so a burst of events (a recursive upload) costs one recheck.
type rechecker struct {
	after     time.Duration
	apply     func(skills.Change)
	afterFunc func(time.Duration, func()) (stop func() bool) // time.AfterFunc's, replaced in tests

	mu      sync.Mutex
	pending map[skills.Change]*pendingRecheck
	closed  bool
	wg      sync.WaitGroup // scheduled and running rechecks
}

type pendingRecheck struct{ stop func() bool }

func newRechecker(apply func(skills.Change)) *rechecker {
	return &rechecker{
		after: recheckAfter, apply: apply, pending: map[skills.Change]*pendingRecheck{},
		afterFunc: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
	}
}

// schedule (re)starts ch's wait.
func (rc *rechecker) schedule(ch skills.Change) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return
	}
	if p, ok := rc.pending[ch]; ok {
		if p.stop() {
			rc.wg.Done() // stopped before it ran
		}
	} else if len(rc.pending) >= maxPendingRechecks {
		return
	}
	p := &pendingRecheck{}
	rc.wg.Add(1)
	// The callback takes the lock first, so p is in place before it looks.
	p.stop = rc.afterFunc(rc.after, func() {
		defer rc.wg.Done()
		rc.mu.Lock()
		ours := rc.pending[ch] == p
		if ours {
			delete(rc.pending, ch)
		}
		rc.mu.Unlock()
		if ours {
			rc.apply(ch)
		}
	})
	rc.pending[ch] = p
}

// close cancels the rechecks not yet started and waits for those running.
func (rc *rechecker) close() {
	rc.mu.Lock()
	rc.closed = true
	for ch, p := range rc.pending {
		if p.stop() {
			rc.wg.Done()
		}
		delete(rc.pending, ch)
	}
	rc.mu.Unlock()
	rc.wg.Wait()
}
