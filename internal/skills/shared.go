package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Keys in the shared cache. The user (or sharedTag for the organization's
// library) is a Redis hash tag, so one user's keys share a Cluster slot; v1
// names the encoding, so replicas of another version never read them.
const (
	sharedTag       = "_shared" // never a user ID, which starts with a letter or digit
	listingKeySpace = "skills:v1:list:"
	headKeySpace    = "skills:v1:head:"
)

// listingKey names the cached listing of prefix.
func listingKey(tag, prefix string) string {
	return listingKeySpace + "{" + tag + "}:" + prefix
}

// headKey names the cached head of one version of a SKILL.md. Object keys
// may be 1 KiB long, so the key is a hash: bounded, whatever the key holds.
func headCacheKey(tag, key, etag string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + etag))
	return headKeySpace + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
}

// cacheWarnEvery bounds how often a failing shared cache is logged as a
// warning: during a Redis outage every call fails to use it.
const cacheWarnEvery = time.Minute

// cacheLog logs failures of the shared cache, which are never the caller's:
// the first one a minute as a warning, the rest at debug.
type cacheLog struct {
	log      *slog.Logger
	nextWarn atomic.Int64 // unix nanoseconds
}

func (c *cacheLog) failed(ctx context.Context, op string, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		c.log.DebugContext(ctx, "skills cache: "+op+" abandoned", "err", err)
		return
	}
	now := time.Now().UnixNano()
	if next := c.nextWarn.Load(); now >= next && c.nextWarn.CompareAndSwap(next, now+int64(cacheWarnEvery)) {
		c.log.WarnContext(ctx, "skills cache: "+op+" failed; serving from storage (repeats logged at debug for a minute)", "err", err)
		return
	}
	c.log.DebugContext(ctx, "skills cache: "+op+" failed", "err", err)
}
