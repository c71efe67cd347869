// Package mcpserver serves skillsvc over the Model Context Protocol
// (Streamable HTTP, on the official Go SDK) for agent hosts that speak MCP
// rather than gRPC:
//
//   - the skills extension (io.modelcontextprotocol/skills): skills/list and
//     skills/get with every file's sha256 digest, and skill://<skill>/<file>
//     resources (extension.go);
//   - tools for hosts without the extension: the skills prompt block,
//     load_skill, and filesystem tools over the caller's mounts (tools.go);
//   - notifications/resources/list_changed when the caller's library
//     changes, and resources/updated for subscribed files (watch.go).
//
// Every MCP request is answered by calling the gRPC services over a
// connection — in the binary, server.Loopback's in-process server — with the
// caller's identity headers as metadata, so authentication, per-user limits,
// audit and the error table are the gRPC ones and no RPC has a second
// implementation. There is one logical MCP server per caller identity
// (user, thread, ticket or bearer token), and a session stays bound to the
// identity that opened it.
package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Config holds the MCP endpoint's settings.
type Config struct {
	WatchInterval    time.Duration
	SessionTimeout   time.Duration
	MaxIdentities    int
	MaxSessions      int
	SkillsPageSize   int
	DigestCacheSize  int
	MaxRequestBytes  int64
	MaxResourceBytes int64
	ListingTTL       time.Duration

	// SkillsMount is where the skills library is mounted (--skills.mount);
	// set by main, not a flag of its own.
	SkillsMount string
	// Mounts is the server's mount table (--mounts), whose identity check
	// /mcp applies before keeping a session; set by main, nil for the
	// default table.
	Mounts *mounts.Table
}

// RegisterFlagsWithPrefix registers the flags under prefix (e.g. "mcp.").
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.DurationVar(&c.WatchInterval, prefix+"watch-interval", 30*time.Second, "How often the library of an identity with open MCP sessions is checked for changes (notifications/resources/list_changed); changes made with other S3 tools show up after --skills.index-refresh on top.")
	f.DurationVar(&c.SessionTimeout, prefix+"session-timeout", 30*time.Minute, "Idle time after which an MCP session is closed; 0 keeps sessions until the client ends them.")
	f.IntVar(&c.MaxIdentities, prefix+"max-identities", 4096, "Caller identities whose MCP server state (digests, watcher) is kept per replica; the least recently used is dropped first.")
	f.IntVar(&c.MaxSessions, prefix+"max-sessions-per-identity", 32, "Open MCP sessions one caller identity may hold per replica; one more initialize is answered 429 until a session ends or times out.")
	f.IntVar(&c.SkillsPageSize, prefix+"skills-page-size", 50, "Skills per skills/list page.")
	f.IntVar(&c.DigestCacheSize, prefix+"digest-cache-size", 65536, "File digests kept per replica, by caller, key and ETag, so skills/list reads a file once per version.")
	f.Int64Var(&c.MaxRequestBytes, prefix+"max-request-bytes", 24<<20, "Largest MCP request body.")
	f.Int64Var(&c.MaxResourceBytes, prefix+"max-resource-bytes", 16<<20, "Largest file resources/read returns (the skills extension's per-skill limit is 16 MiB).")
	f.DurationVar(&c.ListingTTL, prefix+"listing-ttl", 30*time.Second, "The ttlMs hint on skills/list and skills/get results.")
}

// RegisterFlags registers the flags with the "mcp." prefix.
func (c *Config) RegisterFlags(f *flag.FlagSet) { c.RegisterFlagsWithPrefix("mcp.", f) }

// Validate checks the settings.
func (c *Config) Validate() error {
	switch {
	case c.WatchInterval <= 0:
		return fmt.Errorf("mcp.watch-interval must be positive")
	case c.MaxIdentities <= 0, c.MaxSessions <= 0, c.SkillsPageSize <= 0, c.DigestCacheSize <= 0:
		return fmt.Errorf("mcp.max-identities, mcp.max-sessions-per-identity, mcp.skills-page-size and mcp.digest-cache-size must be positive")
	case c.MaxRequestBytes <= 0, c.MaxResourceBytes <= 0:
		return fmt.Errorf("mcp.max-request-bytes and mcp.max-resource-bytes must be positive")
	}
	return nil
}

