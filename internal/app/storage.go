package app

import (
	"context"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// openBucket opens the configured backend wrapped with metrics and tracing, copies the
// example library in when --examples asks for it, and returns the cheap
// check readiness uses.
func openBucket(ctx context.Context, cfg Config, reg prometheus.Registerer, log *slog.Logger) (objstore.Bucket, func(context.Context) error, func(), error) {
	firstRun := cfg.Storage == "local" && newDataDir(cfg.DataDir) // before the backend creates it
	b, closeFn, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	// Provisioning, not service traffic: below the metrics wrapper.
	if err := seedExamples(ctx, b, cfg, firstRun, log); err != nil {
		closeFn()
		return nil, nil, nil, err
	}
	check := func(ctx context.Context) error {
		_, err := b.List(ctx, objstore.ListOptions{Prefix: cfg.Skills.SharedPrefix, MaxKeys: 1})
		return err
	}
	if c, ok := b.(objstore.Checker); ok {
		check = c.Check
	}
	// Traced above the metrics, as Mimir stacks them: a span per
	// operation of a traced call, nothing for the others. Requests are
	// counted for the per-user limits' charges (quota.StorageCost).
	return objstore.WrapWithTracing(objstore.WrapWithMetrics(objstore.WrapWithRequestCounting(b), reg)), check, closeFn, nil
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

// storageIdentity names the deployment's storage, the same on every replica
// that names it alike: the S3 endpoint (empty for AWS, where bucket names
// are unique) and bucket, or the data directory's absolute path (links
// resolved). Its digest is the cache's keyspace (cache.Keyspace), which
// keeps deployments sharing a Redis apart.
func storageIdentity(cfg Config) string {
	if cfg.Storage == "s3" {
		endpoint := strings.TrimRight(cfg.S3.Endpoint, "/")
		if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
			// Scheme and host are case-insensitive; a path is not.
			u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
			endpoint = u.String()
		}
		return "s3\x00" + endpoint + "\x00" + cfg.S3.Bucket
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err == nil {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	return "local\x00" + filepath.Clean(dir)
}
