// Package tracing is skillsvc's OpenTelemetry tracing: the tracer provider
// the standard OTEL_* environment asks for (none unless it asks), the one
// propagator (W3C trace context), child spans for storage, cache and index
// work under a traced request, and trace IDs in log lines.
//
// Only the entry points hold a tracer provider (the gRPC servers, the HTTP
// endpoints, MCP's per-message spans). Everything below them continues the
// trace of the span in its context, with that span's provider, and does
// nothing without one: an untraced call costs a context lookup.
package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of skillsvc's own spans.
const Scope = "github.com/skillsvc/skillsvc"

// Propagator reads and writes the trace context of requests: W3C
// traceparent and tracestate headers (gRPC metadata alike).
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Child starts a span named name under the span in ctx, on that span's
// provider. Without a span in ctx (tracing off, or work no traced request
// asked for) it starts nothing: it returns ctx and a no-op span.
func Child(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, noopSpan
	}
	return parent.TracerProvider().Tracer(Scope).Start(ctx, name, opts...)
}

var noopSpan = noop.Span{}

// Detached is a context for work that outlives the request that started
// it (a background revalidation): no deadline, cancellation or values of
// ctx, but its span, so the work's spans join the request's trace.
func Detached(ctx context.Context) context.Context {
	return trace.ContextWithSpan(context.Background(), trace.SpanFromContext(ctx))
}

// End ends span, marking it failed when err is a failure. An expected
// outcome (expected(err): not found, a lost race; a cancelled call always)
// is no failure, as the metrics do not count it as one either: it is
// recorded as the span's "skillsvc.outcome" attribute.
func End(span trace.Span, err error, expected func(error) bool) {
	if err != nil && span.IsRecording() {
		if errors.Is(err, context.Canceled) || expected != nil && expected(err) {
			span.SetAttributes(attribute.String("skillsvc.outcome", err.Error()))
		} else {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}
