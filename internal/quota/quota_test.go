package quota

// An internal test: it drives the token buckets with a fake clock and reloads
// the overrides file on demand. It cannot use internal/server's error table,
// which imports this package; toStatus below stands in for it.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
)

// clock is a fake clock for the token buckets, advanced only between calls.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

// config returns the defaults with the given limits.
func config(rate float64, burst, concurrency int) Config {
	c := DefaultConfig()
	c.Rate, c.Burst, c.Concurrency = rate, burst, concurrency
	return c
}

func newLimiter(t testing.TB, cfg Config, clk *clock) *Limiter {
	t.Helper()
	l, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if clk != nil {
		l.now = clk.now
	}
	return l
}

// drain makes n calls of user that pass, one after another.
func drain(t *testing.T, l *Limiter, user string, n int) {
	t.Helper()
	for range n {
		mustAcquire(t, l, user)()
	}
}

func mustAcquire(t *testing.T, l *Limiter, user string) func() {
	t.Helper()
	release, err := l.Acquire(context.Background(), user)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", user, err)
	}
	return release
}

// refused checks that err is a refusal saying want, with retry hint delay,
// naming no user.
func refused(t *testing.T, err error, want string, delay time.Duration) {
	t.Helper()
	if err == nil {
		t.Fatalf("Acquire passed, want refused with %q", want)
	}
	if !errors.Is(err, errkind.ResourceExhausted) {
		t.Fatalf("err = %v, want ResourceExhausted", err)
	}
	if msg := errkind.Message(err); !strings.Contains(msg, want) {
		t.Fatalf("message = %q, want it to say %q", msg, want)
	}
	for _, u := range []string{"alice", "bob", "carol"} {
		if strings.Contains(err.Error(), u) {
			t.Fatalf("message %q names user %s", err, u)
		}
	}
	if d, ok := errkind.RetryDelay(err); !ok || d != delay {
		t.Fatalf("RetryDelay = %v, %v; want %v", d, ok, delay)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", DefaultConfig(), true},
		{"everything off", config(0, 0, 0), true},
		{"rate off ignores burst", config(0, 0, 4), true},
		{"negative rate", config(-1, 1, 1), false},
		{"NaN rate", config(math.NaN(), 1, 1), false},
		{"infinite rate", config(math.Inf(1), 1, 1), false},
		{"negative burst", config(1, -1, 1), false},
		{"rate with zero burst", config(1, 0, 1), false},
		{"burst too large", config(1, maxBurst+1, 1), false},
		{"negative concurrency", config(1, 1, -1), false},
		{"no users tracked", func() Config { c := DefaultConfig(); c.MaxTrackedUsers = 0; return c }(), false},
		{"overrides with zero interval", func() Config { c := DefaultConfig(); c.OverridesFile = "x.yaml"; c.ReloadInterval = 0; return c }(), false},
		{"zero interval without overrides", func() Config { c := DefaultConfig(); c.ReloadInterval = 0; return c }(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
			}
			if _, err := New(tt.cfg, nil, nil); err != nil && tt.ok && tt.cfg.OverridesFile == "" {
				t.Fatalf("New refused a valid config: %v", err)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	var c Config
	f := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlagsWithPrefix("limits.", f)
	if err := f.Parse([]string{"-limits.rate=2.5", "-limits.burst=5", "-limits.concurrency=0", "-limits.overrides-file=o.yaml",
		"-limits.reload-interval=1m", "-limits.max-tracked-users=7"}); err != nil {
		t.Fatal(err)
	}
	want := Config{Rate: 2.5, Burst: 5, Concurrency: 0, OverridesFile: "o.yaml", ReloadInterval: time.Minute, MaxTrackedUsers: 7}
	if c != want {
		t.Fatalf("parsed %+v, want %+v", c, want)
	}
	d := DefaultConfig()
	if want := (Config{Rate: 100, Burst: 1000, Concurrency: 32, ReloadInterval: 10 * time.Second, MaxTrackedUsers: 100000}); d != want {
		t.Fatalf("defaults %+v, want %+v", d, want)
	}
}

// TestRate steps one clock through a user's token bucket (rate 1 unit/s,
// burst 1): a call costs a tenth of a unit, so 10 calls a second and 10 at
// once. Refused calls take nothing: after any number of them, the next
// call is still due when it was.
func TestRate(t *testing.T) {
	clk := newClock()
	l := newLimiter(t, config(1, 1, 0), clk)
	const msg = "rate limit of 1 units/s for this user exceeded"
	steps := []struct {
		name    string
		advance time.Duration
		user    string
		calls   int           // consecutive Acquires
		pass    int           // how many of them pass, the first ones
		delay   time.Duration // retry hint of the refused ones
	}{
		{"burst passes", 0, "alice", 10, 10, 0},
		{"then refused until the next call's cost", 0, "alice", 5, 0, 100 * time.Millisecond},
		{"another user is unaffected", 0, "bob", 10, 10, 0},
		{"half way to the token", 50 * time.Millisecond, "alice", 100, 0, 50 * time.Millisecond},
		{"refusals took no token", 50 * time.Millisecond, "alice", 2, 1, 100 * time.Millisecond},
		{"refill is capped at the burst", time.Hour, "alice", 11, 10, 100 * time.Millisecond},
		{"a fraction of a token rounds the hint up", 33 * time.Millisecond, "alice", 1, 0, 67 * time.Millisecond},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clk.advance(s.advance)
			for i := range s.calls {
				release, err := l.Acquire(context.Background(), s.user)
				if i < s.pass {
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					release()
					continue
				}
				refused(t, err, msg, s.delay)
			}
		})
	}
}

// TestConcurrency: a user's calls in flight are capped, a release frees a
// slot once however often it is called, and neither limit's refusal takes
// from the other.
func TestConcurrency(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		l := newLimiter(t, config(0, 0, 2), nil)
		const msg = "2 concurrent requests for this user already in flight"
		r1 := mustAcquire(t, l, "alice")
		r2 := mustAcquire(t, l, "alice")
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, msg, concurrencyRetryAfter)
		mustAcquire(t, l, "bob")()
		r1()
		r3 := mustAcquire(t, l, "alice")
		r1() // again: must not free r2's or r3's slot
		_, err = l.Acquire(context.Background(), "alice")
		refused(t, err, msg, concurrencyRetryAfter)
		r2()
		r3()
		mustAcquire(t, l, "alice")
		mustAcquire(t, l, "alice")
	})
	t.Run("refusals take nothing from the other limit", func(t *testing.T) {
		clk := newClock()
		l := newLimiter(t, config(1, 1, 1), clk)
		r1 := mustAcquire(t, l, "alice") // 9 calls' worth left
		for range 10 {
			_, err := l.Acquire(context.Background(), "alice")
			refused(t, err, "1 concurrent requests", concurrencyRetryAfter)
		}
		r1()
		drain(t, l, "alice", 9) // the rest: concurrency refusals took nothing
		for range 10 {
			_, err := l.Acquire(context.Background(), "alice")
			refused(t, err, "rate limit of 1 units/s", 100*time.Millisecond)
		}
		clk.advance(100 * time.Millisecond)
		mustAcquire(t, l, "alice") // rate refusals held no slot
	})
}

