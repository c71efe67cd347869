// Package auth establishes who is calling. An Authenticator turns a call's
// headers (gRPC metadata or HTTP headers) into a Principal; interceptors run
// it once per call, apply the roles (agent calls need a user and a thread,
// validated by the mount table into a mounts.Caller; AdminService needs an
// admin) and store the principal for handlers.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Metadata keys carrying the caller's identity in insecure mode; over HTTP
// they are the headers of the same names, so no front end spells them
// again.
const (
	UserKey   = "x-skillsvc-user"
	ThreadKey = "x-skillsvc-thread"
	TicketKey = "x-skillsvc-ticket"
	// TeamsKey lists the caller's teams, comma separated: the team
	// libraries layered between the organization's and the user's.
	TeamsKey = "x-skillsvc-teams"
	// PinKey set to PinLibrary asks that the call read the library its
	// thread pinned (the skills package's pinned threads), pinning it on
	// the thread's first such call. In every mode, beside a token too.
	PinKey = "x-skillsvc-pin"
	// ScopeKey names the skill scope the call's listings show, and
	// HarnessKey the agent harness the caller runs in (scopes match it
	// against skills' compatibility). In every mode; beside a token that
	// names its own, only the same value (the token's binds).
	ScopeKey   = "x-skillsvc-scope"
	HarnessKey = "x-skillsvc-harness"
	// AdminKey set to "true" makes an insecure-mode caller an admin of
	// LibraryService (Principal.LibraryAdmin).
	AdminKey = "x-skillsvc-admin"
)

// PinLibrary is PinKey's one value.
const PinLibrary = "library"

// ErrUnauthenticated: the call does not say, or cannot prove, who it is.
var ErrUnauthenticated = errkind.New(errkind.Unauthenticated, "unauthenticated")

// ErrNoAgent: the call needs an agent identity (a user and a thread) and
// the principal names none. Front ends say so in their own words.
var ErrNoAgent = errkind.New(errkind.Unauthenticated, "unauthenticated: the call needs a user and a thread")

// ErrNotAdmin: the call needs an admin token.
var ErrNotAdmin = errkind.New(errkind.PermissionDenied, "this call needs an admin token")

// Principal is who is calling. An agent acts as its Identity (user,
// thread, optional ticket) on its own mounts and catalog; an admin may also
// act for a user an AdminService request names, and may carry no identity.
type Principal struct {
	// Identity is what the headers or token claim, unchecked: the audit
	// trail and the logs name a refused caller by it.
	mounts.Identity
	// Subject is the token's sub, for the audit trail; empty in insecure
	// mode.
	Subject string
	// Admin: the caller may use AdminService (a token's admin scope; every
	// caller in insecure mode).
	Admin bool
	// LibraryAdmin: the caller acts as an admin of the skill libraries
	// (LibraryService, and pinned reads that show pending versions): a
	// token's admin scope; in insecure mode, where every caller is Admin,
	// only AdminKey set to "true", so an agent never changes another's
	// library by mistake. Authenticate decides it; the server only reads it.
	LibraryAdmin bool
	// Pin: the call reads its thread's pinned library, asked by PinKey or
	// by the token's pin claim.
	Pin bool
	// ScopeBound and HarnessBound: the token named Identity.Scope or
	// Identity.Harness, which no header or request field may change.
	ScopeBound, HarnessBound bool
	// Caller is Identity validated by the mount table, set by Check once
	// it admits an agent call; the zero Caller otherwise.
	Caller mounts.Caller
}

// Agent returns the caller p acts as on its own mounts and catalog. It is
// the one place that decides what an agent needs: a user and a thread
// (ErrNoAgent without them), with IDs the mount table t accepts
// (mounts.ErrInvalidID otherwise).
func (p Principal) Agent(t *mounts.Table) (mounts.Caller, error) {
	if p.User == "" || p.Thread == "" {
		return mounts.Caller{}, ErrNoAgent
	}
	return t.Identify(p.Identity)
}

// Headers are a call's request headers: gRPC metadata.MD, or HTTPHeaders.
// Keys are lower case.
type Headers interface {
	Get(key string) []string
}

// HTTPHeaders adapts an HTTP request's headers.
type HTTPHeaders http.Header

// Get implements Headers.
func (h HTTPHeaders) Get(key string) []string { return http.Header(h).Values(key) }

