package quota

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filewatch"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// concurrencyRetryAfter is the retry hint of a call refused for too many
// calls in flight. A slot frees when one of the user's own calls ends,
// which the limiter cannot foresee; most calls are one or a few object
// storage requests of tens of milliseconds, so after 100ms one has likely
// ended, while a client honouring the hint does not spin.
const concurrencyRetryAfter = 100 * time.Millisecond

// Limiter enforces per-user request rate and concurrency limits. It is safe
// for concurrent use.
type Limiter struct {
	defaults  limits
	overrides *filewatch.Value[map[string]limits] // nil without an overrides file
	now       func() time.Time                    // the token buckets' clock; tests set it

	mu sync.Mutex
	// recent holds users' state, least recently seen evicted first. A user
	// evicted with calls in flight moves to pinned until its last call
	// ends, so its concurrency count is never lost; pinned is bounded by
	// the calls in flight, which each hold a goroutine anyway.
	recent *simplelru.LRU[string, *entry]
	pinned map[string]*entry

	rejectedRate        prometheus.Counter
	rejectedConcurrency prometheus.Counter
	// What was charged, in tokens (hundredths of a unit), summed exactly.
	chargedCalls, chargedStorage atomic.Int64
}

// entry is one user's state. Its fields are guarded by Limiter.mu.
type entry struct {
	bucket   *rate.Limiter // nil while the user's rate is unlimited
	rate     float64       // what bucket was made for, to notice override changes
	burst    int
	inflight int
	pinned   bool
}

// New returns a Limiter enforcing cfg. With an overrides file, the file must
// parse now; later changes are picked up every cfg.ReloadInterval until
// Close. Metrics are registered on reg when it is not nil.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{
		defaults: cfg.defaults(),
		now:      time.Now,
		pinned:   make(map[string]*entry),
	}
	recent, err := simplelru.NewLRU(cfg.MaxTrackedUsers, l.evicted)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	l.recent = recent

	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skillsvc_quota_rejected_total",
		Help: "Calls refused with RESOURCE_EXHAUSTED by the per-user limits, by the limit hit: rate or concurrency.",
	}, []string{"limit"})
	// Resolved once: every series exists from the start, and a refusal
	// costs no label lookup.
	l.rejectedRate = rejected.WithLabelValues("rate")
	l.rejectedConcurrency = rejected.WithLabelValues("concurrency")
	charged := func(what string, total *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "skillsvc_quota_charged_units_total",
			Help:        "Cost charged to users' token buckets, in the unit of --limits.rate and --limits.burst, by what was paid for: call (admission) or storage (the requests a call made).",
			ConstLabels: prometheus.Labels{"for": what},
		}, func() float64 { return Cost(total.Load()).Units() })
	}
	tracked := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skillsvc_quota_tracked_users",
		Help: "Users whose limiter state is held in memory (at most max-tracked-users, plus forgotten users whose calls are still in flight).",
	}, func() float64 { return float64(l.tracked()) })

	if cfg.OverridesFile != "" {
		parse := parseOverrides(l.defaults)
		v, err := filewatch.Watch([]string{cfg.OverridesFile}, cfg.ReloadInterval, parse, log.With("component", "quota"))
		if err != nil {
			return nil, fmt.Errorf("quota: overrides file %s: %w", cfg.OverridesFile, err)
		}
		l.overrides = v
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{rejected, charged("call", &l.chargedCalls), charged("storage", &l.chargedStorage), tracked} {
			if err := reg.Register(c); err != nil {
				l.Close()
				return nil, fmt.Errorf("quota: registering metrics: %w", err)
			}
		}
	}
	return l, nil
}

// Close stops watching the overrides file. Acquire keeps working with the
// last overrides read.
func (l *Limiter) Close() {
	if l.overrides != nil {
		l.overrides.Close()
	}
}

func noRelease() {}

// Acquire admits one call of user, or refuses it at once: it never waits. An
// admitted call takes CallCost from the user's bucket and one of the
// user's concurrency slots; release gives the slot back and may be called
// more than once. What the call then spends on storage is charged after it
// ends (Charge). A refusal wraps errkind.ResourceExhausted, says which
// limit was hit, and carries the delay after which a retry may pass
// (errkind.RetryDelay); it takes nothing from the bucket. An empty user (a
// call without an identity, such as a health check) is not limited.
func (l *Limiter) Acquire(ctx context.Context, user string) (release func(), err error) {
	if user == "" {
		return noRelease, nil
	}
	lim := l.limitsFor(user)
	if lim.unlimited() {
		return noRelease, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the caller is gone; its call should cost nothing
	}
	var now time.Time
	if lim.rate > 0 {
		now = l.now()
	}

	l.mu.Lock()
	e := l.entryLocked(user, lim, now)
	if lim.concurrency > 0 && e.inflight >= lim.concurrency {
		l.mu.Unlock()
		l.rejectedConcurrency.Inc()
		err := fmt.Errorf("%w: %d concurrent requests for this user already in flight", errkind.ResourceExhausted, lim.concurrency)
		return nil, errkind.RetryAfter(err, concurrencyRetryAfter)
	}
	// AllowN changes nothing when it refuses, so a refused call (and a
	// client retrying in a tight loop) does not push the next token back.
	// A bucket in debt (Charge) refuses until it has paid it off.
	if e.bucket != nil && !e.bucket.AllowN(now, int(CallCost)) {
		wait := untilTokens(e.bucket, CallCost, lim.rate, now)
		l.mu.Unlock()
		l.rejectedRate.Inc()
		err := fmt.Errorf("%w: rate limit of %g units/s for this user exceeded", errkind.ResourceExhausted, lim.rate)
		return nil, errkind.RetryAfter(err, wait)
	}
	e.inflight++
	l.mu.Unlock()
	if e.bucket != nil {
		l.chargedCalls.Add(int64(CallCost))
	}

	released := false // guarded by l.mu
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if released {
			return
		}
		released = true
		e.inflight--
		if e.inflight == 0 && e.pinned {
			// Its last call ended: back to the LRU as the most recently
			// seen user, which may push another user out.
			e.pinned = false
			delete(l.pinned, user)
			l.recent.Add(user, e)
		}
	}, nil
}

