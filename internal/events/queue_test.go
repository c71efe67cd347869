package events

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/skillsvc/skillsvc/internal/layout"
)

// The queue's timing runs on synctest's clock: time moves only when every
// goroutine of the test waits, so the times below are exact.

// dropRun is one drop the queue ran: which change, when it began.
type dropRun struct {
	ch layout.Change
	at time.Duration // since the test began
}

// drops stands in for the receiver's drop: it records each run, takes
// took, and answers fail's error.
type drops struct {
	start time.Time
	took  time.Duration
	fail  func(n int) error // n: this change's runs so far, this one included

	mu                  sync.Mutex
	runs                []dropRun
	running, maxRunning int
}

func newDrops() *drops { return &drops{start: time.Now()} }

func (d *drops) drop(_ context.Context, ch layout.Change) error {
	d.mu.Lock()
	d.runs = append(d.runs, dropRun{ch, time.Since(d.start)})
	n := 0
	for _, r := range d.runs {
		if r.ch == ch {
			n++
		}
	}
	d.running++
	d.maxRunning = max(d.maxRunning, d.running)
	d.mu.Unlock()
	time.Sleep(d.took)
	d.mu.Lock()
	d.running--
	d.mu.Unlock()
	if d.fail != nil {
		return d.fail(n)
	}
	return nil
}

func (d *drops) all() []dropRun {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]dropRun(nil), d.runs...)
}

// perChange counts the runs of each change.
func (d *drops) perChange() map[layout.Change]int {
	n := map[layout.Change]int{}
	for _, r := range d.all() {
		n[r.ch]++
	}
	return n
}

// defaults is the configuration a deployment gets, changed by set.
func defaults(set func(*Config)) Config {
	var cfg Config
	cfg.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	if set != nil {
		set(&cfg)
	}
	return cfg
}

func newTestQueue(t *testing.T, cfg Config, d *drops) *dropQueue {
	t.Helper()
	q := newDropQueue(cfg, d.drop, newMetrics(nil), slog.New(slog.DiscardHandler))
	t.Cleanup(q.close)
	return q
}

func library(i int) layout.Change {
	return layout.Change{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: fmt.Sprintf("user%d", i)}}
}

// TestDropQueueCoalescesBursts: ten concurrent bursts of 1,000 events over
// 20 libraries cost two drops a library (the drop and its recheck), not one
// an event, whatever the order they came in.
func TestDropQueueCoalescesBursts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const libraries, bursts, events = 20, 10, 1000
		d := newDrops()
		q := newTestQueue(t, defaults(nil), d)
		var wg sync.WaitGroup
		for b := range bursts {
			wg.Go(func() {
				for i := range events {
					if _, err := q.add(library((b + i) % libraries)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Minute)
		for i := range libraries {
			if n := d.perChange()[library(i)]; n != 2 {
				t.Errorf("%v dropped %d times, want 2: once, and again a second after its last event", library(i).Library, n)
			}
		}
		if n := len(d.all()); n != 2*libraries {
			t.Errorf("%d drops for %d events over %d libraries, want %d", n, bursts*events, libraries, 2*libraries)
		}
		if n := testutil.ToFloat64(q.metrics.pending); n != 0 {
			t.Errorf("%v libraries still pending", n)
		}
	})
}

// TestDropQueuePace: drops start at most --events.drop-rate a second and run
// at most --events.drop-concurrency at once, however many libraries wait;
// a drop that waited its turn past a second after its event needs no
// recheck.
func TestDropQueuePace(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const libraries = 1000
			cfg := defaults(nil)
			d := newDrops()
			d.took = 10 * time.Millisecond
			q := newTestQueue(t, cfg, d)
			for i := range libraries {
				if _, err := q.add(library(i)); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Hour)
			runs := d.all()
			// In any second, the rate's worth of drops and the burst.
			limit := int(cfg.DropRate) + cfg.DropConcurrency
			for i, r := range runs {
				n := 0
				for _, s := range runs[i:] {
					if s.at < r.at+time.Second {
						n++
					}
				}
				if n > limit {
					t.Fatalf("%d drops began in the second from %v, want at most %d", n, r.at, limit)
				}
			}
			if last := runs[len(runs)-1].at; last < time.Duration(libraries-cfg.DropConcurrency)*time.Second/time.Duration(cfg.DropRate) {
				t.Errorf("%d drops done by %v: faster than %v a second", len(runs), last, cfg.DropRate)
			}
			// Those that began within a second of the events are
			// rechecked; the rest were their own recheck.
			if n := len(runs); n < libraries || n > libraries+limit {
				t.Errorf("%d drops for %d libraries, want at most %d", n, libraries, libraries+limit)
			}
		})
	})
	t.Run("concurrency", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := defaults(nil)
			d := newDrops()
			d.took = time.Second // slow storage: concurrency binds, not the rate
			q := newTestQueue(t, cfg, d)
			for i := range 50 {
				if _, err := q.add(library(i)); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Hour)
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.maxRunning != cfg.DropConcurrency {
				t.Errorf("%d drops ran at once, want %d", d.maxRunning, cfg.DropConcurrency)
			}
		})
	})
}