func TestNotLimited(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		user string
	}{
		{"limits off", config(0, 0, 0), "alice"},
		{"no identity", config(1, 1, 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, tt.cfg, newClock())
			for range 1000 {
				mustAcquire(t, l, tt.user) // never released
			}
			if n := l.tracked(); n != 0 {
				t.Fatalf("%d users tracked, want none", n)
			}
		})
	}
	t.Run("cancelled call", func(t *testing.T) {
		l := newLimiter(t, config(1, 1, 1), newClock())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Acquire(ctx, "alice"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v, want Canceled", err)
		}
		mustAcquire(t, l, "alice") // the cancelled call took no token
	})
}

func TestOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overrides.yaml")
	filewatchtest.Replace(t, path, `
users:
  alice: {concurrency: 1}
  bob: {rate: 0}
  carol:
`)
	cfg := config(1, 2, 2) // 20 calls at once, 10 a second
	cfg.OverridesFile = path
	cfg.ReloadInterval = time.Hour // reloaded by hand below
	clk := newClock()
	l := newLimiter(t, cfg, clk)
	reload := func(t *testing.T, content string, wantErr bool) {
		t.Helper()
		filewatchtest.Replace(t, path, content)
		changed, err := l.overrides.Check()
		if wantErr != (err != nil) || changed == wantErr {
			t.Fatalf("Check = %v, %v; want an error %v", changed, err, wantErr)
		}
	}

	var held []func()
	t.Run("file applies", func(t *testing.T) {
		held = append(held, mustAcquire(t, l, "alice"))
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, "1 concurrent requests", concurrencyRetryAfter)
		for range 20 {
			mustAcquire(t, l, "bob")() // rate off for bob only
		}
		mustAcquire(t, l, "carol")() // listed without fields: the defaults
		mustAcquire(t, l, "carol")()
		held = append(held, mustAcquire(t, l, "dave"), mustAcquire(t, l, "dave"))
		_, err = l.Acquire(context.Background(), "dave")
		refused(t, err, "2 concurrent requests", concurrencyRetryAfter)
	})
	t.Run("a change applies to a tracked user", func(t *testing.T) {
		reload(t, "users: {alice: {concurrency: 3}}", false)
		held = append(held, mustAcquire(t, l, "alice"), mustAcquire(t, l, "alice")) // 3 in flight
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, "3 concurrent requests", concurrencyRetryAfter)
	})
	t.Run("a bad change keeps the previous overrides", func(t *testing.T) {
		reload(t, "users: {alice: {concurrency: 1, colour: red}}", true)
		reload(t, "users: {alice: {concurrency: -1}}", true)
		reload(t, "users: [", true)
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, "3 concurrent requests", concurrencyRetryAfter)
		for _, release := range held {
			release()
		}
	})
	t.Run("a rate change keeps the bucket's level", func(t *testing.T) {
		// alice has made 3 calls of her 20; she makes the rest.
		drain(t, l, "alice", 17)
		reload(t, "users: {alice: {rate: 0.1, burst: 1}}", false)
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, "rate limit of 0.1 units/s", time.Second)
		clk.advance(time.Second)
		mustAcquire(t, l, "alice")()
	})
	t.Run("a user taken out gets the defaults", func(t *testing.T) {
		reload(t, "", false)
		clk.advance(time.Hour)
		drain(t, l, "alice", 10) // her bucket held 1 unit, its old burst
		_, err := l.Acquire(context.Background(), "alice")
		refused(t, err, "rate limit of 1 units/s", 100*time.Millisecond)
		clk.advance(time.Hour)
		drain(t, l, "alice", 20)
		_, err = l.Acquire(context.Background(), "alice")
		refused(t, err, "rate limit of 1 units/s", 100*time.Millisecond)
	})
}