// Authenticator establishes the principal of a call from its headers.
type Authenticator interface {
	Authenticate(ctx context.Context, h Headers) (Principal, error)
}

// Metadata trusts the identity headers as sent, and makes every caller an
// admin. It suits a laptop, or deployments where only trusted workers reach
// the service (a private network or a mesh that authenticates them); token
// authentication replaces it elsewhere.
type Metadata struct{}

// Authenticate implements Authenticator. Missing values are left empty for
// the roles check; malformed ones are refused by Check, which validates
// the identity with the mount table.
func (Metadata) Authenticate(_ context.Context, h Headers) (Principal, error) {
	get := func(key string) (string, error) {
		vs := h.Get(key)
		if len(vs) > 1 {
			return "", fmt.Errorf("%w: %s given %d times", ErrUnauthenticated, key, len(vs))
		}
		if len(vs) == 0 {
			return "", nil
		}
		return strings.TrimSpace(vs[0]), nil
	}
	admin := h.Get(AdminKey)
	p := Principal{Admin: true, LibraryAdmin: len(admin) == 1 && admin[0] == "true"}
	var err error
	if p.User, err = get(UserKey); err != nil {
		return Principal{}, err
	}
	if p.Thread, err = get(ThreadKey); err != nil {
		return Principal{}, err
	}
	if p.Ticket, err = get(TicketKey); err != nil {
		return Principal{}, err
	}
	if p.Teams, err = get(TeamsKey); err != nil {
		return Principal{}, err
	}
	return p, nil
}

// Close releases what an Authenticator watches (key files, a JWKS URL).
func Close(a Authenticator) {
	if c, ok := a.(interface{ Close() }); ok {
		c.Close()
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the validated identity of the agent calling: the
// Caller Check admitted.
func FromContext(ctx context.Context) (mounts.Caller, bool) {
	p, ok := PrincipalFrom(ctx)
	if !ok || p.Caller == (mounts.Caller{}) {
		return mounts.Caller{}, false
	}
	return p.Caller, true
}

// PrincipalFrom returns the principal the interceptors stored, or the one
// recorded for a context made by Track.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	if p, ok := ctx.Value(ctxKey{}).(Principal); ok {
		return p, true
	}
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.p, s.ok
	}
	return Principal{}, false
}

type slotKey struct{}

// slot lets interceptors outside authentication (logging, audit) learn the
// principal found further in.
type slot struct {
	mu sync.Mutex
	p  Principal
	ok bool
}

// Track returns ctx prepared so that PrincipalFrom(ctx) reports the
// principal once an inner interceptor has authenticated the call.
func Track(ctx context.Context) context.Context {
	return context.WithValue(ctx, slotKey{}, &slot{})
}

func record(ctx context.Context, p Principal) context.Context {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.mu.Lock()
		s.p, s.ok = p, true
		s.mu.Unlock()
	}
	return NewContext(ctx, p)
}

// exempt reports whether a method needs no identity: health checks and
// reflection are for infrastructure.
func exempt(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// AdminMethod reports whether a method is AdminService's: for operators,
// not agents, naming the user it acts on in the request.
func AdminMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/skillsvc.v1.AdminService/")
}

// Check decides a call before its handler runs: the principal, ok false
// for an exempt method, or an error. AdminService needs an admin; every
// other call needs an agent identity (Principal.Agent), validated here
// once against t and kept as the principal's Caller.
func Check(ctx context.Context, a Authenticator, t *mounts.Table, h Headers, fullMethod string) (p Principal, ok bool, err error) {
	if exempt(fullMethod) {
		return p, false, nil
	}
	p, err = a.Authenticate(ctx, h)
	_, insecure := a.(Metadata)
	if insecure && AdminMethod(fullMethod) {
		// Identity headers neither help nor hinder an insecure admin call.
		return Principal{Admin: true}, true, nil
	}
	if err != nil {
		return p, false, err
	}
	if pin, err := pinAsked(h); err != nil {
		return p, true, err
	} else if pin {
		p.Pin = true
	}
	if err := p.Choose(h); err != nil {
		return p, true, err
	}
	if AdminMethod(fullMethod) {
		if !p.Admin {
			return p, true, ErrNotAdmin
		}
		return p, true, nil
	}
	c, err := p.Agent(t)
	switch {
	case errors.Is(err, ErrNoAgent) && insecure:
		return p, false, fmt.Errorf("%w: metadata %s and %s are required", ErrUnauthenticated, UserKey, ThreadKey)
	case errors.Is(err, ErrNoAgent):
		return p, true, fmt.Errorf("%w: the token names no user and thread", ErrUnauthenticated)
	case err != nil:
		// Insecure mode passes IDs as sent; the principal is still
		// recorded, so the audit trail names who was refused.
		return p, true, err
	}
	p.Caller = c
	return p, true, nil
}

