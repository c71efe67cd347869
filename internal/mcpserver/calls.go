package mcpserver

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/requestid"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// An MCP request is authenticated once, by ServeHTTP, into a checked
// auth.Principal whose Caller the mount table validated; its handlers call
// the catalog, the filesystem and the change feed directly as that caller.
// What the gRPC interceptors give a call is given here by the same code:
// the request check (server.CheckRequest), the audit line (audit.Record),
// the log line (server.LogCall) and the one error table (server.ToStatus,
// whose JSON-RPC column protocolError reads). Per-user limits admit the
// request once at the edge and charge the storage requests its handlers
// made (quota.StorageCost), as the gRPC chain charges a call's.

// callHeader carries a request's verified call from ServeHTTP to its
// handlers: the SDK runs a session's handlers in the context of the
// request that opened the session, and hands each message only its
// request's headers. ServeHTTP always sets it, so a value a client sends
// never reaches a handler.
const callHeader = "X-Skillsvc-Mcp-Call"

// verified is one request's checked principal (with its Caller) and its
// request ID.
type verified struct {
	p   auth.Principal
	rid string
}

// calls holds the verified calls of the requests ServeHTTP is serving.
type calls struct{ m sync.Map }

// add keeps v for the request until done is called, returning the value
// of callHeader that names it.
func (c *calls) add(v *verified) (name string, done func()) {
	name = rand.Text()
	c.m.Store(name, v)
	return name, func() { c.m.Delete(name) }
}

func (c *calls) get(name string) (*verified, bool) {
	if name == "" {
		return nil, false
	}
	v, ok := c.m.Load(name)
	if !ok {
		return nil, false
	}
	return v.(*verified), true
}

// withCaller gives each message's handler its request's verified
// principal and request ID, and charges the storage requests the handler
// makes to the caller. A message whose request is gone (the client left
// before its handler started) acts as the identity's latest verified
// principal; a sessionless one has none and is refused.
func (s *identityServer) withCaller(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var v *verified
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			v, _ = s.h.calls.get(extra.Header.Get(callHeader))
		}
		if v != nil && !s.stateless {
			s.mu.Lock()
			s.p = v.p
			s.mu.Unlock()
		}
		if v == nil && !s.stateless {
			v = &verified{p: s.latest()}
		}
		if v == nil || v.p.Caller == (mounts.Caller{}) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthenticated"}
		}
		ctx = s.h.callContext(ctx, v.p, v.rid)
		ctx, reqs := objstore.CountRequests(ctx)
		// Counted after the handler: a deferred Charge would take its
		// cost when deferred, before any request was made.
		defer func() { s.h.limits.Charge(v.p.User, quota.StorageCost(reqs.Counts())) }()
		return next(ctx, method, req)
	}
}

// callContext is ctx carrying the verified principal p and request ID rid,
// as the gRPC interceptors leave a call's context for its handler.
func (h *Handler) callContext(ctx context.Context, p auth.Principal, rid string) context.Context {
	if rid == "" {
		rid = requestid.Pick(nil)
	}
	return auth.NewContext(requestid.NewContext(ctx, rid), p)
}

// callerOf is the caller ServeHTTP verified for the request of ctx.
func callerOf(ctx context.Context) (mounts.Caller, error) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return id, status.Error(codes.Unauthenticated, "unauthenticated: no identity")
	}
	return id, nil
}

// call runs one operation of the gRPC method it stands for (the name the
// audit trail and the logs give it), with req the equivalent request, as
// the interceptors run a call: req checked, the outcome logged and, for
// changes and denials, audited, and an error converted by the error table
// to a status error (which the callers here read, as they read a gRPC
// client's).
func call[T any](ctx context.Context, h *Handler, method string, req any, run func(mounts.Caller) (T, error)) (out T, err error) {
	start := time.Now()
	if h.tracer != nil {
		// A span per call under the request's, named as the RPC's would be.
		var span trace.Span
		ctx, span = h.tracer.Start(ctx, strings.TrimPrefix(method, "/"), trace.WithSpanKind(trace.SpanKindInternal))
		defer func() { tracing.End(span, err, nil) }()
	}
	err = server.CheckRequest(req)
	if err == nil {
		var id mounts.Caller
		if id, err = callerOf(ctx); err == nil {
			out, err = run(id)
		}
	}
	err = server.ToStatus(ctx, h.log, method, err)
	server.LogCall(ctx, h.log, method, start, err)
	h.audit.Record(ctx, method, req, start, err)
	return out, err
}
