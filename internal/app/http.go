package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/gateway"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/provenance"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/tracing"
	"github.com/skillsvc/skillsvc/internal/usage"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
	"github.com/skillsvc/skillsvc/internal/wellknown"
)

// httpDeps are what the HTTP endpoints are built on: json is an in-process
// channel to the services (server.InProcess), with the per-user limits (one
// HTTP request is one call); MCP calls the catalog and the filesystem
// directly, and counts each request against the limits itself.
type httpDeps struct {
	json    grpc.ClientConnInterface
	catalog *skills.Catalog
	fs      *vfs.FS
	limits  *quota.Limiter
	authn   auth.Authenticator
	audit   *audit.Logger
	reg     prometheus.Registerer
	panics  *prometheus.CounterVec
	tracer  trace.TracerProvider // nil: tracing off
	events  http.Handler         // the S3 event endpoint, or nil
	feed    *watch.Feed          // MCP's change notifications
	usage   usage.Recorder       // MCP's uses of skills
	// provenance: skills/get and skills/list entries' _meta.
	provenance provenance.Lookup
}

// newHTTPServer serves the HTTP endpoints: MCP at /mcp (internal/mcpserver),
// every RPC as JSON (internal/gateway), the Agent Skills discovery index at
// /.well-known/agent-skills/ (internal/wellknown) and, when configured, S3 event
// notifications at --events.path (internal/events). A panic in any handler
// answers its own request only (panics.Handler).
func newHTTPServer(ctx context.Context, cfg Config, d httpDeps, log *slog.Logger) (*http.Server, error) {
	jsonAPI, err := gateway.New(ctx, d.json)
	if err != nil {
		return nil, err
	}
	mcpOpts := []mcpserver.Option{mcpserver.WithMounts(cfg.Mounts, cfg.Skills.Mount), mcpserver.WithAudit(d.audit), mcpserver.WithRegisterer(d.reg),
		mcpserver.WithLimits(d.limits), mcpserver.WithFeed(d.feed), mcpserver.WithPanicCounter(d.panics.WithLabelValues("mcp")), mcpserver.WithUsage(d.usage)}
	if d.tracer != nil {
		mcpOpts = append(mcpOpts, mcpserver.WithTracerProvider(d.tracer))
	}
	if d.provenance.Pub != nil {
		mcpOpts = append(mcpOpts, mcpserver.WithEntryMeta(d.provenance.EntryMeta, d.provenance.PageMeta))
	}
	mcpAPI, err := mcpserver.New(d.catalog, d.fs, d.authn, cfg.MCP, log.With("component", "mcp"), mcpOpts...)
	if err != nil {
		return nil, err
	}
	timed := httpDurations(d.reg)
	mux := http.NewServeMux()
	mux.Handle("/mcp", timed("mcp", mcpAPI))
	jsonAPI = timed("json", panics.Handler(jsonAPI, log, d.panics.WithLabelValues("json"), "json"))
	mux.Handle("POST /skillsvc.v1.FilesystemService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.SkillsService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.AdminService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.LibraryService/", jsonAPI)
	mux.Handle("POST /skillsvc.v1.UsageService/", jsonAPI)
	// The Agent Skills discovery draft's index and artifacts, per caller,
	// through the same channel as the JSON API (GET also routes HEAD).
	mux.Handle("GET "+wellknown.Prefix, timed("wellknown",
		panics.Handler(wellknown.New(d.json), log, d.panics.WithLabelValues("wellknown"), "wellknown")))
	if d.events != nil {
		// Authenticated by its own token, not the callers' (internal/events).
		mux.Handle("POST "+cfg.Events.Path, panics.Handler(d.events, log, d.panics.WithLabelValues("events"), "events"))
	}
	var handler http.Handler = mux
	if d.tracer != nil {
		// A server span per request, continuing the caller's W3C trace
		// context, named for the route it took ("POST /mcp").
		handler = otelhttp.NewHandler(mux, "skillsvc", otelhttp.WithTracerProvider(d.tracer),
			otelhttp.WithPropagators(tracing.Propagator), otelhttp.WithMeterProvider(noopmetric.NewMeterProvider()))
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Shutdown ends the sessions' streams; Close stops the library watchers.
	srv.RegisterOnShutdown(mcpAPI.Close)
	return srv, nil
}

// httpDurations returns a wrapper that times the requests of one HTTP
// handler (mcp, json or wellknown) by method and status code. An MCP request is timed
// as a whole, however many in-process gRPC calls it made; a GET on /mcp is a
// notification stream, timed when it closes.
func httpDurations(reg prometheus.Registerer) func(handler string, h http.Handler) http.Handler {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "skillsvc_http_request_duration_seconds",
		Help:    "Duration of HTTP requests to /mcp, the JSON API and /.well-known/agent-skills/, by handler (mcp, json or wellknown), method and status code.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"handler", "method", "code"})
	reg.MustRegister(vec)
	return func(handler string, h http.Handler) http.Handler {
		// The usual series exists from the start, so rates are defined
		// before traffic.
		vec.WithLabelValues(handler, "post", "200")
		return promhttp.InstrumentHandlerDuration(vec.MustCurryWith(prometheus.Labels{"handler": handler}), h)
	}
}