// TestOverridesPolled: New wires the reload interval; nobody calls Check.
func TestOverridesPolled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overrides.yaml")
	filewatchtest.Replace(t, path, "users: {alice: {concurrency: 1}}")
	cfg := config(0, 0, 2)
	cfg.OverridesFile = path
	cfg.ReloadInterval = 5 * time.Millisecond
	l := newLimiter(t, cfg, nil)
	filewatchtest.Replace(t, path, "users: {alice: {concurrency: 5}}")
	deadline := time.Now().Add(10 * time.Second)
	for l.limitsFor("alice").concurrency != 5 {
		if time.Now().After(deadline) {
			t.Fatal("the changed overrides file was not applied within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBadOverridesFile(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{"not YAML", "users: {alice"},
		{"not a mapping", "- alice"},
		{"unknown top-level field", "user: {alice: {rate: 1}}"},
		{"unknown user field", "users: {alice: {rps: 1}}"},
		{"wrong type", "users: {alice: {concurrency: many}}"},
		{"user not a mapping", "users: {alice: 5}"},
		{"empty user name", `users: {"": {rate: 1}}`},
		{"negative rate", "users: {alice: {rate: -1}}"},
		{"NaN rate", "users: {alice: {rate: .nan}}"},
		{"infinite rate", "users: {alice: {rate: .inf}}"},
		{"negative burst", "users: {alice: {burst: -1}}"},
		{"zero burst with a rate", "users: {alice: {burst: 0}}"},
		{"negative concurrency", "users: {alice: {concurrency: -2}}"},
		{"duplicate user", "users: {alice: {rate: 1}, alice: {rate: 2}}"},
		{"two documents", "users: {alice: {rate: 1}}\n---\nusers: {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "overrides.yaml")
			filewatchtest.Replace(t, path, tt.content)
			cfg := DefaultConfig()
			cfg.OverridesFile = path
			l, err := New(cfg, nil, nil)
			if err == nil {
				l.Close()
				t.Fatal("New accepted it")
			}
			if !errors.Is(err, ErrInvalidOverrides) || !strings.Contains(err.Error(), path) {
				t.Fatalf("New = %v, want ErrInvalidOverrides naming the file", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.OverridesFile = filepath.Join(t.TempDir(), "missing.yaml")
		if _, err := New(cfg, nil, nil); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("New = %v, want not exist", err)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "overrides.yaml")
		filewatchtest.Replace(t, path, "# nobody yet\n")
		cfg := DefaultConfig()
		cfg.OverridesFile = path
		newLimiter(t, cfg, nil)
	})
}

// TestEviction: with room for 2 users, a user whose call is in flight keeps
// its count while others churn through; idle users are forgotten.
func TestEviction(t *testing.T) {
	cfg := config(1, 1, 1) // 10 calls at once
	cfg.MaxTrackedUsers = 2
	clk := newClock()
	l := newLimiter(t, cfg, clk)

	release := mustAcquire(t, l, "alice") // her only slot, a tenth of her bucket
	for i := range 10 {
		mustAcquire(t, l, fmt.Sprint("churn", i))()
	}
	if n := l.tracked(); n != 3 {
		t.Fatalf("%d users tracked, want 2 plus alice in flight", n)
	}
	_, err := l.Acquire(context.Background(), "alice")
	refused(t, err, "1 concurrent requests", concurrencyRetryAfter)
	release()
	if n := l.tracked(); n != 2 {
		t.Fatalf("%d users tracked after alice's call ended, want 2", n)
	}
	// alice is tracked again as the most recent user, bucket and all.
	drain(t, l, "alice", 9)
	_, err = l.Acquire(context.Background(), "alice")
	refused(t, err, "rate limit", 100*time.Millisecond)

	// An idle user pushed out starts again with a full bucket.
	mustAcquire(t, l, "churn0")()
	mustAcquire(t, l, "churn1")()
	drain(t, l, "alice", 10)
}

// TestEvictionModel runs random acquires and releases of 12 users through a
// limiter that tracks 3 and checks every answer against a plain count of
// calls in flight, which never forgets anyone.
func TestEvictionModel(t *testing.T) {
	const users, capacity, limit = 12, 3, 2
	cfg := config(0, 0, limit)
	cfg.MaxTrackedUsers = capacity
	l := newLimiter(t, cfg, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	held := make([][]func(), users)
	for step := range 20000 {
		u := rng.IntN(users)
		user := fmt.Sprint("user", u)
		if len(held[u]) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(held[u]))
			held[u][i]()
			held[u][i]() // idempotent
			held[u] = slices.Delete(held[u], i, i+1)
			continue
		}
		release, err := l.Acquire(context.Background(), user)
		if want := len(held[u]) < limit; want != (err == nil) {
			t.Fatalf("step %d: %s with %d in flight: Acquire = %v, want pass %v", step, user, len(held[u]), err, want)
		}
		if err == nil {
			held[u] = append(held[u], release)
		}
		inflight := 0
		for _, h := range held {
			if len(h) > 0 {
				inflight++
			}
		}
		if n := l.tracked(); n > capacity+inflight {
			t.Fatalf("step %d: %d users tracked, more than %d plus the %d with calls in flight", step, n, capacity, inflight)
		}
		for user, e := range l.pinned {
			if e.inflight == 0 {
				t.Fatalf("step %d: %s kept outside the LRU with no call in flight", step, user)
			}
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	l, err := New(config(1, 1, 1), nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	l.now = newClock().now
	expect := func(rate, concurrency, tracked int, calls, storage string) {
		t.Helper()
		want := fmt.Sprintf(`
# HELP skillsvc_quota_charged_units_total Cost charged to users' token buckets, in the unit of --limits.rate and --limits.burst, by what was paid for: call (admission) or storage (the requests a call made).
# TYPE skillsvc_quota_charged_units_total counter
skillsvc_quota_charged_units_total{for="call"} %s
skillsvc_quota_charged_units_total{for="storage"} %s
# HELP skillsvc_quota_rejected_total Calls refused with RESOURCE_EXHAUSTED by the per-user limits, by the limit hit: rate or concurrency.
# TYPE skillsvc_quota_rejected_total counter
skillsvc_quota_rejected_total{limit="concurrency"} %d
skillsvc_quota_rejected_total{limit="rate"} %d
# HELP skillsvc_quota_tracked_users Users whose limiter state is held in memory (at most max-tracked-users, plus forgotten users whose calls are still in flight).
# TYPE skillsvc_quota_tracked_users gauge
skillsvc_quota_tracked_users %d
`, calls, storage, concurrency, rate, tracked)
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
			t.Fatal(err)
		}
	}
	expect(0, 0, 0, "0", "0") // every series from the start
	release := mustAcquire(t, l, "alice")
	_, _ = l.Acquire(context.Background(), "alice")
	_, _ = l.Acquire(context.Background(), "alice")
	release()
	l.Charge("alice", ListCost/2) // half her bucket
	drain(t, l, "alice", 4)
	_, _ = l.Acquire(context.Background(), "alice")
	mustAcquire(t, l, "bob")()
	expect(1, 2, 2, "0.6", "0.5")

	if _, err := New(DefaultConfig(), nil, reg); err == nil {
		t.Fatal("a second limiter on the same registry: no error")
	}
}

// The gRPC test service: a unary Call and a bidirectional Stream, each
// running the handler given to serve, behind the quota interceptors.

const testService = "skillsvc.quotatest.Test"

var streamDesc = grpc.StreamDesc{StreamName: "Stream", ServerStreams: true, ClientStreams: true}

// userKey is the interceptors' key in tests: the x-user metadata.
func userKey(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, "x-user"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// toStatus stands in for internal/server's error table.
func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errkind.ResourceExhausted):
		return status.Error(codes.ResourceExhausted, errkind.Message(err))
	}
	return status.FromContextError(err).Err()
}

// serve starts a server whose Call runs unary and whose Stream runs stream,
// and returns a function dialling a new connection to it.
func serve(t testing.TB, l *Limiter, unary func(context.Context) error, stream func(grpc.ServerStream) error) (dial func() *grpc.ClientConn) {
	t.Helper()
	return serveWith(t, l.UnaryServerInterceptor(userKey), l.StreamServerInterceptor(userKey), unary, stream)
}

func serveWith(t testing.TB, ui grpc.UnaryServerInterceptor, si grpc.StreamServerInterceptor, unary func(context.Context) error, stream func(grpc.ServerStream) error) (dial func() *grpc.ClientConn) {
	t.Helper()
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(
			func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				resp, err := h(ctx, req)
				return resp, toStatus(err)
			},
			ui),
		grpc.ChainStreamInterceptor(
			func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				return toStatus(h(srv, ss))
			},
			si),
	)
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: testService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Call",
			Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(new(emptypb.Empty)); err != nil {
					return nil, err
				}
				h := func(ctx context.Context, _ any) (any, error) {
					if err := unary(ctx); err != nil {
						return nil, err
					}
					return &emptypb.Empty{}, nil
				}
				return interceptor(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/" + testService + "/Call"}, h)
			},
		}},
		Streams: []grpc.StreamDesc{{
			StreamName:    streamDesc.StreamName,
			Handler:       func(_ any, ss grpc.ServerStream) error { return stream(ss) },
			ServerStreams: true,
			ClientStreams: true,
		}},
	}, struct{}{})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return func() *grpc.ClientConn {
		conn, err := grpc.NewClient("passthrough:///bufconn",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
}

func as(user string) context.Context {
	if user == "" {
		return context.Background()
	}
	return metadata.AppendToOutgoingContext(context.Background(), "x-user", user)
}

func call(ctx context.Context, conn *grpc.ClientConn) error {
	return conn.Invoke(ctx, "/"+testService+"/Call", &emptypb.Empty{}, new(emptypb.Empty))
}

// wantCode checks err's status code, and for RESOURCE_EXHAUSTED its message.
func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	s := status.Convert(err)
	if s.Code() != code || !strings.Contains(s.Message(), msg) {
		t.Fatalf("status = %v %q, want %v %q", s.Code(), s.Message(), code, msg)
	}
}

