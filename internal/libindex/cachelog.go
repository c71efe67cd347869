package libindex

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// cacheWarnEvery bounds how often a failing shared cache is logged as a
// warning: during a Redis outage every call fails to use it.
const cacheWarnEvery = time.Minute

// CacheLog logs failures of the shared cache, which are never the caller's,
// and values found under the wrong key: the first of each a minute as a
// warning, the rest at debug.
type CacheLog struct {
	log              *slog.Logger
	nextWarn         atomic.Int64 // unix nanoseconds
	nextMismatchWarn atomic.Int64 // apart, so a Redis outage cannot hide a mismatch
	nextCorruptWarn  atomic.Int64
}

// NewCacheLog returns a CacheLog writing to log.
func NewCacheLog(log *slog.Logger) *CacheLog { return &CacheLog{log: log} }

// warnNow reports whether the next warning is due, and if so makes the one
// after due in cacheWarnEvery.
func warnNow(next *atomic.Int64) bool {
	now := time.Now().UnixNano()
	n := next.Load()
	return now >= n && next.CompareAndSwap(n, now+int64(cacheWarnEvery))
}

// Failed logs a failed cache operation op.
func (c *CacheLog) Failed(ctx context.Context, op string, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		c.log.DebugContext(ctx, "skills cache: "+op+" abandoned", "err", err)
		return
	}
	if warnNow(&c.nextWarn) {
		c.log.WarnContext(ctx, "skills cache: "+op+" failed; serving from storage (repeats logged at debug for a minute)", "err", err)
		return
	}
	c.log.DebugContext(ctx, "skills cache: "+op+" failed", "err", err)
}

// Mismatched logs a value of kind found in source under the key of key
// (a library's prefix, a user) that describes something else: a copied key
// or a bug, never served.
func (c *CacheLog) Mismatched(ctx context.Context, kind, source, key string, err error) {
	if warnNow(&c.nextMismatchWarn) {
		c.log.WarnContext(ctx, "skills cache: ignoring a value found under another's key; reloading from storage (repeats logged at debug for a minute)", "kind", kind, "source", source, "key", key, "err", err)
		return
	}
	c.log.DebugContext(ctx, "skills cache: ignoring a value found under another's key", "kind", kind, "source", source, "key", key, "err", err)
}

// Undecodable logs a value of kind found in the shared cache that does not
// decode: written by a replica of another encoding under the same key (a
// bug), or damaged. It is recomputed, never served.
func (c *CacheLog) Undecodable(ctx context.Context, kind string, err error) {
	if warnNow(&c.nextCorruptWarn) {
		c.log.WarnContext(ctx, "skills cache: ignoring a value that does not decode; computing it again (repeats logged at debug for a minute)", "kind", kind, "err", err)
		return
	}
	c.log.DebugContext(ctx, "skills cache: ignoring a value that does not decode", "kind", kind, "err", err)
}
