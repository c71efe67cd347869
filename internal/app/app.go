// Package app assembles skillsvc: Config registers every component's flags,
// New builds every service from a Config, and Run owns the listeners,
// readiness and the drain order. cmd/skillsvc parses flags and calls them;
// tests that serve in memory assemble the services with the same
// NewServices (with DefaultConfig).
package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/certs"
	"github.com/skillsvc/skillsvc/internal/embed"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/probe"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/tracing"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// livenessService is the health service name of the liveness probe.
const livenessService = "liveness"

// writesService is the health service name that says whether writes are
// taken: NOT_SERVING while a store that ignores conditional writes is
// served read-only (--s3.read-only-if-unsafe; the log says what it
// ignored), while reads stay SERVING.
const writesService = "writes"

// NewLogger is the logger cfg asks for (--log.level, --log.format),
// writing to w.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	// A line logged in a traced call names its trace and span.
	return slog.New(tracing.LogHandler(h))
}

// App is one skillsvc: every service built, no listener open yet.
type App struct {
	cfg          Config
	log          *slog.Logger
	tls          *certs.Server // nil without --tls.*
	grpc         *grpc.Server
	health       *health.Server
	checkStorage func(context.Context) error
	writes       *objstore.Guarded // nil when nothing can refuse writes
	http         *http.Server      // nil without --http.listen
	metrics      *http.Server      // nil without --metrics.listen
	feed         *watch.Feed       // closed first in the drain: watches never end by themselves

	closers   []func() // run last first by Close
	closeOnce sync.Once
}