// rig is a server behind the quota interceptors whose handlers return at
// once, or, for calls with x-hold metadata, once the test lets them go.
type rig struct {
	conn    *grpc.ClientConn
	clk     *clock
	entered chan struct{} // a held handler is running
	letGo   func()        // ends every held handler, now and later
}

func newRig(t *testing.T, cfg Config) *rig {
	r := &rig{clk: newClock(), entered: make(chan struct{}, 16)}
	proceed := make(chan struct{})
	r.letGo = sync.OnceFunc(func() { close(proceed) })
	hold := func(ctx context.Context) {
		if metadata.ValueFromIncomingContext(ctx, "x-hold") != nil {
			r.entered <- struct{}{}
			<-proceed
		}
	}
	r.conn = serve(t, newLimiter(t, cfg, r.clk),
		func(ctx context.Context) error { hold(ctx); return nil },
		func(ss grpc.ServerStream) error {
			hold(ss.Context())
			for {
				if err := ss.RecvMsg(new(emptypb.Empty)); err != nil {
					return nil // the client closed its side
				}
			}
		})()
	t.Cleanup(r.letGo) // before the server stops: a failed test leaves no handler behind
	return r
}

func held(user string) context.Context {
	return metadata.AppendToOutgoingContext(as(user), "x-hold", "1")
}

