package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/gateway"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/quota"
)

// httpDeps are what the HTTP endpoints are built on: json and mcp are
// connections to in-process copies of the gRPC server, the JSON one with
// the per-user limits (one HTTP request is one call), the MCP one without
// (the MCP handler counts each request against limits itself).
type httpDeps struct {
	json, mcp *grpc.ClientConn
	limits    *quota.Limiter
	authn     auth.Authenticator
	audit     *audit.Logger
	reg       prometheus.Registerer
	panics    *prometheus.CounterVec
	events    http.Handler // the S3 event endpoint, or nil
}

// newHTTPServer serves the HTTP endpoints: MCP at /mcp (internal/mcpserver),
// every RPC as JSON (internal/gateway) and, when configured, S3 event
// notifications at --events.path (internal/events). A panic in any handler
// answers its own request only (panics.Handler).
func newHTTPServer(ctx context.Context, cfg Config, d httpDeps, log *slog.Logger) (*http.Server, error) {
	jsonAPI, err := gateway.New(ctx, d.json)
	if err != nil {
		return nil, err
	}
	mcpAPI, err := mcpserver.New(d.mcp, d.authn, cfg.MCP, log.With("component", "mcp"),
		mcpserver.WithMounts(cfg.Mounts, cfg.Skills.Mount), mcpserver.WithAudit(d.audit), mcpserver.WithRegisterer(d.reg),
		mcpserver.WithLimits(d.limits), mcpserver.WithPanicCounter(d.panics.WithLabelValues("mcp")))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpAPI)
	jsonAPI = panics.Handler(jsonAPI, log, d.panics.WithLabelValues("json"), "json")
	mux.Handle("POST /skillsvc.v1.FilesystemService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.SkillsService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.AdminService/", jsonAPI)
	if d.events != nil {
		// Authenticated by its own token, not the callers' (internal/events).
		mux.Handle("POST "+cfg.Events.Path, panics.Handler(d.events, log, d.panics.WithLabelValues("events"), "events"))
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Shutdown ends the sessions' streams; Close stops the library watchers.
	srv.RegisterOnShutdown(mcpAPI.Close)
	return srv, nil
}