// New builds every service cfg asks for: storage (checked once), the cache,
// the skills library, the filesystem, authentication, the audit log,
// per-user limits, TLS, the gRPC server with the interceptor chain, and the
// HTTP and metrics servers. ctx bounds start-up and the background work of
// the authenticator and the HTTP endpoints. Run serves it; an App that
// never runs is released with Close. Traces go where the OTEL_*
// environment says (openTracing: nowhere by default) unless an option
// gives a tracer provider.
func New(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (_ *App, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a := &App{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			a.Close() // what was built before the failure
		}
	}()
	tp := o.tracer
	if tp == nil {
		var shutdown func()
		if tp, shutdown, err = openTracing(ctx, log); err != nil {
			return nil, err
		}
		// Closed last, after every server: their last spans are flushed.
		a.onClose(shutdown)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bucket, checkStorage, writes, closeBucket, err := openBucket(ctx, cfg, reg, log)
	if err != nil {
		return nil, err
	}
	a.checkStorage, a.writes = checkStorage, writes
	a.onClose(closeBucket)
	// Every Redis key, value and channel of this deployment (the cache's,
	// the events' and the feed's topics) is bound to its storage.
	// Replicas share cache entries and invalidations only within one
	// keyspace: the log names it and the storage it was derived from.
	id, readable, err := storageIdentity(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cfg.Cache.Redis.Keyspace = cache.NewKeyspace(id)
	log.InfoContext(ctx, "cache keyspace", "keyspace", cfg.Cache.Redis.Keyspace.String(), "storage", readable)
	c, err := cache.New(cfg.Cache, reg, log)
	if err != nil {
		return nil, err
	}
	// Closed after the server has stopped, when no call can use it.
	a.onClose(func() {
		if err := c.Close(); err != nil {
			log.Warn("closing the cache", "err", err)
		}
	})
	libOpts := []skills.Option{skills.WithCache(c), skills.WithRegisterer(reg), skills.WithPins(cfg.Library.PinConfig(), pinAsked)}
	if cfg.Embeddings.Enabled() {
		e, err := embed.New(cfg.Embeddings)
		if err != nil {
			return nil, err
		}
		libOpts = append(libOpts, skills.WithEmbeddings(e, cfg.Embeddings.Weight))
		log.Info("search: semantic stage on", "endpoint", cfg.Embeddings.URL, "model", cfg.Embeddings.Model, "weight", cfg.Embeddings.Weight)
	}
	var scanner *scanpolicy.Scanner
	if cfg.Library.Scan.Any() {
		scanner = scanpolicy.New(cfg.Library.Scan, cfg.Library.ScanWorkers, c, reg, log.With("component", "scan"))
		a.onClose(scanner.Close) // after the library, before the cache: closers run last first
	}
	lib, err := skills.New(bucket, cfg.Mounts, cfg.Skills, log, libOpts...)
	if err != nil {
		return nil, err
	}
	// Closed before the cache: background revalidations finish first.
	a.onClose(lib.Close)
	if scanner != nil {
		lib.Tree.SetScanner(scanner)
	}
	auditLog, closeAudit, err := audit.Open(cfg.Audit)
	if err != nil {
		return nil, err
	}
	a.onClose(func() { closeAudit.Close() })
	var eventsHandler http.Handler // nil without --events.webhook-token-file
	var pubOpts []library.Option   // with events: how the other replicas are told
	if scanner != nil {
		pubOpts = append(pubOpts, library.WithScanner(scanner))
	}
	if cfg.Events.Enabled() {
		rcv, closeEvents, err := newEvents(ctx, cfg, lib.Catalog, reg, auditLog, log)
		if err != nil {
			return nil, err
		}
		a.onClose(closeEvents)
		if cfg.Events.Webhook() {
			eventsHandler = rcv
		}
		pubOpts = append(pubOpts, library.WithNotify(notifyPublished(rcv, lib.Catalog, cfg.S3.Bucket, log)))
	}
	topic, closeTopic, err := feedTopic(cfg)
	if err != nil {
		return nil, err
	}
	a.onClose(closeTopic)
	usageStore, closeUsageStore, err := newUsageStore(cfg)
	if err != nil {
		return nil, err
	}
	a.onClose(closeUsageStore)
	services, err := NewServices(cfg, Parts{Bucket: bucket, Lib: lib, Cache: c, Topic: topic, Registerer: reg, Log: log, Publish: pubOpts, UsageStore: usageStore})
	if err != nil {
		return nil, err
	}
	// The feed is closed before its topic, the library and the cache.
	a.onClose(services.Close)
	a.feed = services.Watch
	// Publishes a crash interrupted are finished at start and every
	// --library.recover-every; stopped before the catalog and the cache.
	a.onClose(services.Publisher.StartRecovery())

	authn, err := auth.New(ctx, cfg.Auth, log)
	if err != nil {
		return nil, err
	}
	a.onClose(func() { auth.Close(authn) })
	if cfg.Auth.Mode == auth.ModeInsecure {
		log.Warn("auth.mode=insecure: caller identity is taken from x-skillsvc-* metadata unverified and every caller may use AdminService; use --auth.mode=jwt unless only trusted workers reach the service", "listen", cfg.Listen, "allow_insecure_remote", cfg.Auth.AllowInsecureRemote)
	}
	limits, err := quota.New(cfg.Limits, log, reg)
	if err != nil {
		return nil, err
	}
	a.onClose(limits.Close)
	if cfg.TLS.Enabled() {
		if a.tls, err = certs.New(cfg.TLS, log); err != nil {
			return nil, err
		}
		a.onClose(a.tls.Close)
	}
	grpcMetrics := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	reg.MustRegister(grpcMetrics)
	chain := server.Chain{Log: log, Auth: authn, Mounts: cfg.Mounts, Metrics: grpcMetrics, Audit: auditLog, Limits: limits, Tracer: tp}
	serverOpts := server.Options(chain)
	var creds []grpc.ServerOption
	if a.tls != nil {
		creds = append(creds, grpc.Creds(credentials.NewTLS(a.tls.TLSConfig())))
	}
	a.grpc = grpc.NewServer(append(serverOpts, creds...)...)
	services.Register(a.grpc)
	a.health = health.NewServer()
	healthpb.RegisterHealthServer(a.grpc, a.health)
	reflection.Register(a.grpc)
	grpcMetrics.InitializeMetrics(a.grpc)

	httpPanics := panics.HTTPMetric(reg, "json", "mcp", "metrics", "events")
	if cfg.MetricsListen != "" {
		mux := http.NewServeMux()
		var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
		if cfg.MetricsAdmin {
			metrics = auth.RequireAdmin(authn, metrics)
		}
		mux.Handle("/metrics", panics.Handler(metrics, log, httpPanics.WithLabelValues("metrics"), "metrics"))
		if cfg.MetricsPprof {
			var profiles http.Handler = pprofMux()
			if cfg.MetricsAdmin {
				profiles = auth.RequireAdmin(authn, profiles)
			}
			mux.Handle("/debug/pprof/", profiles)
		}
		a.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}
	if cfg.HTTPListen != "" {
		// The HTTP endpoints call the services in process, through the
		// same interceptors as the gRPC server (less TLS: nothing leaves
		// the process) and with no second server (server.InProcess).
		// Their calls are client spans under the HTTP request's, and the
		// RPCs' server spans children of those.
		conn := server.InProcess(chain, services.Register)
		if a.http, err = newHTTPServer(ctx, cfg, httpDeps{json: conn, catalog: services.Lib.Catalog, fs: services.FS, limits: limits, authn: authn, audit: auditLog, reg: reg, panics: httpPanics, tracer: tp, events: eventsHandler, feed: services.Watch, usage: services.Usage, provenance: services.Provenance}, log); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// onClose adds f to what Close releases; the last added runs first.
func (a *App) onClose(f func()) { a.closers = append(a.closers, f) }

// Close releases what New built. Run calls it when it returns.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		for i := len(a.closers) - 1; i >= 0; i-- {
			a.closers[i]()
		}
	})
}