// Handler is the MCP endpoint, an http.Handler for /mcp.
type Handler struct {
	cfg     Config
	authn   auth.Authenticator
	log     *slog.Logger
	fs      skillsvcv1.FilesystemServiceClient
	skills  skillsvcv1.SkillsServiceClient
	http    *mcp.StreamableHTTPHandler
	digests *lru.Cache[string, digest]
	// secret keys identity hashes, so a session ID names its identity
	// without revealing it.
	secret []byte

	ctx    context.Context // ends with Close: stops every watcher
	cancel context.CancelFunc

	mu         sync.Mutex
	identities *lru.Cache[string, *identityServer]
	watchers   sync.WaitGroup
}

// New returns the MCP handler calling the services over conn. authn is
// the gRPC server's authenticator: a request it refuses is answered 401
// before any session or per-identity state exists (the calls the session
// makes are authenticated again by the gRPC interceptors).
func New(conn grpc.ClientConnInterface, authn auth.Authenticator, cfg Config, log *slog.Logger) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SkillsMount == "" {
		cfg.SkillsMount = "/skills"
	}
	if cfg.Mounts == nil {
		cfg.Mounts = mounts.Default()
	}
	h := &Handler{
		cfg:    cfg,
		authn:  authn,
		log:    log,
		fs:     skillsvcv1.NewFilesystemServiceClient(conn),
		skills: skillsvcv1.NewSkillsServiceClient(conn),
		secret: make([]byte, 32),
	}
	rand.Read(h.secret)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	var err error
	if h.digests, err = lru.New[string, digest](cfg.DigestCacheSize); err != nil {
		return nil, err
	}
	if h.identities, err = lru.New[string, *identityServer](cfg.MaxIdentities); err != nil {
		return nil, err
	}
	h.http = mcp.NewStreamableHTTPHandler(h.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              log,
		SessionTimeout:      cfg.SessionTimeout,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
	})
	return h, nil
}

// Close stops the watchers. Open sessions end with the HTTP server.
func (h *Handler) Close() {
	h.cancel()
	h.watchers.Wait()
}

// ServeHTTP checks that the request names a caller and, on an existing
// session, that it is the caller who opened it, then hands it to the SDK.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := identityOf(r.Header)
	if id.empty() {
		writeUnauthenticated(w, "missing identity: send X-Skillsvc-User and X-Skillsvc-Thread, or Authorization: Bearer <token>")
		return
	}
	// Refused callers get no session, identity server or watcher: a flood
	// of forged tokens costs a token check each, and evicts no one.
	if p, err := h.authn.Authenticate(r.Context(), auth.HTTPHeaders(r.Header)); err != nil {
		writeUnauthenticated(w, err.Error()) // never echoes the token
		return
	} else if p.User == "" || p.Thread == "" {
		writeUnauthenticated(w, "unauthenticated: MCP needs an agent identity (a user and a thread)")
		return
	} else if err := h.cfg.Mounts.ValidateIdentity(p.Identity); err != nil {
		// Insecure mode passes IDs as sent; over gRPC the mount table
		// refuses them per call, here before a session is kept for them.
		writeHTTPError(w, http.StatusBadRequest, err.Error())
		return
	}
	// A session ID starts with its identity's key: a request with another
	// identity's headers is told the session does not exist, as the
	// transport specifies for an unknown session (the client starts over).
	key := h.key(id)
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" && !strings.HasPrefix(sid, key+".") {
		writeHTTPError(w, http.StatusNotFound, "session not found")
		return
	}
	// A POST without a session may open one: sessions are memory held
	// until they end or time out, so one identity's are capped.
	if sid == "" && r.Method == http.MethodPost && h.sessions(key) >= h.cfg.MaxSessions {
		w.Header().Set("Retry-After", "1")
		writeHTTPError(w, http.StatusTooManyRequests, fmt.Sprintf(
			"too many MCP sessions: this caller holds %d (--mcp.max-sessions-per-identity); end one (HTTP DELETE) or reuse it", h.cfg.MaxSessions))
		return
	}
	h.http.ServeHTTP(w, r)
}

func writeUnauthenticated(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="skillsvc"`)
	writeHTTPError(w, http.StatusUnauthorized, msg)
}

func writeHTTPError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":%q}}`, msg)
}

// identity is who is calling, as the gRPC metadata carries it.
type identity struct {
	user, thread, ticket, authorization string
}

