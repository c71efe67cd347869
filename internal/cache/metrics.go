package cache

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Operation and level label values.
const (
	opFetch  = "fetch"
	opStore  = "store"
	opDelete = "delete"
	opLock   = "lock"

	levelLRU   = "lru"
	levelRedis = "redis"
)

var allOps = []string{opFetch, opStore, opDelete, opLock}

type metrics struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	hits     *prometheus.CounterVec
	misses   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, levels ...string) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_cache_requests_total",
			Help: "Cache calls started, by operation and level (lru or redis).",
		}, []string{"operation", "level"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_cache_errors_total",
			Help: "Cache calls that failed, including those an open breaker refused; cancelled calls are not counted.",
		}, []string{"operation", "level"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "skillsvc_cache_request_duration_seconds",
			Help:    "Duration of cache calls.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1},
		}, []string{"operation", "level"}),
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_cache_hits_total",
			Help: "Keys fetched that were cached, by level.",
		}, []string{"level"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_cache_misses_total",
			Help: "Keys fetched that were not cached (or whose level failed), by level.",
		}, []string{"level"}),
	}
	// Every label exists from the start, so rates are defined before traffic.
	for _, level := range levels {
		for _, op := range allOps {
			m.requests.WithLabelValues(op, level)
			m.errors.WithLabelValues(op, level)
			m.duration.WithLabelValues(op, level)
		}
		m.hits.WithLabelValues(level)
		m.misses.WithLabelValues(level)
	}
	reg.MustRegister(m.requests, m.errors, m.duration, m.hits, m.misses)
	return m
}

// instrumented counts and times the calls of one level.
type instrumented struct {
	c      Cache
	level  string
	m      *metrics
	hits   prometheus.Counter
	misses prometheus.Counter
}

func (m *metrics) wrap(c Cache, level string) Cache {
	return &instrumented{c: c, level: level, m: m, hits: m.hits.WithLabelValues(level), misses: m.misses.WithLabelValues(level)}
}

// track starts timing op; done records the outcome.
func (i *instrumented) track(op string) (done func(error)) {
	i.m.requests.WithLabelValues(op, i.level).Inc()
	start := time.Now()
	return func(err error) {
		i.m.duration.WithLabelValues(op, i.level).Observe(time.Since(start).Seconds())
		if err != nil && !errors.Is(err, context.Canceled) {
			i.m.errors.WithLabelValues(op, i.level).Inc()
		}
	}
}

func (i *instrumented) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	done := i.track(opFetch)
	hits, err := i.c.Fetch(ctx, keys)
	done(err)
	if !errors.Is(err, context.Canceled) {
		i.hits.Add(float64(len(hits)))
		i.misses.Add(float64(len(keys) - len(hits)))
	}
	return hits, err
}

func (i *instrumented) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	done := i.track(opStore)
	err := i.c.Store(ctx, items, ttl)
	done(err)
	return err
}

func (i *instrumented) Delete(ctx context.Context, keys ...string) error {
	done := i.track(opDelete)
	err := i.c.Delete(ctx, keys...)
	done(err)
	return err
}

func (i *instrumented) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	done := i.track(opLock)
	unlock, ok, err := i.c.TryLock(ctx, key, ttl)
	done(err)
	return unlock, ok, err
}

func (i *instrumented) Close() error { return i.c.Close() }
