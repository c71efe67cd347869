package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/attribute"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/requestid"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// LoggingUnaryInterceptor logs every call with its outcome and duration.
func LoggingUnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		annotateSpan(ctx)
		logCall(ctx, log, info.FullMethod, start, err)
		return resp, err
	}
}

// LoggingStreamInterceptor logs every streaming call.
func LoggingStreamInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		annotateSpan(ss.Context())
		logCall(ss.Context(), log, info.FullMethod, start, err)
		return err
	}
}

// annotateSpan adds the call's request ID and caller to its span (the
// tracing stats handler's), so a trace can be found by either.
func annotateSpan(ctx context.Context) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("skillsvc.request_id", requestid.From(ctx)))
	if p, ok := auth.PrincipalFrom(ctx); ok && p.User != "" {
		span.SetAttributes(attribute.String("skillsvc.user", p.User), attribute.String("skillsvc.thread", p.Thread))
	}
}

func logCall(ctx context.Context, log *slog.Logger, method string, start time.Time, err error) {
	code := status.Code(err)
	level := slog.LevelDebug
	switch code {
	case codes.OK, codes.NotFound, codes.Canceled:
	case codes.Internal, codes.Unknown, codes.DataLoss, codes.Unavailable:
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := []any{"method", method, "code", code.String(), "duration", time.Since(start), "request_id", requestid.From(ctx)}
	if p, ok := auth.PrincipalFrom(ctx); ok {
		attrs = append(attrs, "user", p.User, "thread", p.Thread)
	}
	if err != nil {
		attrs = append(attrs, "err", status.Convert(err).Message())
	}
	log.Log(ctx, level, "rpc", attrs...)
}

// RecoveryUnaryInterceptor turns a handler panic into Internal, so one bad
// request cannot take the replica down.
func RecoveryUnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = panicked(ctx, log, info.FullMethod, p)
			}
		}()
		return handler(ctx, req)
	}
}

// RecoveryStreamInterceptor is RecoveryUnaryInterceptor for streams.
func RecoveryStreamInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = panicked(ss.Context(), log, info.FullMethod, p)
			}
		}()
		return handler(srv, ss)
	}
}

func panicked(ctx context.Context, log *slog.Logger, method string, p any) error {
	log.ErrorContext(ctx, "panic in handler", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return status.Error(codes.Internal, "internal error")
}

// Limits applies per-user request limits (quota.Limiter); key gives the
// user a call is counted against.
type Limits interface {
	UnaryServerInterceptor(key func(context.Context) string) grpc.UnaryServerInterceptor
	StreamServerInterceptor(key func(context.Context) string) grpc.StreamServerInterceptor
}

// Chain is what the interceptor chain needs; Metrics, Audit, Limits and
// Tracer are optional. Mounts is the table agent identities are validated
// against, once per call, when the call is authenticated.
type Chain struct {
	Log     *slog.Logger
	Auth    auth.Authenticator
	Mounts  *mounts.Table
	Metrics *grpcprom.ServerMetrics
	Audit   *audit.Logger
	Limits  Limits
	// Tracer, when set, gives every call a server span (continuing the
	// caller's W3C trace context) before any interceptor runs, so the
	// interceptors' log lines carry its trace ID.
	Tracer trace.TracerProvider
}

// limitKey counts a call against its authenticated user; an admin without
// an identity against its subject.
func limitKey(ctx context.Context) string {
	p, ok := auth.PrincipalFrom(ctx)
	switch {
	case !ok:
		return ""
	case p.User != "":
		return p.User
	case p.Subject != "":
		return "admin:" + p.Subject
	}
	return "admin"
}

// Options returns the server options that wire the interceptor chain in its
// fixed order (interceptors) and, with a Tracer, the calls' server spans.
func Options(c Chain) []grpc.ServerOption {
	unary, stream := interceptors(c)
	var opts []grpc.ServerOption
	if c.Tracer != nil {
		opts = append(opts, grpc.StatsHandler(serverTracing(c.Tracer)))
	}
	return append(opts,
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		// One request message: an Upload chunk, a Write's content, a
		// PutLibraryFile.
		grpc.MaxRecvMsgSize(limits.MaxMessageBytes),
		// Clients pin to one connection; ending connections after a while
		// lets new replicas behind a load balancer get their share.
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      5 * time.Minute,
			MaxConnectionAgeGrace: 10 * time.Minute, // room for a long Upload or Download
			Time:                  time.Minute,
			Timeout:               20 * time.Second,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	)
}

// interceptors returns the chain in its fixed order: recovery outermost,
// then the call's request ID, metrics and logging, which see the final
// status, the audit trail (also after the error table), the error table,
// authentication, per-user limits (which need the user), and the request
// check closest to the handler. The network server (Options) and the
// in-process channel (InProcess) both run exactly this list.
func interceptors(c Chain) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor) {
	unary := []grpc.UnaryServerInterceptor{RecoveryUnaryInterceptor(c.Log), TrackUnaryInterceptor()}
	stream := []grpc.StreamServerInterceptor{RecoveryStreamInterceptor(c.Log), TrackStreamInterceptor()}
	if c.Metrics != nil {
		unary = append(unary, c.Metrics.UnaryServerInterceptor())
		stream = append(stream, c.Metrics.StreamServerInterceptor())
	}
	unary = append(unary, LoggingUnaryInterceptor(c.Log), c.Audit.UnaryServerInterceptor(), ErrorUnaryInterceptor(c.Log), auth.UnaryServerInterceptor(c.Auth, c.Mounts))
	stream = append(stream, LoggingStreamInterceptor(c.Log), c.Audit.StreamServerInterceptor(), ErrorStreamInterceptor(c.Log), auth.StreamServerInterceptor(c.Auth, c.Mounts))
	if c.Limits != nil {
		unary = append(unary, c.Limits.UnaryServerInterceptor(limitKey))
		stream = append(stream, c.Limits.StreamServerInterceptor(limitKey))
	}
	unary = append(unary, ValidateUnaryInterceptor())
	stream = append(stream, ValidateStreamInterceptor())
	return unary, stream
}

// serverTracing gives every call a server span continuing the caller's W3C
// trace context, before any interceptor runs.
func serverTracing(tp trace.TracerProvider) stats.Handler {
	return otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(tracing.Propagator),
		// Probes ask every few seconds: a trace each would bury the calls.
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
		// Metrics are Prometheus's (Chain.Metrics).
		otelgrpc.WithMeterProvider(noopmetric.NewMeterProvider()))
}

// track gives the call its request ID (echoed in the response header) and
// a place where authentication records the principal for the outer
// interceptors.
func track(ctx context.Context) context.Context {
	id := requestid.Pick(metadata.ValueFromIncomingContext(ctx, requestid.Key))
	_ = grpc.SetHeader(ctx, metadata.MD{requestid.Key: {id}}) // Key is lower case, as metadata keys are
	return auth.Track(requestid.NewContext(ctx, id))
}

// TrackUnaryInterceptor applies track to unary calls.
func TrackUnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(track(ctx), req)
	}
}

// TrackStreamInterceptor applies track to streaming calls.
func TrackStreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, &contextStream{ServerStream: ss, ctx: track(ss.Context())})
	}
}

type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }
