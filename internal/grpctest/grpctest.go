// Package grpctest holds what tests of skillsvc's gRPC services share on
// the client side: the identity a trusted caller sends (gRPC metadata, or
// the HTTP headers the gateway turns into it), spelled with internal/auth's
// header names, and a check of an error's status code.
package grpctest

import (
	"context"
	"net/http"
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

// WithBearer returns ctx carrying token as a bearer token, as a caller in
// jwt mode sends it.
func WithBearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, auth.AuthorizationKey, "Bearer "+token)
}

// CallerHeader is the same identity as HTTP headers, as the JSON gateway
// and the MCP endpoint read it before it becomes gRPC metadata.
func CallerHeader(user, thread, ticket string) http.Header {
	h := http.Header{}
	h.Set(auth.UserKey, user)
	h.Set(auth.ThreadKey, thread)
	if ticket != "" {
		h.Set(auth.TicketKey, ticket)
	}
	return h
}

// WantCode marks t failed unless err carries the status code want.
func WantCode(t testing.TB, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Errorf("got %v, want code %v", err, want)
	}
}

// InTeams returns ctx carrying the caller's teams (comma separated), as a
// trusted front end sends them beside the identity.
func InTeams(ctx context.Context, teams string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, auth.TeamsKey, teams)
}
