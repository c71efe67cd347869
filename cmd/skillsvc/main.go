// Command skillsvc serves the skillsvc gRPC API. With no configuration it
// listens on 127.0.0.1:7070 and stores files under ./data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
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
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/probe"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "token" {
		if err := runToken(os.Args[2:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "skillsvc:", err)
			os.Exit(2)
		}
		return
	}
	cfg, err := loadConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "skillsvc:", err)
		os.Exit(2)
	}
	log := newLogger(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
}

// livenessService is the health service name of the liveness probe.
const livenessService = "liveness"

func newLogger(cfg Config) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// openBucket opens the configured backend wrapped with metrics, and returns
// the cheap check readiness uses.
func openBucket(ctx context.Context, cfg Config, reg prometheus.Registerer) (objstore.Bucket, func(context.Context) error, func(), error) {
	b, closeFn, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	check := func(ctx context.Context) error {
		_, err := b.List(ctx, objstore.ListOptions{Prefix: cfg.Skills.SharedPrefix, MaxKeys: 1})
		return err
	}
	if c, ok := b.(objstore.Checker); ok {
		check = c.Check
	}
	return objstore.WrapWithMetrics(b, reg), check, closeFn, nil
}

func openBackend(ctx context.Context, cfg Config) (objstore.Bucket, func(), error) {
	switch cfg.Storage {
	case "s3":
		b, err := s3.New(ctx, cfg.S3)
		if err != nil {
			return nil, nil, err
		}
		checkCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.Check(checkCtx); err != nil {
			return nil, nil, err
		}
		return b, func() {}, nil
	default:
		b, err := local.New(cfg.DataDir)
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Close() }, nil
	}
}

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bucket, checkStorage, closeBucket, err := openBucket(ctx, cfg, reg)
	if err != nil {
		return err
	}
	defer closeBucket()
	c, err := cache.New(cfg.Cache, reg, log)
	if err != nil {
		return err
	}
	// Closed after the server has stopped, when no call can use it.
	defer func() {
		if err := c.Close(); err != nil {
			log.Warn("closing the cache", "err", err)
		}
	}()
	table := cfg.Mounts
	lib, err := skills.New(bucket, table, cfg.Skills, log, skills.WithCache(c), skills.WithRegisterer(reg))
	if err != nil {
		return err
	}
	// Deferred after the cache's Close, so it runs first: background
	// revalidations finish before the cache closes.
	defer lib.Close()
	// The skills mount shows the merged library, as the catalog does.
	fs, err := vfs.New(bucket, table, cfg.VFS, vfs.WithTree(cfg.Skills.Mount, lib.Tree))
	if err != nil {
		return err
	}

	authn, err := auth.New(ctx, cfg.Auth, log)
	if err != nil {
		return err
	}
	defer auth.Close(authn)
	if cfg.Auth.Mode == auth.ModeInsecure {
		log.Warn("auth.mode=insecure: caller identity is taken from x-skillsvc-* metadata unverified and every caller may use AdminService; use --auth.mode=jwt unless only trusted workers reach the service", "listen", cfg.Listen, "allow_insecure_remote", cfg.Auth.AllowInsecureRemote)
	}
	auditLog, closeAudit, err := audit.Open(cfg.Audit)
	if err != nil {
		return err
	}
	defer closeAudit.Close()
	limits, err := quota.New(cfg.Limits, log, reg)
	if err != nil {
		return err
	}
	defer limits.Close()
	var tlsSrv *certs.Server
	if cfg.TLS.Enabled() {
		if tlsSrv, err = certs.New(cfg.TLS, log); err != nil {
			return err
		}
		defer tlsSrv.Close()
	}
	grpcMetrics := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	reg.MustRegister(grpcMetrics)
	opts := server.Options(server.Chain{Log: log, Auth: authn, Metrics: grpcMetrics, Audit: auditLog, Limits: limits})
	var creds []grpc.ServerOption
	if tlsSrv != nil {
		creds = append(creds, grpc.Creds(credentials.NewTLS(tlsSrv.TLSConfig())))
	}
	services := func(s grpc.ServiceRegistrar) {
		skillsvcv1.RegisterFilesystemServiceServer(s, server.NewFilesystem(fs, cfg.VFS.ChunkSize))
		skillsvcv1.RegisterSkillsServiceServer(s, server.NewSkills(lib, cfg.VFS.ChunkSize))
		skillsvcv1.RegisterAdminServiceServer(s, server.NewAdmin(lib.Catalog))
	}
	srv := grpc.NewServer(append(opts, creds...)...)
	services(srv)
	healthSrv := health.NewServer()
	healthpb.RegisterHealthServer(srv, healthSrv)
	reflection.Register(srv)
	grpcMetrics.InitializeMetrics(srv)

	httpPanics := panics.HTTPMetric(reg, "json", "mcp", "metrics")
	errc := make(chan error, 3)
	var metricsSrv *http.Server
	if cfg.MetricsListen != "" {
		mlis, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
		if cfg.MetricsAdmin {
			metrics = auth.RequireAdmin(authn, metrics)
		}
		mux.Handle("/metrics", panics.Handler(metrics, log, httpPanics.WithLabelValues("metrics"), "metrics"))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		serve := func() error { return metricsSrv.Serve(mlis) }
		if cfg.MetricsTLS {
			metricsSrv.TLSConfig = tlsSrv.TLSConfig()
			serve = func() error { return metricsSrv.ServeTLS(mlis, "", "") }
		}
		log.Info("serving metrics", "addr", mlis.Addr().String(), "tls", cfg.MetricsTLS)
		go func() {
			if err := serve(); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	var httpSrv *http.Server
	if cfg.HTTPListen != "" {
		// The HTTP endpoints call the services through an in-process copy
		// of the gRPC server with the same options (less TLS: nothing
		// leaves the process), so they share every interceptor.
		conn, stopLoopback, err := server.Loopback(opts, services)
		if err != nil {
			return err
		}
		defer stopLoopback()
		if httpSrv, err = newHTTPServer(ctx, cfg, conn, authn, auditLog, reg, httpPanics, log); err != nil {
			return err
		}
		hlis, err := net.Listen("tcp", cfg.HTTPListen)
		if err != nil {
			return err
		}
		serve := func() error { return httpSrv.Serve(hlis) }
		if tlsSrv != nil {
			httpSrv.TLSConfig = tlsSrv.TLSConfig()
			serve = func() error { return httpSrv.ServeTLS(hlis, "", "") }
		}
		log.Info("serving http", "addr", hlis.Addr().String(), "tls", tlsSrv != nil)
		go func() {
			if err := serve(); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", lis.Addr().String(), "storage", cfg.Storage, "mounts", table.String(), "auth", cfg.Auth.Mode, "tls", tlsSrv != nil)
	// "liveness" only says the process runs; "" and the services say whether
	// it can serve, which needs storage (see README, Health).
	healthSrv.SetServingStatus(livenessService, healthpb.HealthCheckResponse_SERVING)
	setReady := func(ready bool) {
		st := healthpb.HealthCheckResponse_NOT_SERVING
		if ready {
			st = healthpb.HealthCheckResponse_SERVING
		}
		for _, svc := range []string{"", skillsvcv1.FilesystemService_ServiceDesc.ServiceName, skillsvcv1.SkillsService_ServiceDesc.ServiceName, skillsvcv1.AdminService_ServiceDesc.ServiceName} {
			healthSrv.SetServingStatus(svc, st)
		}
	}
	setReady(true) // storage answered at start-up
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go probe.Run(probeCtx, cfg.Probe, checkStorage, setReady, log)

	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		srv.Stop()
		return err
	case <-ctx.Done():
	}

	// Tell load balancers first, then let in-flight calls finish, bounded.
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	stopProbe()
	healthSrv.Shutdown()
	var httpDone sync.WaitGroup
	if httpSrv != nil {
		httpDone.Go(func() {
			shutCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			if err := httpSrv.Shutdown(shutCtx); err != nil {
				httpSrv.Close()
			}
		})
	}
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.ShutdownTimeout):
		log.Warn("graceful stop timed out; closing connections")
		srv.Stop()
	}
	httpDone.Wait()
	if metricsSrv != nil {
		// Metrics stay up until the drain ends, so it can be watched.
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = metricsSrv.Shutdown(shutCtx)
	}
	return nil
}
