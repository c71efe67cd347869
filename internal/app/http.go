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
)

// newHTTPServer serves the HTTP endpoints over conn, a connection to the
// in-process gRPC server: MCP at /mcp (internal/mcpserver) and every RPC as
// JSON (internal/gateway).
// A panic in any handler answers its own request only (panics.Handler).
func newHTTPServer(ctx context.Context, cfg Config, conn *grpc.ClientConn, authn auth.Authenticator, auditLog *audit.Logger, reg prometheus.Registerer, httpPanics *prometheus.CounterVec, log *slog.Logger) (*http.Server, error) {
	jsonAPI, err := gateway.New(ctx, conn)
	if err != nil {
		return nil, err
	}
	mcpAPI, err := mcpserver.New(conn, authn, cfg.MCP, log.With("component", "mcp"),
		mcpserver.WithMounts(cfg.Mounts, cfg.Skills.Mount), mcpserver.WithAudit(auditLog), mcpserver.WithRegisterer(reg), mcpserver.WithPanicCounter(httpPanics.WithLabelValues("mcp")))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpAPI)
	jsonAPI = panics.Handler(jsonAPI, log, httpPanics.WithLabelValues("json"), "json")
	mux.Handle("POST /skillsvc.v1.FilesystemService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.SkillsService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.AdminService/", jsonAPI)
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
