package loads

import (
	"sync"
	"time"
)

// BackgroundQueue bounds the revalidations waiting for a worker: a replica
// that finds more libraries due at once than its workers keep up with
// (after a restart or a flush of the shared cache) queues this many and
// skips the rest, which keep being served and are tried again a refresh
// interval later (or listed before answering past the max staleness).
const BackgroundQueue = 4096

// workerIdle is how long a background worker waits for more work before
// it exits.
const workerIdle = 10 * time.Second

// Background runs the loads that callers do not wait for (the
// revalidations of indexes still served) on at most max goroutines, queued in order. Workers are kept while there
// is work: a revalidation goes deep into the S3 client and the cache, and
// a fresh goroutine's stack grew (and was copied) several times on each.
type Background struct {
	max   int
	tasks chan func()
	wg    sync.WaitGroup // tasks queued or running

	mu      sync.Mutex
	running int
}

// NewBackground returns a pool of at most max workers.
func NewBackground(max int) *Background {
	return &Background{max: max, tasks: make(chan func(), BackgroundQueue)}
}

// Try queues f, starting a worker if fewer than max run; it reports false,
// running nothing, when the queue is full.
func (b *Background) Try(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wg.Add(1)
	select {
	case b.tasks <- f:
	default:
		b.wg.Done()
		return false
	}
	if b.running < b.max {
		b.running++
		go b.work()
	}
	return true
}

// work runs queued tasks until none comes for workerIdle. It exits only
// with the queue empty, checked under mu as try queues: a task is never
// left without a worker.
func (b *Background) work() {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-b.tasks:
			f()
			b.wg.Done()
			idle.Reset(workerIdle)
		case <-idle.C:
			b.mu.Lock()
			if len(b.tasks) > 0 {
				b.mu.Unlock()
				idle.Reset(workerIdle)
				continue
			}
			b.running--
			b.mu.Unlock()
			return
		}
	}
}

// Wait returns once every task queued before it has run.
func (b *Background) Wait() { b.wg.Wait() }
