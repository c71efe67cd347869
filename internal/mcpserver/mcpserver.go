// Package mcpserver serves skillsvc over the Model Context Protocol
// (Streamable HTTP, on the official Go SDK) for agent hosts that speak MCP
// rather than gRPC:
//
//   - the skills extension (io.modelcontextprotocol/skills): skills/list and
//     skills/get with every file's sha256 digest, and skill://<skill>/<file>
//     resources (extension.go), listed by resources/list and
//     resources/directory/read (resources.go);
//   - tools for hosts without the extension: the skills prompt block,
//     load_skill, and filesystem tools over the caller's mounts (tools.go);
//   - notifications/resources/list_changed when the caller's library
//     changes, and resources/updated for subscribed files (watch.go).
//
// Every MCP request is authenticated once, at this edge, into a checked
// principal; its handlers call the skills catalog, the filesystem and the
// change feed directly as that caller, with the gRPC edge's request check,
// audit trail, log line and error table (calls.go), and the per-user limits
// the edge admits the request against charge the storage requests they
// make. There is one logical MCP server per caller identity (user, thread,
// ticket or bearer token), and a session stays bound to the identity that
// opened it.
package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mcpserver/wire"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/requestid"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Config holds the MCP endpoint's settings.
type Config struct {
	WatchInterval    time.Duration
	SessionTimeout   time.Duration
	MaxOpenSessions  int
	PressureIdle     time.Duration
	MaxSessions      int
	SkillsPageSize   int
	MaxRequestBytes  int64
	MaxResourceBytes int64
	ListingTTL       time.Duration
}

// RegisterFlagsWithPrefix registers the flags under prefix (e.g. "mcp.").
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.DurationVar(&c.WatchInterval, prefix+"watch-interval", 30*time.Second, "How often the change watcher of an identity with open MCP sessions checks that it still has sessions; the changes themselves (notifications/resources/list_changed) come from the catalog's change feed as they happen (--watch.*).")
	f.DurationVar(&c.SessionTimeout, prefix+"session-timeout", 30*time.Minute, "Idle time after which an MCP session is closed; 0 keeps sessions until the client ends them (or --mcp.pressure-idle-timeout when the replica is nearly full).")
	// Measured (TestMCPSessionsBoundedEndToEnd): ~24 KiB a session, 63 MiB
	// RSS for the whole binary with 1,024 open; each identity also has a
	// watcher listing its library every --mcp.watch-interval, which is
	// what the ceiling mostly bounds.
	f.IntVar(&c.MaxOpenSessions, prefix+"max-sessions", 1024, "Open MCP sessions (and so library watchers) per replica; one more initialize is answered 429 with Retry-After until a session ends.")
	f.DurationVar(&c.PressureIdle, prefix+"pressure-idle-timeout", time.Minute, "When a replica holds three quarters of --mcp.max-sessions, sessions idle this long are closed (their clients start a new one).")
	f.IntVar(&c.MaxSessions, prefix+"max-sessions-per-identity", 32, "Open MCP sessions one verified caller identity (user, thread, ticket) may hold per replica; one more initialize is answered 429 until a session ends or times out.")
	f.IntVar(&c.SkillsPageSize, prefix+"skills-page-size", 50, "Skills per skills/list and resources/list page, and entries per resources/directory/read page.")
	f.Int64Var(&c.MaxRequestBytes, prefix+"max-request-bytes", limits.MaxJSONBodyBytes, "Largest MCP request body.")
	f.Int64Var(&c.MaxResourceBytes, prefix+"max-resource-bytes", skillmd.MaxSkillBytes, "Largest file resources/read returns (the skills extension's per-skill limit is 16 MiB).")
	f.DurationVar(&c.ListingTTL, prefix+"listing-ttl", 30*time.Second, "The ttlMs hint on skills/list and skills/get results.")
}

// RegisterFlags registers the flags with the "mcp." prefix.
func (c *Config) RegisterFlags(f *flag.FlagSet) { c.RegisterFlagsWithPrefix("mcp.", f) }

