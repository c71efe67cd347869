package mcpserver

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/tracing"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// WithTracerProvider gives every MCP request a span named for its method,
// a child of its HTTP request's span (or of the caller's trace context),
// under which the gRPC calls made for it run.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(h *Handler) { h.tracer = tp.Tracer(tracing.Scope) }
}

// WithUsage records the uses of skills MCP serves in r, at the surface
// "mcp" (read_file's are the skills tree's, "vfs"): docs/concepts.md.
func WithUsage(r usage.Recorder) Option {
	return func(h *Handler) { h.usage = skilluse.For(r) }
}

// withTraceHeaders writes the trace context of ctx's span (the HTTP
// request's) into a copy of r's headers, which the SDK hands each
// message's handler as RequestExtra.Header: traceRequests continues the
// trace from there.
func (h *Handler) withTraceHeaders(ctx context.Context, r *http.Request) *http.Request {
	if h.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return r
	}
	r = r.WithContext(ctx)
	r.Header = r.Header.Clone()
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	return r
}

// traceRequests gives each MCP message a span. The SDK runs a session's
// handlers in the context of the request that opened the session, whose
// span ended long ago: the parent is taken from the message's own HTTP
// headers instead (withTraceHeaders).
func (s *identityServer) traceRequests(next mcp.MethodHandler) mcp.MethodHandler {
	tracer := s.h.tracer
	if tracer == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(extra.Header))
		}
		attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method)}
		if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", ct.Params.Name))
		}
		ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			// A tool's failure is a result, not a JSON-RPC error.
			span.SetStatus(codes.Error, "tool error")
		}
		tracing.End(span, err, nil)
		return res, err
	}
}