func identityOf(h http.Header) identity {
	return identity{
		user:          h.Get("X-Skillsvc-User"),
		thread:        h.Get("X-Skillsvc-Thread"),
		ticket:        h.Get("X-Skillsvc-Ticket"),
		authorization: h.Get("Authorization"),
	}
}

func (id identity) empty() bool { return id.user == "" && id.authorization == "" }

// metadata is the identity as gRPC metadata: the interceptors authenticate
// it exactly as a gRPC call's.
func (id identity) metadata() metadata.MD {
	md := metadata.MD{}
	for k, v := range map[string]string{
		"x-skillsvc-user":   id.user,
		"x-skillsvc-thread": id.thread,
		"x-skillsvc-ticket": id.ticket,
		"authorization":     id.authorization,
	} {
		if v != "" {
			md.Set(k, v)
		}
	}
	return md
}

// key names an identity in session IDs and caches: an HMAC, so neither
// reveals a token.
func (h *Handler) key(id identity) string {
	m := hmac.New(sha256.New, h.secret)
	for _, v := range []string{id.user, id.thread, id.ticket, id.authorization} {
		fmt.Fprintf(m, "%d:%s", len(v), v)
	}
	return hex.EncodeToString(m.Sum(nil)[:12])
}

// sessions counts the initialized sessions of the identity with key. A
// session that never initialized is not one: the SDK's client probes with
// server/discover first, which the stateful handler answers on a throwaway
// session it closes only after the answer is sent, so the client's
// initialize can arrive while the probe's session is still listed.
func (h *Handler) sessions(key string) int {
	h.mu.Lock()
	s, ok := h.identities.Peek(key)
	h.mu.Unlock()
	n := 0
	if ok {
		for ss := range s.srv.Sessions() {
			if ss.InitializeParams() != nil {
				n++
			}
		}
	}
	return n
}

// serverFor returns the identity's MCP server, creating it on first use.
func (h *Handler) serverFor(r *http.Request) *mcp.Server {
	id := identityOf(r.Header)
	key := h.key(id)
	h.mu.Lock()
	s, ok := h.identities.Get(key)
	if !ok {
		s = h.newIdentityServer(id, key)
		h.identities.Add(key, s)
	}
	h.mu.Unlock()
	s.startWatching()
	return s.srv
}

// identityServer is one caller's MCP server and its state.
type identityServer struct {
	h   *Handler
	id  identity
	key string
	srv *mcp.Server

	mu          sync.Mutex
	watching    bool
	fingerprint string            // of the library when last looked
	subscribed  map[string]int    // URI → subscribing sessions
	versions    map[string]string // subscribed URI → ETag when last looked
}

func (h *Handler) newIdentityServer(id identity, key string) *identityServer {
	s := &identityServer{h: h, id: id, key: key, subscribed: map[string]int{}, versions: map[string]string{}}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "skillsvc", Version: "v1"}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       h.log,
		GetSessionID: func() string { return key + "." + rand.Text() },
		Capabilities: &mcp.ServerCapabilities{
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Tools:     &mcp.ToolCapabilities{ListChanged: false},
			Extensions: map[string]any{
				extensionName: map[string]any{},
			},
		},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	})
	s.srv.AddReceivingMiddleware(s.withIdentity)
	s.addExtension()
	s.addTools()
	return s
}

const instructions = `skillsvc serves this user's skills library and files.
Skills: skills/list (or the list_skills tool) names them; load a skill's instructions with load_skill
(or read skill://<category>/<skill>/SKILL.md), and its other files with read_skill_file.
Files: /workspace is this thread's scratch space (read/write), /ticket the ticket's files,
/skills the skills library (read-only); use ls, read_file, write_file, edit_file, glob and grep.`

// withIdentity puts the caller's identity, and the HTTP request's
// X-Request-Id, into every gRPC call a request makes.
func (s *identityServer) withIdentity(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		md := s.id.metadata()
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			if rid := extra.Header.Get("X-Request-Id"); rid != "" {
				md.Set("x-request-id", rid)
			}
		}
		return next(metadata.NewOutgoingContext(ctx, md), method, req)
	}
}

// callCtx is the context for a call the server makes on its own (the
// watcher), with the identity's metadata.
func (s *identityServer) callCtx(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, s.id.metadata())
}
