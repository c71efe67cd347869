package server

import (
	"context"

	"google.golang.org/grpc"

	"github.com/skillsvc/skillsvc/internal/server/reqcheck"
)

// The proto files turn off the decoder's UTF-8 check (it would answer
// INTERNAL), so every request is checked here instead (reqcheck.Check).

// ValidateUnaryInterceptor checks the request of unary calls.
func ValidateUnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := reqcheck.Check(req); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// ValidateStreamInterceptor checks every message a stream receives.
func ValidateStreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, validatingStream{ss})
	}
}

type validatingStream struct{ grpc.ServerStream }

func (s validatingStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return reqcheck.Check(m)
}
