package server

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// errorCodes is the one table from domain errors to gRPC codes. Handlers
// return domain errors; the interceptor below applies this table. The first
// match wins, so more specific errors come first.
var errorCodes = []struct {
	err  error
	code codes.Code
}{
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{auth.ErrUnauthenticated, codes.Unauthenticated},
	{mounts.ErrInvalidID, codes.InvalidArgument},
	{mounts.ErrInvalidPath, codes.InvalidArgument},
	{vfs.ErrInvalidArgument, codes.InvalidArgument},
	{vfs.ErrNotFound, codes.NotFound},
	{vfs.ErrExists, codes.AlreadyExists},
	{vfs.ErrReadOnly, codes.PermissionDenied},
	{vfs.ErrPrecondition, codes.FailedPrecondition},
	{vfs.ErrIsDir, codes.FailedPrecondition},
	{vfs.ErrNotDir, codes.FailedPrecondition},
	{vfs.ErrBinary, codes.FailedPrecondition},
	{vfs.ErrEditMismatch, codes.FailedPrecondition},
	{vfs.ErrTooLarge, codes.ResourceExhausted},
	{vfs.ErrOutOfRange, codes.OutOfRange},
	{vfs.ErrConflict, codes.Aborted},
	{skills.ErrInvalidSkill, codes.FailedPrecondition},
}

// ToStatus converts a handler error to a gRPC status error. Errors that are
// in the table keep their message (it names virtual paths only); anything
// else is logged and answered as Internal without its text, which may hold
// storage keys or backend details.
func ToStatus(ctx context.Context, log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err // already a status, e.g. from grpc itself
	}
	for _, e := range errorCodes {
		if errors.Is(err, e.err) {
			msg := err.Error()
			if e.code == codes.Canceled || e.code == codes.DeadlineExceeded {
				// Backends wrap context errors with storage keys.
				msg = e.err.Error()
			}
			return status.Error(e.code, msg)
		}
	}
	log.ErrorContext(ctx, "internal error", "method", method, "err", err)
	return status.Error(codes.Internal, "internal error")
}

// ErrorUnaryInterceptor applies ToStatus to unary handlers.
func ErrorUnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		return resp, ToStatus(ctx, log, info.FullMethod, err)
	}
}

// ErrorStreamInterceptor applies ToStatus to streaming handlers.
func ErrorStreamInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return ToStatus(ss.Context(), log, info.FullMethod, handler(srv, ss))
	}
}
