// Package probe tells load balancers whether this replica can serve: a cheap
// storage check, run periodically, drives readiness. A replica whose storage
// does not answer stops getting work instead of failing it, and takes work
// again as soon as storage answers, without a restart.
package probe

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"
)

// Config says how often and how patiently storage is checked.
type Config struct {
	Interval time.Duration
	Timeout  time.Duration
	// Failures is how many checks in a row must fail before the replica is
	// reported not ready; one success makes it ready again.
	Failures int
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.DurationVar(&c.Interval, prefix+"interval", 5*time.Second, "How often the readiness probe checks that object storage answers (and, with --storage=s3, still honours conditional writes: the write-safety probe, 8 requests).")
	f.DurationVar(&c.Timeout, prefix+"timeout", 3*time.Second, "How long one storage check may take.")
	f.IntVar(&c.Failures, prefix+"failures", 2, "Failed storage checks in a row before the replica reports NOT_SERVING.")
}

// Validate rejects settings that would never check or never decide.
func (c *Config) Validate() error {
	if c.Interval <= 0 || c.Timeout <= 0 || c.Failures <= 0 {
		return fmt.Errorf("probe: interval, timeout and failures must be positive")
	}
	return nil
}

// Run checks every Interval until ctx ends, calling set(false) after
// Failures failed checks in a row and set(true) after a success (including
// the first). It returns when ctx is done.
func Run(ctx context.Context, cfg Config, check func(context.Context) error, set func(ready bool), log *slog.Logger) {
	failed, ready := 0, false
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err := check(cctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return // shutting down: not a storage failure
		}
		if err == nil {
			if !ready {
				log.InfoContext(ctx, "storage answers: ready")
			}
			failed, ready = 0, true
			set(true)
		} else if failed++; failed < cfg.Failures {
			log.WarnContext(ctx, "storage check failed", "failures", failed, "err", err)
		} else {
			if failed == cfg.Failures {
				log.ErrorContext(ctx, "storage does not answer: not ready", "failures", failed, "err", err)
			}
			ready = false
			set(false)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil {
				return // both were ready: select picks at random, shutdown wins
			}
		}
	}
}
