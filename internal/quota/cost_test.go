package quota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// TestCostTable holds the table to its promise: a read served from memory
// costs a tenth of a call that lists or writes storage.
func TestCostTable(t *testing.T) {
	tests := []struct {
		name string
		reqs objstore.RequestCounts
		want float64 // in units, admission included
	}{
		{"warm read (from memory)", objstore.RequestCounts{}, 0.1},
		{"cold file read", objstore.RequestCounts{Reads: 1}, 0.2},
		{"listing of one page", objstore.RequestCounts{Lists: 1}, 1.1},
		{"write (read, then conditional put)", objstore.RequestCounts{Reads: 1, Writes: 1}, 1.2},
		{"grep over 100 files", objstore.RequestCounts{Lists: 1, Reads: 100}, 11.1},
		{"publish of 10 files", objstore.RequestCounts{Reads: 2, Writes: 11}, 11.3},
		{"cold index of 1,000 skills", objstore.RequestCounts{Lists: 1, Reads: 2000, Writes: 1}, 202.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (CallCost + StorageCost(tt.reqs)).Units(); fmt.Sprintf("%.2f", got) != fmt.Sprintf("%.2f", tt.want) {
				t.Fatalf("cost = %v units, want %v", got, tt.want)
			}
		})
	}
	if huge := StorageCost(objstore.RequestCounts{Reads: 1 << 62, Lists: 1 << 62, Writes: 1 << 62}); huge <= 0 {
		t.Fatalf("StorageCost of huge counts = %d: wrapped around", huge)
	}
}

// TestCharge: storage work charged after a call leaves the bucket in debt,
// which refuses the next calls until the rate has paid it off, and never
// more than one burst of it.
func TestCharge(t *testing.T) {
	clk := newClock()
	l := newLimiter(t, config(1, 2, 0), clk) // 2 units at once, 1 a second
	const msg = "rate limit of 1 units/s"

	mustAcquire(t, l, "alice")()
	l.Charge("alice", 2*ListCost) // 1.9 left, 2 charged: 0.1 in debt
	_, err := l.Acquire(context.Background(), "alice")
	refused(t, err, msg, 200*time.Millisecond) // debt and the call's cost
	drain(t, l, "bob", 20)                     // another user's bucket is his own

	clk.advance(200 * time.Millisecond)
	mustAcquire(t, l, "alice")()

	l.Charge("alice", 100*ListCost) // far more than the bucket: capped at one burst of debt
	_, err = l.Acquire(context.Background(), "alice")
	refused(t, err, msg, 2100*time.Millisecond)
	clk.advance(2100 * time.Millisecond)
	mustAcquire(t, l, "alice")()

	l.Charge("carol", ListCost) // not tracked: nothing to charge, nothing kept
	l.Charge("", ListCost)
	if n := l.tracked(); n != 2 {
		t.Fatalf("%d users tracked, want alice and bob", n)
	}
}

// TestInterceptorsCharge: the interceptors charge each call the storage
// requests it made (on a bucket wrapped with request counting), a stream
// when it ends.
func TestInterceptorsCharge(t *testing.T) {
	bucket := objstore.WrapWithRequestCounting(memory.New())
	list := func(ctx context.Context) error {
		_, err := bucket.List(ctx, objstore.ListOptions{})
		return err
	}
	t.Run("unary", func(t *testing.T) {
		clk := newClock()
		l := newLimiter(t, config(1, 3, 0), clk)
		lists := true
		conn := serve(t, l, func(ctx context.Context) error {
			if lists {
				return list(ctx)
			}
			return nil
		}, nil)()
		// 3 units: two listings (2.2), then eight warm calls (0.8); the
		// ninth is refused.
		wantCode(t, call(as("alice"), conn), codes.OK, "")
		wantCode(t, call(as("alice"), conn), codes.OK, "")
		lists = false
		for range 8 {
			wantCode(t, call(as("alice"), conn), codes.OK, "")
		}
		wantCode(t, call(as("alice"), conn), codes.ResourceExhausted, "rate limit of 1 units/s")
	})
	t.Run("stream", func(t *testing.T) {
		l := newLimiter(t, config(1, 1, 0), newClock())
		conn := serve(t, l, nil, func(ss grpc.ServerStream) error { return list(ss.Context()) })()
		s, err := conn.NewStream(as("alice"), &streamDesc, "/"+testService+"/Stream")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		_ = s.RecvMsg(nil) // the end of the stream
		wantCode(t, call(as("alice"), conn), codes.ResourceExhausted, "rate limit")
	})
}

