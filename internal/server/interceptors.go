package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
)

// LoggingUnaryInterceptor logs every call with its outcome and duration.
func LoggingUnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		logCall(ctx, log, info.FullMethod, start, err)
		return resp, err
	}
}

// LoggingStreamInterceptor logs every streaming call.
func LoggingStreamInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		logCall(ss.Context(), log, info.FullMethod, start, err)
		return err
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
	attrs := []any{"method", method, "code", code.String(), "duration", time.Since(start)}
	if id, ok := auth.FromContext(ctx); ok {
		attrs = append(attrs, "user", id.User, "thread", id.Thread)
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

// Options returns the server options that wire the interceptor chain in its
// fixed order: recovery outermost, then metrics (when m is not nil) and
// logging, which both see the final status, then the error table,
// authentication, and the request check closest to the handler.
func Options(log *slog.Logger, a auth.Authenticator, m *grpcprom.ServerMetrics) []grpc.ServerOption {
	unary := []grpc.UnaryServerInterceptor{RecoveryUnaryInterceptor(log)}
	stream := []grpc.StreamServerInterceptor{RecoveryStreamInterceptor(log)}
	if m != nil {
		unary = append(unary, m.UnaryServerInterceptor())
		stream = append(stream, m.StreamServerInterceptor())
	}
	unary = append(unary, LoggingUnaryInterceptor(log), ErrorUnaryInterceptor(log), auth.UnaryServerInterceptor(a), ValidateUnaryInterceptor())
	stream = append(stream, LoggingStreamInterceptor(log), ErrorStreamInterceptor(log), auth.StreamServerInterceptor(a), ValidateStreamInterceptor())
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		grpc.MaxRecvMsgSize(16 << 20),
		// Clients pin to one connection; ending connections after a while
		// lets new replicas behind a load balancer get their share.
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      5 * time.Minute,
			MaxConnectionAgeGrace: 10 * time.Minute, // room for a long Upload or Download
			Time:                  time.Minute,
			Timeout:               20 * time.Second,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
}