// Choose reads ScopeKey and HarnessKey into p: each at most once, and
// beside a token that names its own only that same value
// (PERMISSION_DENIED). Every edge that authenticates a call applies it
// before Agent, so the Caller carries the view the call chose.
func (p *Principal) Choose(h Headers) error {
	for _, f := range []struct {
		key   string
		v     *string
		bound bool
	}{{ScopeKey, &p.Scope, p.ScopeBound}, {HarnessKey, &p.Harness, p.HarnessBound}} {
		switch vs := h.Get(f.key); {
		case len(vs) == 0:
		case len(vs) > 1:
			return fmt.Errorf("%w: %s given %d times", errkind.InvalidArgument, f.key, len(vs))
		case f.bound && strings.TrimSpace(vs[0]) != *f.v:
			return fmt.Errorf("%w: %s: the token binds the call to %q", errkind.PermissionDenied, f.key, *f.v)
		default:
			*f.v = strings.TrimSpace(vs[0])
		}
	}
	return nil
}

// AskPin reads PinKey into p, as Check does for a gRPC call: for edges
// that authenticate a request themselves (/mcp).
func (p *Principal) AskPin(h Headers) error {
	pin, err := pinAsked(h)
	if pin {
		p.Pin = true
	}
	return err
}

// Scoped returns id viewing the scope a request field names: id itself for
// "", else id with that scope, unless the call's token bound it to another
// (PERMISSION_DENIED: a field may not widen a token's view).
func Scoped(ctx context.Context, id mounts.Caller, scope string) (mounts.Caller, error) {
	if scope == "" || scope == id.Scope() {
		return id, nil
	}
	if p, _ := PrincipalFrom(ctx); p.ScopeBound {
		return mounts.Caller{}, fmt.Errorf("%w: scope %q: the token binds the call to scope %q", errkind.PermissionDenied, scope, id.Scope())
	}
	return id.WithScope(scope)
}

// pinAsked reads PinKey: absent is no, PinLibrary yes, anything else an
// error (a misspelt ask must not silently read the live library).
func pinAsked(h Headers) (bool, error) {
	switch vs := h.Get(PinKey); {
	case len(vs) == 0:
		return false, nil
	case len(vs) == 1 && strings.TrimSpace(vs[0]) == PinLibrary:
		return true, nil
	}
	return false, fmt.Errorf("%w: %s must be given once, as %q", errkind.InvalidArgument, PinKey, PinLibrary)
}

// grpcHeaders reads a call's headers where they are: FromIncomingContext
// would copy every header on every call, of which a call reads a handful.
func grpcHeaders(ctx context.Context) Headers { return incoming{ctx} }

type incoming struct{ ctx context.Context }

// Get implements Headers: key's values, matched ignoring case.
func (h incoming) Get(key string) []string { return metadata.ValueFromIncomingContext(h.ctx, key) }

// UnaryServerInterceptor authenticates unary calls, validating identities
// against t. A principal refused by the roles is still recorded, so the
// audit trail says who was denied.
func UnaryServerInterceptor(a Authenticator, t *mounts.Table) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		p, ok, err := Check(ctx, a, t, grpcHeaders(ctx), info.FullMethod)
		if ok {
			ctx = record(ctx, p)
		}
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor authenticates streaming calls.
func StreamServerInterceptor(a Authenticator, t *mounts.Table) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		p, ok, err := Check(ctx, a, t, grpcHeaders(ctx), info.FullMethod)
		if ok {
			ctx = record(ctx, p)
		}
		if err != nil {
			return err
		}
		if !ok {
			return handler(srv, ss)
		}
		return handler(srv, &identityStream{ServerStream: ss, ctx: ctx})
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

// RequireAdmin serves next only to callers a authenticates as admins (in
// insecure mode, everyone): for HTTP endpoints such as /metrics.
func RequireAdmin(a Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r.Context(), HTTPHeaders(r.Header))
		switch {
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer realm="skillsvc"`)
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
		case !p.Admin:
			http.Error(w, "this endpoint needs an admin token", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}