// TestFairness: user A floods a server whose handlers share a backend of
// fixed capacity (4 slots, each call holding one for 10ms: the object
// storage connection pool all tenants share) while user B makes calls one
// after another, in virtual time (testing/synctest), so what is asserted
// is admissions and the backend's queue, not the CPU the machine gives.
// Capped at 2 calls in flight, A never holds more than 2 slots and B never
// waits for one; without the limits B queues behind A's 32 callers.
func TestFairness(t *testing.T) {
	const (
		service  = 10 * time.Millisecond
		slots    = 4
		flooders = 32
		capA     = 2
	)
	limited := virtualFairness(t, config(0, 0, capA), service, slots, flooders)
	if limited.maxA > capA {
		t.Errorf("A had %d calls in the backend at once, cap %d", limited.maxA, capA)
	}
	if limited.refusedA == 0 {
		t.Error("A was never refused: the flood did not reach the cap")
	}
	if limited.waitedB != 0 {
		t.Errorf("with limits, B waited for the backend in %d of %d calls, want none", limited.waitedB, limited.callsB)
	}
	unlimited := virtualFairness(t, config(0, 0, 0), service, slots, flooders)
	if unlimited.waitedB < unlimited.callsB/2 {
		t.Errorf("control: without limits, B waited in only %d of %d calls (the flood does not hurt B, so the test proves nothing)", unlimited.waitedB, unlimited.callsB)
	}
}

type virtualResult struct {
	maxA, refusedA   int64
	callsB, waitedB  int
	admittedA, listA int64
}

// virtualFairness runs A's flood and B's 100 calls in a synctest bubble.
// A's refused callers wait the retry delay they were given, as clients
// honouring RetryInfo do.
func virtualFairness(t *testing.T, cfg Config, service time.Duration, slots, flooders int) (r virtualResult) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, cfg, nil)
		backend := make(chan struct{}, slots)
		var inA, maxA, refusedA atomic.Int64
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range flooders {
			wg.Go(func() {
				for ctx.Err() == nil {
					release, err := l.Acquire(ctx, "a")
					if err != nil {
						refusedA.Add(1)
						d, _ := errkind.RetryDelay(err)
						time.Sleep(d)
						continue
					}
					backend <- struct{}{}
					n := inA.Add(1)
					for m := maxA.Load(); n > m && !maxA.CompareAndSwap(m, n); m = maxA.Load() {
					}
					time.Sleep(service)
					inA.Add(-1)
					<-backend
					release()
				}
			})
		}
		time.Sleep(time.Second) // the flood is under way
		r.callsB = 100
		for range r.callsB {
			release, err := l.Acquire(context.Background(), "b")
			if err != nil {
				t.Fatalf("B refused: %v", err)
			}
			start := time.Now()
			backend <- struct{}{}
			if time.Since(start) > 0 {
				r.waitedB++
			}
			time.Sleep(service)
			<-backend
			release()
		}
		stop()
		wg.Wait()
		r.maxA, r.refusedA = maxA.Load(), refusedA.Load()
	})
	return r
}

// TestStorageFloodHeldToShare, in virtual time: user A floods with 32
// callers of listings (each charged ListCost after its 10ms storage
// request) for 10 seconds, user C reads from memory one call after another
// as fast as it can (a host reading every SKILL.md at startup). A's
// listings are held to its rate (plus the burst and the calls in flight
// when the debt came due); C, whose reads cost a tenth, is never refused:
// 1,000 reads fit the default burst. At a flat price per call A would have
// made 32 listings every 10ms.
func TestStorageFloodHeldToShare(t *testing.T) {
	cfg := DefaultConfig()
	const (
		storage  = 10 * time.Millisecond
		flooders = 32
		run      = 10 * time.Second
	)
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, cfg, nil)
		var listings, refusedA atomic.Int64
		ctx, stop := context.WithTimeout(context.Background(), run)
		defer stop()
		var wg sync.WaitGroup
		for range flooders {
			wg.Go(func() {
				for ctx.Err() == nil {
					release, err := l.Acquire(ctx, "a")
					if err != nil {
						if !errors.Is(err, errkind.ResourceExhausted) {
							return // the run is over
						}
						refusedA.Add(1)
						d, _ := errkind.RetryDelay(err)
						time.Sleep(d)
						continue
					}
					time.Sleep(storage)
					listings.Add(1)
					l.Charge("a", ListCost)
					release()
				}
			})
		}
		for i := range 1000 {
			release, err := l.Acquire(context.Background(), "c")
			if err != nil {
				t.Fatalf("C's read %d refused: %v", i, err)
			}
			time.Sleep(time.Millisecond)
			release()
		}
		wg.Wait()
		share := (float64(cfg.Burst) + cfg.Rate*run.Seconds()) / (CallCost + ListCost).Units()
		if n := float64(listings.Load()); n > share+flooders {
			t.Errorf("A made %v listings in %v, want at most %v (its share) + %d in flight", n, run, share, flooders)
		}
		if refusedA.Load() == 0 {
			t.Error("A was never refused")
		}
		t.Logf("A: %d listings, %d refusals in %v (share %.0f)", listings.Load(), refusedA.Load(), run, share)
	})
}