// TestInterceptors runs the limits behind a real gRPC server: a unary call
// holds its slot while its handler runs, a stream for its whole life, and
// refusals arrive as RESOURCE_EXHAUSTED.
func TestInterceptors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		run  func(t *testing.T, r *rig)
	}{
		{"unary call holds its slot while it runs", config(0, 0, 1), func(t *testing.T, r *rig) {
			done := make(chan error, 1)
			go func() { done <- call(held("alice"), r.conn) }()
			<-r.entered
			wantCode(t, call(as("alice"), r.conn), codes.ResourceExhausted, "1 concurrent requests for this user already in flight")
			wantCode(t, call(as("bob"), r.conn), codes.OK, "")
			r.letGo()
			wantCode(t, <-done, codes.OK, "")
			// The slot is free once the client has the answer.
			wantCode(t, call(as("alice"), r.conn), codes.OK, "")
		}},
		{"a stream holds its slot until it ends", config(1, 1, 1), func(t *testing.T, r *rig) {
			s, err := r.conn.NewStream(held("alice"), &streamDesc, "/"+testService+"/Stream")
			if err != nil {
				t.Fatal(err)
			}
			<-r.entered
			r.letGo()
			for range 5 {
				if err := s.SendMsg(&emptypb.Empty{}); err != nil {
					t.Fatal(err)
				}
			}
			wantCode(t, call(as("alice"), r.conn), codes.ResourceExhausted, "1 concurrent requests")
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if err := s.RecvMsg(new(emptypb.Empty)); !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v", err)
			}
			// One call's cost for the stream and its 5 messages, 9 for calls.
			for range 9 {
				wantCode(t, call(as("alice"), r.conn), codes.OK, "")
			}
			wantCode(t, call(as("alice"), r.conn), codes.ResourceExhausted, "rate limit of 1 units/s for this user exceeded")
		}},
		{"a refused stream", config(1, 1, 0), func(t *testing.T, r *rig) {
			for range 10 {
				wantCode(t, call(as("alice"), r.conn), codes.OK, "")
			}
			s, err := r.conn.NewStream(as("alice"), &streamDesc, "/"+testService+"/Stream")
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, s.RecvMsg(new(emptypb.Empty)), codes.ResourceExhausted, "rate limit of 1 units/s")
			r.clk.advance(100 * time.Millisecond)
			wantCode(t, call(as("alice"), r.conn), codes.OK, "")
		}},
		{"calls without an identity are not limited", config(1, 1, 1), func(t *testing.T, r *rig) {
			for range 20 {
				wantCode(t, call(as(""), r.conn), codes.OK, "")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newRig(t, tt.cfg)) })
	}
}