// Validate checks the settings.
func (c *Config) Validate() error {
	switch {
	case c.WatchInterval <= 0, c.PressureIdle <= 0:
		return fmt.Errorf("mcp.watch-interval and mcp.pressure-idle-timeout must be positive")
	case c.MaxOpenSessions <= 0, c.MaxSessions <= 0, c.SkillsPageSize <= 0:
		return fmt.Errorf("mcp.max-sessions, mcp.max-sessions-per-identity and mcp.skills-page-size must be positive")
	case c.MaxRequestBytes <= 0, c.MaxResourceBytes <= 0:
		return fmt.Errorf("mcp.max-request-bytes and mcp.max-resource-bytes must be positive")
	}
	return nil
}

// Option sets a dependency of the handler.
type Option func(*Handler)

// WithAudit records every request /mcp refuses (401, 403, 404, 429) in the
// audit log the gRPC services write their denials to.
func WithAudit(l *audit.Logger) Option { return func(h *Handler) { h.audit = l } }

// WithRegisterer registers the handler's metrics.
func WithRegisterer(reg prometheus.Registerer) Option { return func(h *Handler) { h.reg = reg } }

// Limiter admits one call of a user, or refuses it with a retry delay, and
// charges a user for what a call cost (quota.Limiter).
type Limiter interface {
	Acquire(ctx context.Context, user string) (release func(), err error)
	Charge(user string, cost quota.Cost)
}

// WithLimits admits each MCP request once against its caller's per-user
// limits, and charges the caller for the storage requests its handlers
// make, by the gRPC calls' cost table (quota.StorageCost).
func WithLimits(l Limiter) Option { return func(h *Handler) { h.limits = l } }

// WithPanicCounter counts the panics the handler recovers (the server's
// skillsvc_http_panics_total{handler="mcp"}).
func WithPanicCounter(c prometheus.Counter) Option { return func(h *Handler) { h.panics = c } }

// WithFeed drives the sessions' change notifications from the catalog's
// change feed; without it none are sent.
func WithFeed(f *watch.Feed) Option { return func(h *Handler) { h.feed = f } }

// WithMounts sets the server's mount table (--mounts), whose identity check
// /mcp applies before keeping a session, and where in it the skills library
// is mounted (--skills.mount). Without it: mounts.Default() and "/skills".
func WithMounts(table *mounts.Table, skillsMount string) Option {
	return func(h *Handler) { h.mounts, h.skillsMount = table, skillsMount }
}

// Catalog is what MCP asks of the skills catalog (*skills.Catalog): its
// plain queries, each as the caller ServeHTTP verified.
type Catalog interface {
	Page(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, pageSize int32, token string) (skillview.Page, error)
	Get(ctx context.Context, id mounts.Caller, ref string) (skillview.Detail, error)
	Prompt(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, f skillmd.FormatOptions) (skillview.Block, error)
	Render(ctx context.Context, id mounts.Caller, ref string, opts skillview.RenderOptions) (string, skillview.Detail, error)
	ReadSkillFile(ctx context.Context, id mounts.Caller, ref, file string, opts skillview.ReadOptions) (content, vpath string, skill *skillview.Ref, err error)
	Search(ctx context.Context, id mounts.Caller, opts skillview.SearchOptions) (skillview.Results, error)
	// MaxPageBytes bounds a search's reply (server.SearchFit).
	MaxPageBytes() int
}

// Handler is the MCP endpoint, an http.Handler for /mcp.
type Handler struct {
	cfg Config
	// mounts and skillsMount are the server's mount table and where the
	// skills library is in it (WithMounts).
	mounts      *mounts.Table
	skillsMount string
	authn       auth.Authenticator
	audit       *audit.Logger
	reg         prometheus.Registerer
	metrics     *metrics
	limits      Limiter     // WithLimits; unlimited without
	feed        *watch.Feed // WithFeed; no notifications without
	panics      prometheus.Counter
	tracer      trace.Tracer      // WithTracerProvider; nil: no spans
	usage       skilluse.Recorder // WithUsage
	log         *slog.Logger
	catalog     Catalog
	fs          *vfs.FS
	// entryMeta and pageMeta: skills/get and skills/list entries' _meta
	// (WithEntryMeta); none without.
	entryMeta func(ctx context.Context, id mounts.Caller, sk *skillview.Skill) (map[string]any, error)
	pageMeta  func(ctx context.Context, id mounts.Caller, skills []skillview.Skill) ([]map[string]any, error)
	calls     calls // the verified calls of the requests being served
	http      *mcp.StreamableHTTPHandler
	// statelessHTTP serves protocol 2026-07-28 and later, on modern.
	statelessHTTP *mcp.StreamableHTTPHandler
	modern        *identityServer
	// secret keys identity hashes, so a session ID names its identity
	// without revealing it.
	secret []byte

	ctx    context.Context // ends with Close: stops every watcher
	cancel context.CancelFunc

	sessions sessionTable
	watchers sync.WaitGroup
}

