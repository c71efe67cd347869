package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// WriteProbeRoot is where the write-safety probe keeps its key, one per
// process so replicas never race each other's: outside every mount
// (Config.Validate checks it) and every library's keys, its first segment
// no valid ID.
const WriteProbeRoot = "_skillsvc/write-probe/"

// openBucket opens the configured backend wrapped with metrics and tracing, copies the
// example library in when --examples asks for it, and returns the cheap
// check readiness uses. An S3 store must honour conditional writes
// (objstore.CheckWriteSafety, at start and with every check): one that
// does not is refused, or with --s3.read-only-if-unsafe served read-only
// through the returned guard (nil for local storage, whose conditions are
// our own code).
func openBucket(ctx context.Context, cfg Config, reg prometheus.Registerer, log *slog.Logger) (objstore.Bucket, func(context.Context) error, *objstore.Guarded, func(), error) {
	firstRun := cfg.Storage == "local" && newDataDir(cfg.DataDir) // before the backend creates it
	raw, closeFn, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	b := raw
	var ws *writeSafety
	if cfg.Storage == "s3" {
		ws = &writeSafety{raw: raw, key: WriteProbeRoot + rand.Text(), guard: objstore.NewGuarded(raw), readOnlyIfUnsafe: cfg.S3.ReadOnlyIfUnsafe, log: log}
		b = ws.guard
		if err := ws.start(ctx); err != nil {
			closeFn()
			return nil, nil, nil, nil, err
		}
	}
	// Provisioning, not service traffic: below the metrics wrapper.
	if err := seedExamples(ctx, b, cfg, firstRun, log); err != nil {
		closeFn()
		return nil, nil, nil, nil, err
	}
	check := func(ctx context.Context) error {
		_, err := raw.List(ctx, objstore.ListOptions{Prefix: cfg.Skills.SharedPrefix, MaxKeys: 1})
		return err
	}
	if c, ok := raw.(objstore.Checker); ok {
		check = c.Check
	}
	var guard *objstore.Guarded
	if ws != nil {
		guard = ws.guard
		answers := check
		check = func(ctx context.Context) error {
			if err := answers(ctx); err != nil {
				return err
			}
			return ws.recheck(ctx)
		}
	}
	// Traced above the metrics, as Mimir stacks them: a span per
	// operation of a traced call, nothing for the others. Requests are
	// counted for the per-user limits' charges (quota.StorageCost).
	return objstore.WrapWithTracing(objstore.WrapWithMetrics(objstore.WrapWithRequestCounting(b), reg)), check, guard, closeFn, nil
}

// writeSafety runs objstore.CheckWriteSafety on the raw backend (below
// the guard, the metrics and the traces: probes are no service traffic).
type writeSafety struct {
	raw              objstore.Bucket
	key              string
	guard            *objstore.Guarded
	readOnlyIfUnsafe bool
	log              *slog.Logger
}

// start refuses an unsafe store, or serves it read-only when configured
// to. A check that fails otherwise (read-only credentials, a full store)
// proves nothing either way and does not stop the start.
func (w *writeSafety) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	w.collectStale(ctx)
	err := objstore.CheckWriteSafety(ctx, w.raw, w.key)
	var unsafe *objstore.UnsafeError
	switch {
	case errors.As(err, &unsafe) && !w.readOnlyIfUnsafe:
		return fmt.Errorf("refusing the store: %w (--s3.read-only-if-unsafe serves it read-only)", err)
	case errors.As(err, &unsafe):
		w.guard.SetReadOnly(err)
		w.log.WarnContext(ctx, "storage read-only: every write refused", "reason", err.Error())
	case err != nil:
		w.log.WarnContext(ctx, "write-safety probe inconclusive", "err", err)
	}
	return nil
}

// recheck runs the probe again for readiness: an unsafe store takes no
// writes until a check passes again, and is not ready (the error says
// why) unless --s3.read-only-if-unsafe serves it read-only.
func (w *writeSafety) recheck(ctx context.Context) error {
	err := objstore.CheckWriteSafety(ctx, w.raw, w.key)
	var unsafe *objstore.UnsafeError
	switch {
	case errors.As(err, &unsafe):
		// Writes stop either way: the store would lose them.
		if w.guard.ReadOnly() == nil {
			w.log.WarnContext(ctx, "storage read-only: every write refused", "reason", err.Error())
		}
		w.guard.SetReadOnly(err)
		if !w.readOnlyIfUnsafe {
			return err
		}
	case err == nil:
		if w.guard.ReadOnly() != nil {
			w.log.InfoContext(ctx, "storage honours conditional writes again: writes taken")
		}
		w.guard.SetReadOnly(nil)
	default:
		w.log.DebugContext(ctx, "write-safety probe inconclusive", "err", err)
	}
	return nil
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
// whatever its spelling: the S3 service its client reaches
// (s3.Config.StoreEndpoint: the flag, else the SDK's environment or shared
// config; empty for AWS, where bucket names are unique) and bucket, or the
// data directory's absolute path (links resolved). Its digest is the
// cache's keyspace (cache.Keyspace), which keeps deployments sharing a
// Redis apart; readable is the same for the log.
func storageIdentity(ctx context.Context, cfg Config) (id, readable string, err error) {
	if cfg.Storage == "s3" {
		endpoint, err := cfg.S3.StoreEndpoint(ctx)
		if err != nil {
			return "", "", err
		}
		shown := endpoint
		switch {
		case endpoint == "":
			shown = "AWS"
		case strings.HasPrefix(endpoint, "aws-"):
			shown = "AWS " + endpoint // a partition: aws-cn, aws-us-gov
		}
		return "s3\x00" + endpoint + "\x00" + cfg.S3.Bucket, "s3 " + shown + " bucket " + cfg.S3.Bucket, nil
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err == nil {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	dir = filepath.Clean(dir)
	return "local\x00" + dir, "local " + dir, nil
}

// staleProbeAge is how old a probe key must be to be another process's
// leftover (one killed mid-check): a live check holds its key for a few
// requests' time.
const staleProbeAge = 10 * time.Minute

// collectStale deletes the keys of killed processes' probes, one page at
// most per start, so crashes leave no garbage that grows.
func (w *writeSafety) collectStale(ctx context.Context) {
	page, err := w.raw.List(ctx, objstore.ListOptions{Prefix: WriteProbeRoot, MaxKeys: 100})
	if err != nil {
		return // the probe itself will say what is wrong
	}
	for _, o := range page.Objects {
		if time.Since(o.ModTime) > staleProbeAge {
			_ = w.raw.Delete(ctx, o.Key)
		}
	}
}