// BenchmarkFairness is the latency claim behind TestFairness, over a real
// gRPC server and the wall clock: user A floods a server whose handlers
// share a backend of fixed capacity (4 slots, each call holding one for
// 10ms: the object storage connection pool all tenants share) while user B
// makes calls one after another. It reports B's p50 and p99 with A capped
// at 2 calls in flight, and without limits (where B queues behind A's 32
// callers, about 8 service times a call). Latency depends on the CPU the
// machine gives the test, so it is measured here, not asserted.
func BenchmarkFairness(b *testing.B) {
	const (
		service  = 10 * time.Millisecond
		slots    = 4
		flooders = 32
	)
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"capped", config(0, 0, 2)},
		{"unlimited", config(0, 0, 0)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := fairness(b, bc.cfg, service, slots, flooders, max(b.N, 20))
			b.ReportMetric(float64(r.p50)/float64(time.Millisecond), "p50-ms")
			b.ReportMetric(float64(r.p99)/float64(time.Millisecond), "p99-ms")
			b.ReportMetric(float64(r.refusedA), "refused-A")
		})
	}
}

type fairnessResult struct {
	calls    int
	p50, p99 time.Duration // nearest rank
	maxA     int64         // most of A's calls in the backend at once
	refusedA int64
}

func fairness(t testing.TB, cfg Config, service time.Duration, slots, flooders, calls int) fairnessResult {
	t.Helper()
	l := newLimiter(t, cfg, nil)
	backend := make(chan struct{}, slots)
	var inA, maxA, servedA atomic.Int64
	flooding := make(chan struct{})
	dial := serve(t, l, func(ctx context.Context) error {
		select {
		case backend <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-backend }()
		if userKey(ctx) == "a" {
			n := inA.Add(1)
			defer inA.Add(-1)
			for m := maxA.Load(); n > m; m = maxA.Load() {
				if maxA.CompareAndSwap(m, n) {
					break
				}
			}
			if servedA.Add(1) == int64(flooders) {
				close(flooding)
			}
		}
		time.Sleep(service) // the storage request
		return nil
	}, nil)
	// Tenants on their own connections, as they would be; B's is set up
	// before it is timed.
	connA, connB := dial(), dial()
	if err := call(as("b"), connB); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var refusedA atomic.Int64
	for range flooders {
		wg.Go(func() {
			for ctx.Err() == nil {
				err := call(metadata.AppendToOutgoingContext(ctx, "x-user", "a"), connA)
				switch status.Code(err) {
				case codes.OK, codes.Canceled:
				case codes.ResourceExhausted:
					refusedA.Add(1) // and again at once
				default:
					t.Errorf("A's call: %v", err)
					return
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	select {
	case <-flooding:
	case <-time.After(10 * time.Second):
		t.Fatal("A's flood did not start within 10s")
	}

	latencies := make([]time.Duration, calls)
	for i := range latencies {
		ctx, cancel := context.WithTimeout(as("b"), 10*time.Second)
		start := time.Now()
		err := call(ctx, connB)
		latencies[i] = time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("B's call: %v", err)
		}
	}
	stop()
	wg.Wait()
	slices.Sort(latencies)
	return fairnessResult{
		calls:    calls,
		p50:      latencies[(calls*50+99)/100-1],
		p99:      latencies[(calls*99+99)/100-1],
		maxA:     maxA.Load(),
		refusedA: refusedA.Load(),
	}
}

// BenchmarkAcquire measures an admitted call's Acquire and release, from
// many goroutines, for one hot user, many users, and more users than are
// tracked (every call evicts one).
func BenchmarkAcquire(b *testing.B) {
	for _, bc := range []struct {
		name    string
		users   int
		tracked int
	}{
		{"users=1", 1, 100000},
		{"users=10000", 10000, 100000},
		{"users=200000/evicting", 200000, 100000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := config(1e9, 1e9, 32) // high enough to admit every call
			cfg.MaxTrackedUsers = bc.tracked
			l := newLimiter(b, cfg, nil)
			users := make([]string, bc.users)
			for i := range users {
				users[i] = fmt.Sprint("user", i)
			}
			var seed atomic.Uint64
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seed.Add(1), 0))
				for pb.Next() {
					release, err := l.Acquire(ctx, users[rng.IntN(len(users))])
					if err != nil {
						b.Error(err)
						return
					}
					release()
				}
			})
		})
	}
}