// New returns the MCP handler serving the skills catalog and the
// filesystem fsys (WithFeed adds the change feed). authn is the gRPC
// server's authenticator: it verifies each request once, and a request it
// refuses is answered 401 before any session or per-identity state exists.
func New(catalog Catalog, fsys *vfs.FS, authn auth.Authenticator, cfg Config, log *slog.Logger, opts ...Option) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{
		cfg:         cfg,
		mounts:      mounts.Default(),
		skillsMount: "/skills",
		limits:      unlimited{},
		authn:       authn,
		log:         log,
		catalog:     catalog,
		fs:          fsys,
		secret:      make([]byte, 32),
	}
	for _, o := range opts {
		o(h)
	}
	if h.mounts == nil {
		h.mounts = mounts.Default()
	}
	if h.skillsMount == "" {
		h.skillsMount = "/skills"
	}
	h.metrics = newMetrics(h.reg)
	rand.Read(h.secret)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.sessions.init(h)
	h.http = mcp.NewStreamableHTTPHandler(h.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(log),
		SessionTimeout:      cfg.SessionTimeout,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
	})
	// Protocol 2026-07-28 has no sessions: each request carries what it
	// needs, and the SDK serves it only statelessly. One server answers
	// every caller, each request with its own verified headers.
	h.modern = h.newIdentityServer("", "", true)
	h.statelessHTTP = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.modern.srv }, &mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(log),
		Stateless:           true,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
	})
	return h, nil
}

// modernProtocol is the first protocol revision without sessions.
const modernProtocol = "2026-07-28"

// isModern reports whether r speaks a sessionless revision: its
// MCP-Protocol-Version header (revisions are dates, so they order as
// text). A 2025 client sends the header only after initialize.
func isModern(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= modernProtocol
}

// Close stops the watchers and closes the open sessions.
func (h *Handler) Close() {
	h.cancel()
	h.sessions.closeAll()
	h.watchers.Wait()
}

