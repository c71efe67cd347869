package cache

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/tracing"
)

// traced gives every call of a cache level a client span named
// "cache.<operation>" under the span in its context (none without one),
// with the level, the number of keys and, for a fetch, of hits. New wraps
// the Redis level with it, so a trace shows each round trip to Redis (or
// each call the breaker refused) and not the in-process hits.
type traced struct {
	c     Cache
	level string
}

// WithTracing wraps c, whose calls are those of level (say "redis"), with
// spans.
func WithTracing(c Cache, level string) Cache { return &traced{c: c, level: level} }

func (t *traced) start(ctx context.Context, op string, keys int) (context.Context, trace.Span) {
	return tracing.Child(ctx, "cache."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("cache.level", t.level), attribute.Int("cache.keys", keys)))
}

// fine are the outcomes that are no failure of the cache.
func fine(err error) bool { return errors.Is(err, context.Canceled) }

func (t *traced) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	ctx, span := t.start(ctx, opFetch, len(keys))
	hits, err := t.c.Fetch(ctx, keys)
	span.SetAttributes(attribute.Int("cache.hits", len(hits)))
	tracing.End(span, err, fine)
	return hits, err
}

func (t *traced) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	ctx, span := t.start(ctx, opStore, len(items))
	if span.IsRecording() {
		n := 0
		for _, v := range items {
			n += len(v)
		}
		span.SetAttributes(attribute.Int("cache.bytes", n), attribute.String("cache.ttl", ttl.String()))
	}
	err := t.c.Store(ctx, items, ttl)
	tracing.End(span, err, fine)
	return err
}

func (t *traced) Delete(ctx context.Context, keys ...string) error {
	ctx, span := t.start(ctx, opDelete, len(keys))
	err := t.c.Delete(ctx, keys...)
	tracing.End(span, err, fine)
	return err
}

func (t *traced) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	ctx, span := t.start(ctx, opLock, 1)
	unlock, ok, err := t.c.TryLock(ctx, key, ttl)
	span.SetAttributes(attribute.Bool("cache.locked", ok))
	tracing.End(span, err, fine)
	return unlock, ok, err
}

func (t *traced) Close() error { return t.c.Close() }
