package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/errorinfo"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/server/convert"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// errorCodes is the one table from error kinds to each protocol's code:
// gRPC's (the JSON gateway answers its HTTP status) and JSON-RPC's, which
// MCP answers (protocolError in internal/mcpserver): -32602 (invalid
// params) for what the caller named wrongly, -32603 (internal error) for
// the rest. Handlers return errors wrapping an errkind.Kind; the
// interceptors below apply the gRPC column.
var errorCodes = map[errkind.Kind]wireCodes{
	errkind.InvalidArgument:    {codes.InvalidArgument, jsonrpcInvalidParams},
	errkind.Unauthenticated:    {codes.Unauthenticated, jsonrpcInternal},
	errkind.NotFound:           {codes.NotFound, jsonrpcInvalidParams},
	errkind.AlreadyExists:      {codes.AlreadyExists, jsonrpcInternal},
	errkind.PermissionDenied:   {codes.PermissionDenied, jsonrpcInternal},
	errkind.FailedPrecondition: {codes.FailedPrecondition, jsonrpcInvalidParams},
	errkind.ResourceExhausted:  {codes.ResourceExhausted, jsonrpcInternal},
	errkind.OutOfRange:         {codes.OutOfRange, jsonrpcInvalidParams},
	errkind.Aborted:            {codes.Aborted, jsonrpcInternal},
	errkind.Unavailable:        {codes.Unavailable, jsonrpcInternal},
}

// wireCodes are an error kind's codes, a column per protocol.
type wireCodes struct {
	grpc    codes.Code
	jsonrpc int64
}

// The JSON-RPC 2.0 error codes the table uses.
const (
	jsonrpcInvalidParams = -32602
	jsonrpcInternal      = -32603
)

// JSONRPCCode is the JSON-RPC column of the table for the status code c
// (ToStatus's): -32603 for a code no kind maps to (Internal, Canceled,
// DeadlineExceeded).
func JSONRPCCode(c codes.Code) int64 {
	for _, w := range errorCodes {
		if w.grpc == c {
			return w.jsonrpc
		}
	}
	return jsonrpcInternal
}

// storageRetryDelay is the retry hint of a storage outage (a refused or
// failed request, a body read cut short): the store's own retries are
// spent, and a client's retry a second later goes out on a new connection.
const storageRetryDelay = time.Second

// ToStatus converts a handler error to a gRPC status error. Context errors
// keep their code whatever wraps them; an error of a known kind keeps its
// message (which names virtual paths only), except a storage error no layer
// restated, which is also logged; anything else is logged and answered as
// Internal without its text, which may hold storage keys or backend details.
func ToStatus(ctx context.Context, log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err // already a status, e.g. from grpc itself
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, context.Canceled.Error())
	case errors.Is(err, context.DeadlineExceeded):
		// Backends wrap context errors with storage keys.
		return status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
	}
	wire, ok := errorCodes[errkind.Of(err)]
	code := wire.grpc
	if !ok {
		log.ErrorContext(ctx, "internal error", "method", method, "err", err)
		return status.Error(codes.Internal, "internal error")
	}
	if errkind.IsInternal(err) {
		log.WarnContext(ctx, "storage error", "method", method, "err", err)
	}
	st := status.New(code, errkind.Message(err))
	if d, ok := errkind.RetryDelay(err); ok {
		st = retryinfo.With(st, d)
	} else if errors.Is(err, objstore.ErrUnavailable) {
		st = retryinfo.With(st, storageRetryDelay)
	}
	if errors.Is(err, objstore.ErrNoSpace) {
		st = errorinfo.With(st, errorinfo.StorageFull)
	}
	var pe skillProblems
	if errors.As(err, &pe) {
		st = withProblems(st, pe.SkillProblems())
	}
	return st.Err()
}

// skillProblems is an error listing why a skill folder is refused
// (library.ProblemsError).
type skillProblems interface {
	SkillProblems() []skillmd.Problem
}

// withProblems adds every problem to st twice: as a SkillProblems detail,
// and as google.rpc.BadRequest field violations, which generic clients
// show.
func withProblems(st *status.Status, ps []skillmd.Problem) *status.Status {
	br := &errdetails.BadRequest{}
	for _, p := range ps {
		if p.Severity == skillmd.SeverityError {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: problemField(p), Description: p.Message, Reason: p.Rule})
		}
	}
	with, err := st.WithDetails(&skillsvcv1.SkillProblems{Problems: convert.Problems(ps)}, br)
	if err != nil {
		return st
	}
	return with
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