// ServeHTTP checks who is calling, that an existing session is theirs and
// that a new one fits, and that the body's JSON-RPC messages are well
// formed for their methods, then hands the request to the SDK. Every
// refusal here is audited.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := requestid.NewContext(r.Context(), requestid.Pick(r.Header.Values(requestid.Key)))
	// A panic in the SDK's HTTP layer stays with this request; handlers'
	// panics (in the session's own goroutines) are caught by recoverPanics.
	defer func() {
		if p := recover(); p != nil {
			if !panics.Recovered(h.log, h.panics, "mcp", p) {
				panic(p)
			}
			wire.WriteError(w, http.StatusInternalServerError, nil, jsonrpc.CodeInternalError, "internal error")
		}
	}()
	refuse := func(ctx context.Context, httpCode int, code codes.Code, msg string) {
		h.audit.Refused(ctx, "/mcp", start, status.Error(code, msg))
		switch httpCode {
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="skillsvc"`)
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "1")
		}
		wire.WriteError(w, httpCode, nil, jsonrpc.CodeInvalidRequest, msg)
	}
	if r.Header.Get(auth.UserKey) == "" && r.Header.Get(auth.AuthorizationKey) == "" {
		refuse(ctx, http.StatusUnauthorized, codes.Unauthenticated, "missing identity: send X-Skillsvc-User and X-Skillsvc-Thread, or Authorization: Bearer <token>")
		return
	}
	// Refused callers get no session, identity server or watcher: a flood
	// of forged tokens costs a token check each, and evicts no one.
	p, err := h.authn.Authenticate(ctx, auth.HTTPHeaders(r.Header))
	if err != nil {
		refuse(ctx, http.StatusUnauthorized, codes.Unauthenticated, err.Error()) // never echoes the token
		return
	}
	if err := p.Choose(auth.HTTPHeaders(r.Header)); err != nil {
		code, msg := http.StatusBadRequest, codes.InvalidArgument
		if errors.Is(err, errkind.PermissionDenied) {
			code, msg = http.StatusForbidden, codes.PermissionDenied
		}
		refuse(ctx, code, msg, err.Error())
		return
	}
	// The pin is asked per request, beside the token (auth.PinKey).
	if err := p.AskPin(auth.HTTPHeaders(r.Header)); err != nil {
		refuse(ctx, http.StatusBadRequest, codes.InvalidArgument, err.Error())
		return
	}
	ctx = auth.NewContext(ctx, p)
	caller, err := p.Agent(h.mounts)
	switch {
	case errors.Is(err, auth.ErrNoAgent):
		refuse(ctx, http.StatusUnauthorized, codes.Unauthenticated, "unauthenticated: MCP needs an agent identity (a user and a thread)")
		return
	case err != nil:
		// Insecure mode passes IDs as sent; refused here before a
		// session is kept for them.
		refuse(ctx, http.StatusBadRequest, codes.InvalidArgument, err.Error())
		return
	}
	p.Caller = caller
	ctx = auth.NewContext(ctx, p)
	// Sessions belong to the identity the authenticator verified: in jwt
	// mode the token's claims, never headers it ignores. A session ID
	// starts with that identity's key, so a request with another
	// identity is told the session does not exist, as the transport
	// specifies for an unknown session (the client starts over).
	key := h.key(caller)
	modern := isModern(r)
	sid := r.Header.Get("Mcp-Session-Id")
	if modern {
		sid = "" // sessionless: an ID means nothing and opens nothing
	}
	if sid != "" {
		if !strings.HasPrefix(sid, key+".") {
			refuse(ctx, http.StatusNotFound, codes.NotFound, "session not found")
			return
		}
		h.sessions.touch(sid)
	}
	var body wire.Info
	if r.Method == http.MethodPost {
		data, ok := h.readBody(w, r, func(msg string) { refuse(ctx, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, msg) })
		if !ok {
			return
		}
		var rejected bool
		if body, rejected = wire.Check(w, data, modern); rejected {
			return
		}
	}
	// Each request is admitted once against the caller's per-user limits,
	// paying a call's cost (quota.CallCost) as a gRPC call does; the
	// storage requests its handlers make are charged to the caller by the
	// same cost table (withCaller). A POST of notifications only is
	// admitted too, as any HTTP request.
	units := body.Calls
	if r.Method == http.MethodPost {
		units = max(units, 1)
	}
	for range units {
		release, err := h.limits.Acquire(ctx, p.User)
		if err != nil {
			writeLimited(w, body.ID, err)
			return
		}
		defer release()
	}
	// The handlers find the verified principal by this request's headers
	// (withCaller); a value the client sent is replaced.
	name, done := h.calls.add(&verified{p: p, rid: requestid.From(ctx)})
	defer done()
	r.Header.Set(callHeader, name)
	r = h.withTraceHeaders(ctx, r)
	if modern {
		h.statelessHTTP.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	if sid == "" && body.Opens {
		adm, release, err := h.sessions.admit(key, caller.User())
		if err != nil {
			refuse(ctx, http.StatusTooManyRequests, codes.ResourceExhausted, err.Error())
			return
		}
		defer release()
		// The session's handlers run with this request's context values.
		ctx = context.WithValue(ctx, admissionCtx{}, adm)
	}
	sw := &statusWriter{ResponseWriter: w}
	ctx = context.WithValue(ctx, callerCtx{}, caller)
	h.http.ServeHTTP(sw, r.WithContext(context.WithValue(ctx, keyCtx{}, key)))
	switch {
	case sw.code == http.StatusForbidden:
		// The SDK's own refusals (DNS rebinding and cross-origin checks).
		h.audit.Refused(ctx, "/mcp", start, status.Error(codes.PermissionDenied, "forbidden by the MCP transport's origin checks"))
	case r.Method == http.MethodDelete && sid != "":
		// The SDK closed the session before answering: free its slot now,
		// so the client can open another at once.
		h.sessions.forget(sid)
	}
}

// statusWriter notes the status the SDK answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps the SDK's event streams streaming.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

type keyCtx struct{}

// callerCtx holds the request's verified mounts.Caller, which the
// identity's watcher subscribes to the feed as.
type callerCtx struct{}

// key names a verified identity in session IDs and caches: an HMAC, so
// neither reveals who it is.
func (h *Handler) key(id mounts.Caller) string {
	m := hmac.New(sha256.New, h.secret)
	// The teams, scope and harness are part of who calls: they decide
	// which skills its sessions list.
	for _, v := range []string{id.User(), id.Thread(), id.Ticket(), id.Identity().Teams, id.Scope(), id.Harness()} {
		fmt.Fprintf(m, "%d:%s", len(v), v)
	}
	return hex.EncodeToString(m.Sum(nil)[:12])
}

// serverFor returns the MCP server of the identity ServeHTTP admitted. A
// request without a session that opens none (a server/discover probe)
// gets a server of its own that lives as long as the request and watches
// nothing.
func (h *Handler) serverFor(r *http.Request) *mcp.Server {
	key, _ := r.Context().Value(keyCtx{}).(string)
	p, _ := auth.PrincipalFrom(r.Context())
	s := h.sessions.server(key, p)
	if s == nil {
		return h.newIdentityServer(key, "", false).srv
	}
	caller, _ := r.Context().Value(callerCtx{}).(mounts.Caller)
	s.startWatching(caller)
	return s.srv
}

// identityServer is one caller's MCP server and its state. It lives while
// the identity has sessions or a request opening one.
type identityServer struct {
	h    *Handler
	key  string
	user string // whose per-user limits the watcher's checks count against
	srv  *mcp.Server
	// stateless serves every caller (protocol 2026-07-28): identities come
	// from each request alone, never from an earlier one.
	stateless bool

	// open and pending count the identity's sessions and the initialize
	// requests in flight; guarded by the session table's lock.
	open, pending int

	mu         sync.Mutex
	p          auth.Principal // of the latest request, which the watcher acts as
	watching   bool
	subscribed map[string]int    // URI → subscribing sessions
	versions   map[string]string // subscribed URI → ETag when last looked
}

// newIdentityServer returns the server of one identity, or with stateless
// the one server of sessionless requests, which watches nothing: its
// callers learn of changes by the listings' ttlMs.
func (h *Handler) newIdentityServer(key, user string, stateless bool) *identityServer {
	s := &identityServer{h: h, key: key, user: user, stateless: stateless, subscribed: map[string]int{}, versions: map[string]string{}}
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(h.log),
		GetSessionID: func() string { return key + "." + rand.Text() },
		Capabilities: &mcp.ServerCapabilities{
			Resources: &mcp.ResourceCapabilities{ListChanged: !stateless},
			Tools:     &mcp.ToolCapabilities{ListChanged: false},
			// No prompts: none are served, so none are declared, and
			// prompts/* are answered -32601 before the SDK (which would
			// answer an empty list, and a server that answers one must
			// declare it) sees them.
			Extensions: map[string]any{
				extensionName: extensionCapability(),
			},
		},
	}
	if !stateless {
		opts.SubscribeHandler, opts.UnsubscribeHandler = s.subscribe, s.unsubscribe
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "skillsvc", Version: "v1"}, opts)
	// recoverPanics outermost but for the span, so it also covers
	// withCaller and the span sees its answer.
	s.srv.AddReceivingMiddleware(s.traceRequests, s.recoverPanics, s.withCaller, s.trackSessions, s.resourceMethods)
	s.addExtension()
	s.addTools()
	return s
}

const instructions = `skillsvc serves this user's skills library and files.
Skills: skills/list (or the list_skills tool) names them; load a skill's instructions with load_skill
(or read skill://<category>/<skill>/SKILL.md), and its other files with read_skill_file.
Files: /workspace is this thread's scratch space (read/write), /ticket the ticket's files,
/skills the skills library (read-only); use ls, read_file, write_file, edit_file, glob and grep.`

// recoverPanics keeps a handler's panic to its request: the SDK runs
// handlers in goroutines of its own, where an unrecovered panic ends the
// process and every tenant's calls with it.
func (s *identityServer) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				if !panics.Recovered(s.h.log, s.h.panics, "mcp "+method, p) {
					panic(p)
				}
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
		}()
		return next(ctx, method, req)
	}
}

// trackSessions counts a session once its initialize succeeded.
func (s *identityServer) trackSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "initialize" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				adm, _ := ctx.Value(admissionCtx{}).(*admission)
				s.h.sessions.add(adm, s, ss)
			}
		}
		return res, err
	}
}

func (s *identityServer) latest() auth.Principal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}
