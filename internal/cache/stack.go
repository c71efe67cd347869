package cache

import (
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// New builds the cache stack cfg asks for, instrumented on reg (nil: not
// registered): the LRU alone when Redis has no address, otherwise
// Tiered(LRU, Breaker(Redis)) with the LRU keeping items at most
// cfg.LRU.MaxTTL and the Redis level traced (WithTracing). It does not wait for Redis: a Redis that is down at start
// only opens the breaker. With Redis, go-redis's own log lines go to log
// at debug level (none when log is nil). Close the cache on shutdown.
func New(cfg Config, reg prometheus.Registerer, log *slog.Logger) (Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	} else if cfg.Redis.Enabled() {
		routeRedisLog(log)
	}
	lru := NewLRU(cfg.LRU.MaxBytes)
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillsvc_cache_lru_items",
			Help: "Items in the in-process cache, expired ones not yet evicted included.",
		}, func() float64 { return float64(lru.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillsvc_cache_lru_bytes",
			Help: "Bytes charged for the items in the in-process cache (keys, values and a fixed cost per item).",
		}, func() float64 { return float64(lru.Bytes()) }),
	)
	if !cfg.Redis.Enabled() {
		m := newMetrics(reg, levelLRU)
		log.Info("cache: in process only", "max_bytes", cfg.LRU.MaxBytes)
		return m.wrap(lru, levelLRU), nil
	}
	red, err := NewRedis(cfg.Redis)
	if err != nil {
		return nil, err
	}
	foreign := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "skillsvc_cache_foreign_values_total",
		Help: "Values read from Redis that another deployment wrote (framed with another storage's keyspace, or none), refused as misses.",
	})
	reg.MustRegister(foreign)
	red.foreign = foreign.Inc
	breaker := NewBreaker(red, cfg.Redis.Breaker, log)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skillsvc_cache_breaker_state",
		Help: "State of the circuit breaker in front of Redis: 0 closed, 1 half-open, 2 open.",
	}, func() float64 { return float64(breaker.State()) }))
	m := newMetrics(reg, levelLRU, levelRedis)
	log.Info("cache: in process in front of Redis", "addrs", strings.Join(cfg.Redis.Addrs, ","), "keyspace", cfg.Redis.Keyspace.String(),
		"max_bytes", cfg.LRU.MaxBytes, "lru_max_ttl", cfg.LRU.MaxTTL)
	// Traced at the Redis level only: a span per round trip (or refusal),
	// none for the in-process hits.
	return NewTiered(m.wrap(lru, levelLRU), m.wrap(WithTracing(breaker, levelRedis), levelRedis), cfg.LRU.MaxTTL), nil
}
