package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
)

// Keys in the shared cache. The user (or sharedTag for the organization's
// library) is a Redis hash tag, so one user's keys share a Cluster slot; the
// version names the encoding, so replicas of another version never read them
// (an index costs them a listing). Settings keep theirs across the change
// that made their value name its user: they are written through the cache,
// and older replicas read the new value, while newer ones take an old value
// for a miss and reload it, so no replica misses another's write.
const (
	sharedTag        = "_shared" // never a user ID, which starts with a letter or digit
	indexKeySpace    = "skills:v3:index:"
	stampKeySpace    = "skills:v3:stamp:"
	lockKeySpace     = "skills:v3:revalidate:"
	settingsKeySpace = "skills:v1:settings:"
	headKeySpace     = "skills:v1:head:"
	fileKeySpace     = "skills:v1:file:"
	sniffKeySpace    = "skills:v1:sniff:"
)

// indexKey names the cached index of l, stampKey the stamp of its newest
// index, lockKey the lock of the replica revalidating it.
func indexKey(l layer) string { return indexKeySpace + "{" + l.tag + "}:" + l.prefix }
func stampKey(l layer) string { return stampKeySpace + "{" + l.tag + "}:" + l.prefix }
func lockKey(l layer) string  { return lockKeySpace + "{" + l.tag + "}:" + l.prefix }

// settingsCacheKey names a user's cached settings.
func settingsCacheKey(user string) string { return settingsKeySpace + "{" + user + "}" }

// fileCacheKey and sniffCacheKey name the cached content of one version of
// a file, and whether it is binary; the key's first segment (the user, or
// the shared library's) is the hash tag.
func fileCacheKey(key, etag string) string  { return contentKey(fileKeySpace, key, etag) }
func sniffCacheKey(key, etag string) string { return contentKey(sniffKeySpace, key, etag) }

func contentKey(space, key, etag string) string {
	tag, _, _ := strings.Cut(key, "/")
	sum := sha256.Sum256([]byte(key + "\x00" + etag))
	return space + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
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

// cacheLog logs failures of the shared cache, which are never the caller's,
// and values found under the wrong key: the first of each a minute as a
// warning, the rest at debug.
type cacheLog struct {
	log              *slog.Logger
	nextWarn         atomic.Int64 // unix nanoseconds
	nextMismatchWarn atomic.Int64 // apart, so a Redis outage cannot hide a mismatch
}

// warnNow reports whether the next warning is due, and if so makes the one
// after due in cacheWarnEvery.
func warnNow(next *atomic.Int64) bool {
	now := time.Now().UnixNano()
	n := next.Load()
	return now >= n && next.CompareAndSwap(n, now+int64(cacheWarnEvery))
}

func (c *cacheLog) failed(ctx context.Context, op string, err error) {
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

// mismatched logs a value of kind found in source under the key of key
// (a library's prefix, a user) that describes something else: a copied key
// or a bug, never served.
func (c *cacheLog) mismatched(ctx context.Context, kind, source, key string, err error) {
	if warnNow(&c.nextMismatchWarn) {
		c.log.WarnContext(ctx, "skills cache: ignoring a value found under another's key; reloading from storage (repeats logged at debug for a minute)", "kind", kind, "source", source, "key", key, "err", err)
		return
	}
	c.log.DebugContext(ctx, "skills cache: ignoring a value found under another's key", "kind", kind, "source", source, "key", key, "err", err)
}