// Run opens the listeners (metrics, then HTTP, then gRPC, each logged as
// "serving metrics", "serving http" and "serving" with its "addr", which
// launchers parse), marks the services ready while the probe finds storage
// answering, and serves until ctx ends or a server fails. Then it drains:
// health NOT_SERVING first, in-flight gRPC calls and HTTP requests given
// --shutdown-timeout, metrics last so the drain can be watched. It returns
// after releasing everything (Close).
func (a *App) Run(ctx context.Context) error {
	defer a.Close()
	cfg, log := a.cfg, a.log
	errc := make(chan error, 3)
	if a.metrics != nil {
		if err := a.serveHTTP(a.metrics, cfg.MetricsListen, cfg.MetricsTLS, "serving metrics", errc); err != nil {
			return err
		}
	}
	if a.http != nil {
		if err := a.serveHTTP(a.http, cfg.HTTPListen, a.tls != nil, "serving http", errc); err != nil {
			return err
		}
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", lis.Addr().String(), "storage", cfg.Storage, "mounts", cfg.Mounts.String(), "auth", cfg.Auth.Mode, "tls", a.tls != nil)
	// "liveness" only says the process runs; "" and the services say whether
	// it can serve, which needs storage (see docs/operators/observability.md).
	a.health.SetServingStatus(livenessService, healthpb.HealthCheckResponse_SERVING)
	setReady := func(ready bool) {
		st := healthpb.HealthCheckResponse_NOT_SERVING
		if ready {
			st = healthpb.HealthCheckResponse_SERVING
		}
		for _, svc := range []string{"", skillsvcv1.FilesystemService_ServiceDesc.ServiceName, skillsvcv1.SkillsService_ServiceDesc.ServiceName, skillsvcv1.AdminService_ServiceDesc.ServiceName} {
			a.health.SetServingStatus(svc, st)
		}
		if a.writes != nil && a.writes.ReadOnly() != nil {
			st = healthpb.HealthCheckResponse_NOT_SERVING
		}
		a.health.SetServingStatus(writesService, st)
	}
	setReady(true) // storage answered at start-up
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	var probing sync.WaitGroup
	probing.Go(func() { probe.Run(probeCtx, cfg.Probe, a.checkStorage, setReady, log) })

	go func() { errc <- a.grpc.Serve(lis) }()
	select {
	case err := <-errc:
		a.grpc.Stop()
		return err
	case <-ctx.Done():
	}

	// Tell load balancers first, then let in-flight calls finish, bounded.
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	stopProbe()
	probing.Wait() // a write-safety check in flight deletes its key first
	a.health.Shutdown()
	// Open watches would hold the graceful stop until its timeout: they end
	// now (UNAVAILABLE), and their clients resume on another replica.
	a.feed.Close()
	var httpDone sync.WaitGroup
	if a.http != nil {
		httpDone.Go(func() {
			shutCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			if err := a.http.Shutdown(shutCtx); err != nil {
				a.http.Close()
			}
		})
	}
	done := make(chan struct{})
	go func() { a.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.ShutdownTimeout):
		log.Warn("graceful stop timed out; closing connections")
		a.grpc.Stop()
	}
	httpDone.Wait()
	if a.metrics != nil {
		// Metrics stay up until the drain ends, so it can be watched.
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.metrics.Shutdown(shutCtx)
	}
	return nil
}

// serveHTTP listens on addr and serves srv there, over TLS with the
// server's certificate when useTLS, logging msg with the address. A
// failure to serve goes to errc.
func (a *App) serveHTTP(srv *http.Server, addr string, useTLS bool, msg string, errc chan<- error) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	serve := func() error { return srv.Serve(lis) }
	if useTLS {
		srv.TLSConfig = a.tls.TLSConfig()
		serve = func() error { return srv.ServeTLS(lis, "", "") }
	}
	a.log.Info(msg, "addr", lis.Addr().String(), "tls", useTLS)
	go func() {
		if err := serve(); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	return nil
}

// pinAsked reports whether the call asked for its thread's pinned library:
// auth decides it once per call, from a header or the token.
func pinAsked(ctx context.Context) bool {
	p, _ := auth.PrincipalFrom(ctx)
	return p.Pin
}
