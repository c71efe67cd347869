package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/cache/cachetest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// spanned runs every call of c inside a span of tp, as a traced request
// would.
type spanned struct {
	c  cache.Cache
	tp trace.TracerProvider
}

func (s spanned) ctx(ctx context.Context) context.Context {
	ctx, span := s.tp.Tracer("test").Start(ctx, "request")
	span.End() // the span only needs to be in the context
	return ctx
}

func (s spanned) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	return s.c.Fetch(s.ctx(ctx), keys)
}

func (s spanned) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	return s.c.Store(s.ctx(ctx), items, ttl)
}

func (s spanned) Delete(ctx context.Context, keys ...string) error {
	return s.c.Delete(s.ctx(ctx), keys...)
}

func (s spanned) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	return s.c.TryLock(s.ctx(ctx), key, ttl)
}

func (s spanned) Close() error { return s.c.Close() }

// newReplica is the stack New builds on the shared Redis: a replica of
// its own, with keys under redis.KeyPrefix.
func newReplica(t *testing.T, redis cache.RedisConfig) cache.Cache {
	cfg := cache.DefaultConfig()
	cfg.Redis = redis
	c, err := cache.New(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// TestConformanceTraced: the stack New builds behaves the same with every
// call traced.
func TestConformanceTraced(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	cachetest.Run(t, func(t *testing.T) cache.Cache {
		return spanned{newReplica(t, redisConfig(testserver.SharedRedis(t).Addr)), tp}
	})
}

// TestTracingSpans: in the stack New builds, each call that reaches Redis
// is a client span under the caller's, with its key count and hits; what
// the in-process level answers, and calls outside a span, are not traced.
func TestTracingSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	redis := redisConfig(testserver.SharedRedis(t).Addr)
	c, other := newReplica(t, redis), newReplica(t, redis)
	defer c.Close()
	defer other.Close()

	// Another replica's value: in Redis, not in c's process.
	if err := other.Store(context.Background(), map[string][]byte{"a": []byte("1")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Fetch(context.Background(), []string{"nothing"}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans for a call outside any span, want none", n)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	defer parent.End()
	if err := c.Store(ctx, map[string][]byte{"b": []byte("22")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if hits, err := c.Fetch(ctx, []string{"b"}); err != nil || len(hits) != 1 {
		t.Fatalf("Fetch(b) = %v, %v", hits, err)
	}
	// a is in Redis and missing is nowhere: one round trip for both.
	if hits, err := c.Fetch(ctx, []string{"a", "b", "missing"}); err != nil || len(hits) != 2 {
		t.Fatalf("Fetch(a, b, missing) = %v, %v", hits, err)
	}
	unlock, ok, err := c.TryLock(ctx, "lock", time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	unlock()

	want := []struct {
		name  string
		attrs map[attribute.Key]attribute.Value
	}{
		{"cache.store", map[attribute.Key]attribute.Value{"cache.keys": attribute.IntValue(1), "cache.bytes": attribute.IntValue(2)}},
		{"cache.fetch", map[attribute.Key]attribute.Value{"cache.keys": attribute.IntValue(2), "cache.hits": attribute.IntValue(1)}},
		{"cache.lock", map[attribute.Key]attribute.Value{"cache.locked": attribute.BoolValue(true)}},
	}
	ended := rec.Ended()
	if len(ended) != len(want) {
		var names []string
		for _, s := range ended {
			names = append(names, s.Name())
		}
		t.Fatalf("spans %q, want %d: one per Redis call", names, len(want))
	}
	for i, w := range want {
		s := ended[i]
		if s.Name() != w.name || s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %d = %q (kind %v), want client span %q under the request", i, s.Name(), s.SpanKind(), w.name)
		}
		got := map[attribute.Key]attribute.Value{}
		for _, a := range s.Attributes() {
			got[a.Key] = a.Value
		}
		w.attrs["cache.level"] = attribute.StringValue("redis")
		for k, v := range w.attrs {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", w.name, k, got[k].Emit(), v.Emit())
			}
		}
	}
}
