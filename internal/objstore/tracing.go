package objstore

import (
	"context"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/tracing"
)

// Span attributes of storage operations.
const (
	attrKey     = attribute.Key("objstore.key")
	attrPrefix  = attribute.Key("objstore.prefix")
	attrSize    = attribute.Key("objstore.size")
	attrObjects = attribute.Key("objstore.objects")
)

type tracingBucket struct{ b Bucket }

// WrapWithTracing gives every operation on b a client span named
// "objstore.<operation>" under the span in its context (none without
// one: storage work no traced request asked for is not traced), with the
// key or prefix, the size and the number of objects listed. Reads end
// their span when the body is closed, as the metrics time them; expected
// outcomes (not found, a failed precondition, a lost race) are no error.
func WrapWithTracing(b Bucket) Bucket { return tracingBucket{b} }

func (t tracingBucket) start(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracing.Child(ctx, "objstore."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

func (t tracingBucket) Get(ctx context.Context, key string) (io.ReadCloser, Attributes, error) {
	ctx, span := t.start(ctx, OpGet, attrKey.String(key))
	rc, a, err := t.b.Get(ctx, key)
	return t.body(span, rc, a, err)
}

func (t tracingBucket) GetRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, Attributes, error) {
	ctx, span := t.start(ctx, OpGetRange, attrKey.String(key), attribute.Int64("objstore.offset", off), attribute.Int64("objstore.length", length))
	rc, a, err := t.b.GetRange(ctx, key, off, length)
	return t.body(span, rc, a, err)
}

// body ends span when the body is closed, or at once on an error.
func (t tracingBucket) body(span trace.Span, rc io.ReadCloser, a Attributes, err error) (io.ReadCloser, Attributes, error) {
	if err != nil {
		tracing.End(span, err, expected)
		return nil, a, err
	}
	if !span.IsRecording() {
		span.End()
		return rc, a, nil
	}
	span.SetAttributes(attrSize.Int64(a.Size))
	return &timedBody{ReadCloser: rc, done: func(err error) { tracing.End(span, err, expected) }}, a, nil
}

func (t tracingBucket) Stat(ctx context.Context, key string) (Attributes, error) {
	ctx, span := t.start(ctx, OpStat, attrKey.String(key))
	a, err := t.b.Stat(ctx, key)
	tracing.End(span, err, expected)
	return a, err
}

func (t tracingBucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) (Attributes, error) {
	ctx, span := t.start(ctx, OpPut, attrKey.String(key), attrSize.Int64(size),
		attribute.Bool("objstore.if_match", opts.IfMatch != ""), attribute.Bool("objstore.if_none_match", opts.IfNoneMatch))
	a, err := t.b.Put(ctx, key, r, size, opts)
	tracing.End(span, err, expected)
	return a, err
}

func (t tracingBucket) Delete(ctx context.Context, key string) error {
	ctx, span := t.start(ctx, OpDelete, attrKey.String(key))
	err := t.b.Delete(ctx, key)
	tracing.End(span, err, expected)
	return err
}

func (t tracingBucket) List(ctx context.Context, opts ListOptions) (ListPage, error) {
	ctx, span := t.start(ctx, OpList, attrPrefix.String(opts.Prefix), attribute.Bool("objstore.continued", opts.Token != ""))
	p, err := t.b.List(ctx, opts)
	if err == nil && span.IsRecording() {
		span.SetAttributes(attrObjects.Int(len(p.Objects)+len(p.CommonPrefixes)), attribute.Bool("objstore.truncated", p.NextToken != ""))
	}
	tracing.End(span, err, expected)
	return p, err
}