// Charge takes cost from user's bucket after the fact, for the storage work
// a call admitted by Acquire did. The bucket may go into debt, which
// refuses the user's next calls until it is paid off at the user's rate:
// a flood of storage-heavy calls is held to its share however cheaply each
// was admitted. The debt is at most one burst, so one call, whatever it
// cost (an index build of a large shared library that its user happened
// to start), keeps its user waiting at most burst/rate. A user not tracked
// (forgotten meanwhile) or without a rate limit is charged nothing.
func (l *Limiter) Charge(user string, cost Cost) {
	if user == "" || cost <= 0 {
		return
	}
	lim := l.limitsFor(user)
	if lim.rate == 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.recent.Peek(user)
	if !ok {
		e, ok = l.pinned[user]
	}
	if !ok || e.bucket == nil {
		return
	}
	burst := e.bucket.Burst()
	room := e.bucket.TokensAt(now) + float64(burst) // down to -burst
	n := min(float64(cost), math.Floor(room))
	// ReserveN takes at most a burst at once, however far into debt it
	// goes; the reservations are kept, never waited on.
	for left := int64(n); left > 0; {
		take := min(left, int64(burst))
		e.bucket.ReserveN(now, int(take))
		left -= take
	}
	if n > 0 {
		l.chargedStorage.Add(int64(n))
	}
}

// untilTokens is how long until bucket holds need tokens at perSecond
// units a second, rounded up so a client that waits exactly that long is
// not refused again.
func untilTokens(bucket *rate.Limiter, need Cost, perSecond float64, now time.Time) time.Duration {
	missing := float64(need) - bucket.TokensAt(now)
	ns := math.Ceil(missing / (perSecond * unit) * float64(time.Second))
	switch {
	case ns < 1:
		return 1 // float rounding left the bucket a hair short
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// limitsFor returns user's limits: its override, or the defaults.
func (l *Limiter) limitsFor(user string) limits {
	if l.overrides != nil {
		if lim, ok := l.overrides.Load()[user]; ok {
			return lim
		}
	}
	return l.defaults
}

// entryLocked returns user's state, made anew when the user is not tracked,
// with its bucket brought in line with lim (an override may have changed).
func (l *Limiter) entryLocked(user string, lim limits, now time.Time) *entry {
	e, ok := l.recent.Get(user)
	if !ok {
		e, ok = l.pinned[user]
	}
	if !ok {
		e = &entry{}
		l.recent.Add(user, e)
	}
	if e.rate != lim.rate || e.burst != lim.burst {
		switch {
		case lim.rate == 0:
			e.bucket = nil
		case e.bucket == nil:
			e.bucket = rate.NewLimiter(rate.Limit(lim.rate*unit), lim.burst*unit) // full
		default:
			e.bucket.SetLimitAt(now, rate.Limit(lim.rate*unit))
			e.bucket.SetBurstAt(now, lim.burst*unit)
		}
		e.rate, e.burst = lim.rate, lim.burst
	}
	return e
}

// evicted is the LRU's eviction callback, called with l.mu held.
func (l *Limiter) evicted(user string, e *entry) {
	if e.inflight > 0 {
		e.pinned = true
		l.pinned[user] = e
	}
}

func (l *Limiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recent.Len() + len(l.pinned)
}

// UnaryServerInterceptor limits unary calls by the user key returns for
// the call's context, and charges each call's storage requests
// (objstore.CountRequests) when it ends. Chain it after authentication,
// which puts the identity key reads into the context, and inside the
// interceptor that turns errors into statuses.
func (l *Limiter) UnaryServerInterceptor(key func(ctx context.Context) string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		user := key(ctx)
		release, err := l.Acquire(ctx, user)
		if err != nil {
			return nil, err
		}
		defer release()
		ctx, reqs := objstore.CountRequests(ctx)
		defer func() { l.Charge(user, StorageCost(reqs.Counts())) }()
		return handler(ctx, req)
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streams: a stream
// pays CallCost when it opens, holds one concurrency slot until its handler
// returns, and is charged its storage requests then.
func (l *Limiter) StreamServerInterceptor(key func(ctx context.Context) string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		user := key(ctx)
		release, err := l.Acquire(ctx, user)
		if err != nil {
			return err
		}
		defer release()
		ctx, reqs := objstore.CountRequests(context.WithValue(ctx, releaseKey{}, release))
		defer func() { l.Charge(user, StorageCost(reqs.Counts())) }()
		return handler(srv, &releasingStream{ServerStream: ss, ctx: ctx})
	}
}

type releaseKey struct{}

type releasingStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *releasingStream) Context() context.Context { return s.ctx }

// Release gives back the concurrency slot the call of ctx holds, for a
// stream that lives long while doing little (WatchSkills): held, it would
// leave the user fewer slots for every other call while it stays open. The
// stream's opening still took a token; a stream so released is bounded by
// its own limits. Nothing without a slot (unlimited, or no limiter).
func Release(ctx context.Context) {
	if release, ok := ctx.Value(releaseKey{}).(func()); ok {
		release()
	}
}
