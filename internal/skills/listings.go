package skills

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// listing is one complete listing of a library prefix. gen identifies it on
// every replica that uses it (a random number chosen when it was listed and
// cached with it): a view built from listings with the same generations is
// still current.
type listing struct {
	gen  uint64
	made time.Time // when it was listed: it is used until made + the index TTL
	objs []objstore.Object
}

// listTimeout bounds one shared listing of a library.
const listTimeout = time.Minute

var errTooManyObjects = errors.New("too many objects")

// listings lists library prefixes, reusing a listing for the index TTL on
// every replica (through the shared cache) and sharing one listing among
// the concurrent callers of a replica.
type listings struct {
	bucket     objstore.Bucket
	cache      cache.Cache
	ttl        time.Duration // 0: list on every call, cache nothing
	maxObjects int
	log        *slog.Logger
	cacheLog   *cacheLog
	// decoded keeps the listings in use decoded, by cache key: decoding a
	// large listing on every call would cost more than the call. An entry
	// is used only until its listing's made + ttl, like the cached bytes.
	decoded *lru.Cache[string, *listing]
	flight  singleflight.Group
	now     func() time.Time
}

func newListings(bucket objstore.Bucket, c cache.Cache, cfg Config, log *slog.Logger, cl *cacheLog) *listings {
	ls := &listings{bucket: bucket, cache: c, ttl: cfg.IndexTTL, maxObjects: cfg.MaxObjects, log: log, cacheLog: cl, now: time.Now}
	if ls.ttl > 0 {
		ls.decoded, _ = lru.New[string, *listing](1024)
	}
	return ls
}

// fresh reports whether l may still be used.
func (ls *listings) fresh(l *listing) bool {
	return ls.now().Before(l.made.Add(ls.ttl))
}

// get returns every object under prefix; tag is the user whose library it
// is, or sharedTag.
func (ls *listings) get(ctx context.Context, tag, prefix string) (*listing, error) {
	key := listingKey(tag, prefix)
	if ls.ttl > 0 {
		if l, ok := ls.decoded.Get(key); ok && ls.fresh(l) {
			return l, nil
		}
	}
	ch := ls.flight.DoChan(key, func() (any, error) {
		// Callers share this listing, so one caller giving up must not fail
		// the others; the timeout bounds it instead.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
		defer cancel()
		if ls.ttl <= 0 {
			return ls.walk(lctx, prefix)
		}
		if l := ls.fetch(lctx, key, prefix); l != nil {
			ls.decoded.Add(key, l)
			return l, nil
		}
		l, err := ls.walk(lctx, prefix)
		if err != nil {
			return nil, err
		}
		ls.decoded.Add(key, l)
		ls.store(lctx, key, prefix, l)
		return l, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*listing), nil
	}
}

// fetch returns the fresh listing of prefix from the shared cache, or nil.
func (ls *listings) fetch(ctx context.Context, key, prefix string) *listing {
	hits, err := ls.cache.Fetch(ctx, []string{key})
	if err != nil {
		ls.cacheLog.failed(ctx, "fetching a listing", err)
		return nil
	}
	b, ok := hits[key]
	if !ok {
		return nil
	}
	l, err := decodeListing(b, prefix, ls.maxObjects)
	if err != nil {
		ls.log.WarnContext(ctx, "skills cache: ignoring a cached listing", "prefix", prefix, "err", err)
		return nil
	}
	// Another replica's clock may run ahead: never trust a listing longer
	// than a TTL from now.
	if now := ls.now(); l.made.After(now) {
		l.made = now
	}
	if !ls.fresh(l) {
		return nil
	}
	return l
}

// store caches l for the rest of its TTL.
func (ls *listings) store(ctx context.Context, key, prefix string, l *listing) {
	ttl := l.made.Add(ls.ttl).Sub(ls.now())
	if ttl <= 0 {
		return
	}
	b, err := encodeListing(l, prefix)
	if err != nil {
		ls.log.WarnContext(ctx, "skills cache: listing not cached", "prefix", prefix, "err", err)
		return
	}
	if err := ls.cache.Store(ctx, map[string][]byte{key: b}, ttl); err != nil {
		ls.cacheLog.failed(ctx, "storing a listing", err)
	}
}

func (ls *listings) walk(ctx context.Context, prefix string) (*listing, error) {
	made := ls.now()
	var objs []objstore.Object
	err := objstore.Walk(ctx, ls.bucket, prefix, func(o objstore.Object) error {
		if len(objs) == ls.maxObjects {
			return errTooManyObjects
		}
		objs = append(objs, o)
		return nil
	})
	if errors.Is(err, errTooManyObjects) {
		// Serve what fits rather than fail every call for this library.
		ls.log.WarnContext(ctx, "skill library truncated", "prefix", prefix, "max_objects", ls.maxObjects)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return &listing{gen: rand.Uint64(), made: made, objs: objs}, nil
}
