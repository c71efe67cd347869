// Package grpctest holds what tests of skillsvc's gRPC services share on
// the client side: the identity metadata a trusted caller sends, spelled
// with internal/auth's header names, and a check of an error's status code.
package grpctest

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
)

// AsCaller returns ctx carrying the identity metadata of user on thread,
// and of ticket when it is not empty, as a trusted front end sends it.
func AsCaller(ctx context.Context, user, thread, ticket string) context.Context {
	kv := []string{auth.UserKey, user, auth.ThreadKey, thread}
	if ticket != "" {
		kv = append(kv, auth.TicketKey, ticket)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// WantCode marks t failed unless err carries the status code want.
func WantCode(t testing.TB, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Errorf("got %v, want code %v", err, want)
	}
}