// TestDropQueueBound: past --events.max-pending libraries an event naming
// another is refused, while one naming a library already pending joins it;
// a burst larger than the bound over fewer libraries is all accepted and
// costs two drops a library.
func TestDropQueueBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 10
		d := newDrops()
		q := newTestQueue(t, defaults(func(c *Config) { c.MaxPending = bound }), d)
		for i := range 100 * bound {
			if _, err := q.add(library(i % bound)); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if _, err := q.add(library(bound)); !errors.Is(err, ErrOverloaded) {
			t.Fatalf("a library past the bound: %v, want ErrOverloaded", err)
		}
		if coalesced, err := q.add(library(3)); err != nil || !coalesced {
			t.Fatalf("a library pending: coalesced %v, %v", coalesced, err)
		}
		if got := q.retryAfter(); got != time.Second {
			t.Errorf("Retry-After %v for %d libraries at %v a second", got, bound, q.rate)
		}
		time.Sleep(time.Minute)
		if n := len(d.all()); n != 2*bound {
			t.Errorf("%d drops for %d events over %d libraries, want %d", n, 100*bound+1, bound, 2*bound)
		}
		if _, err := q.add(library(bound)); err != nil {
			t.Errorf("once drained: %v", err)
		}
	})
}

// TestDropQueueRechecks: a library is dropped at once, and again a second
// after its last event; events meanwhile are seen by that recheck, not
// dropped each on its own, so a library whose events go on is dropped about
// once a second.
func TestDropQueueRechecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrops()
		q := newTestQueue(t, defaults(nil), d)
		alice := library(1)
		q.add(alice)
		time.Sleep(500 * time.Millisecond)
		q.add(alice) // while its recheck waits
		time.Sleep(time.Minute)
		want := []time.Duration{0, time.Second, 1500 * time.Millisecond}
		if got := d.all(); len(got) != len(want) || got[0].at != want[0] || got[1].at != want[1] || got[2].at != want[2] {
			t.Fatalf("drops at %v, want at %v", got, want)
		}

		// Ten seconds of events, ten a second.
		d2 := newDrops()
		q.drop = d2.drop
		for range 100 {
			q.add(alice)
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Minute)
		// Each drop's recheck is due a second after the last event before
		// it ended, at most 100ms before the drop began; the last drop is a
		// second after the last event (at 9.9s), whatever came before.
		runs := d2.all()
		for i := 1; i < len(runs)-1; i++ {
			if gap := runs[i].at - runs[i-1].at; gap < 900*time.Millisecond {
				t.Fatalf("drops at %v: events every 100ms drop a library about once a second, not twice in %v", runs, gap)
			}
		}
		if last := runs[len(runs)-1].at; len(runs) < 10 || last != 10900*time.Millisecond {
			t.Errorf("drops at %v: want about one a second, the last a second after the last event", runs)
		}
	})
}

// TestDropQueueRetries: a failed drop is tried again after 1s, 2s, 4s and
// 8s, then left to polling; one that succeeds on a retry is done.
func TestDropQueueRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrops()
		d.fail = func(int) error { return errors.New("redis down") }
		q := newTestQueue(t, defaults(nil), d)
		q.add(library(1))
		time.Sleep(time.Minute)
		want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second}
		got := d.all()
		if len(got) != len(want) {
			t.Fatalf("drops at %v, want at %v", got, want)
		}
		for i := range want {
			if got[i].at != want[i] {
				t.Fatalf("drops at %v, want at %v", got, want)
			}
		}
		if n := testutil.ToFloat64(q.metrics.drops.WithLabelValues("error")); n != 5 {
			t.Errorf("drops{result=error} = %v, want 5", n)
		}
		if n := testutil.ToFloat64(q.metrics.pending); n != 0 {
			t.Errorf("%v pending after giving up", n)
		}

		d2 := newDrops()
		d2.fail = func(n int) error {
			if n == 1 {
				return errors.New("redis down")
			}
			return nil
		}
		q.drop = d2.drop
		q.add(library(2))
		time.Sleep(time.Minute)
		if n := len(d2.all()); n != 2 {
			t.Errorf("%d drops, want 2: one failed, one a second later", n)
		}
	})
}

// TestDropQueueClose: close forgets what waits, and nothing runs after.
func TestDropQueueClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrops()
		q := newDropQueue(defaults(nil), d.drop, newMetrics(nil), slog.New(slog.DiscardHandler))
		q.add(library(1))
		time.Sleep(500 * time.Millisecond) // dropped; its recheck waits
		q.close()
		time.Sleep(time.Minute)
		if n := len(d.all()); n != 1 {
			t.Errorf("%d drops, want 1: the recheck was due after close", n)
		}
		if _, err := q.add(library(2)); !errors.Is(err, errClosed) {
			t.Errorf("add after close: %v", err)
		}
	})
}
