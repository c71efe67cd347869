// Package auth establishes who is calling. An Authenticator turns the
// incoming gRPC context into a mounts.Identity; interceptors run it once per
// call and store the identity in the context for handlers.
package auth

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Metadata keys carrying the caller's identity.
const (
	UserKey   = "x-skillsvc-user"
	ThreadKey = "x-skillsvc-thread"
	TicketKey = "x-skillsvc-ticket"
)

// ErrUnauthenticated: the call does not say, or cannot prove, who it is.
var ErrUnauthenticated = errkind.New(errkind.Unauthenticated, "unauthenticated")

// Authenticator establishes the identity of a call.
type Authenticator interface {
	Authenticate(ctx context.Context) (mounts.Identity, error)
}

// Metadata trusts the identity headers as sent. It suits deployments where
// only trusted workers reach the service (a private network or a mesh that
// authenticates them); token-based authentication replaces it elsewhere.
type Metadata struct{}

// Authenticate implements Authenticator. Missing user or thread is
// ErrUnauthenticated; malformed values are validated later by the mount table.
func (Metadata) Authenticate(ctx context.Context) (mounts.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	get := func(key string) (string, error) {
		vs := md.Get(key)
		if len(vs) > 1 {
			return "", fmt.Errorf("%w: %s given %d times", ErrUnauthenticated, key, len(vs))
		}
		if len(vs) == 0 {
			return "", nil
		}
		return strings.TrimSpace(vs[0]), nil
	}
	var id mounts.Identity
	var err error
	if id.User, err = get(UserKey); err != nil {
		return id, err
	}
	if id.Thread, err = get(ThreadKey); err != nil {
		return id, err
	}
	if id.Ticket, err = get(TicketKey); err != nil {
		return id, err
	}
	if id.User == "" || id.Thread == "" {
		return id, fmt.Errorf("%w: metadata %s and %s are required", ErrUnauthenticated, UserKey, ThreadKey)
	}
	return id, nil
}

type ctxKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id mounts.Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the identity stored by the interceptors.
func FromContext(ctx context.Context) (mounts.Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(mounts.Identity)
	return id, ok
}

// exempt reports whether a method needs no identity: health checks and
// reflection are for infrastructure.
func exempt(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// adminMethod reports whether a method is AdminService's: for operators,
// not agents, naming the user it acts on in the request.
func adminMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/skillsvc.v1.AdminService/")
}

// ErrNoAdminRole: with token authentication, AdminService needs an admin
// role, which no token carries yet.
var ErrNoAdminRole = errkind.New(errkind.PermissionDenied, "AdminService needs an admin role, which tokens do not carry yet")

// check decides a call before its handler runs: the identity to put in the
// context, none for an exempt method (ok false), or an error. Under the
// insecure Metadata authenticator AdminService is open to whoever reaches
// the port, as everything is; under tokens it is refused until roles exist.
func check(ctx context.Context, a Authenticator, fullMethod string) (id mounts.Identity, ok bool, err error) {
	_, insecure := a.(Metadata)
	if exempt(fullMethod) || (insecure && adminMethod(fullMethod)) {
		return id, false, nil
	}
	if id, err = a.Authenticate(ctx); err != nil {
		return id, false, err
	}
	if adminMethod(fullMethod) {
		return id, false, ErrNoAdminRole
	}
	return id, true, nil
}

// UnaryServerInterceptor authenticates unary calls.
func UnaryServerInterceptor(a Authenticator) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		id, ok, err := check(ctx, a, info.FullMethod)
		if err != nil {
			return nil, err
		}
		if ok {
			ctx = NewContext(ctx, id)
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor authenticates streaming calls.
func StreamServerInterceptor(a Authenticator) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		id, ok, err := check(ss.Context(), a, info.FullMethod)
		if err != nil {
			return err
		}
		if !ok {
			return handler(srv, ss)
		}
		return handler(srv, &identityStream{ServerStream: ss, ctx: NewContext(ss.Context(), id)})
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }
