package skills

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// listing is one complete listing of a library prefix. gen identifies it:
// a view built from listings with the same generations is still current.
type listing struct {
	gen  uint64
	objs []objstore.Object
}

// listTimeout bounds one shared listing of a library.
const listTimeout = time.Minute

var errTooManyObjects = errors.New("too many objects")

// listings lists library prefixes, reusing a listing for the index TTL and
// sharing one listing among concurrent callers.
type listings struct {
	bucket     objstore.Bucket
	maxObjects int
	log        *slog.Logger
	cache      *expirable.LRU[string, *listing] // by prefix; nil without a TTL
	flight     singleflight.Group
	lastGen    atomic.Uint64
}

func newListings(bucket objstore.Bucket, cfg Config, log *slog.Logger) *listings {
	ls := &listings{bucket: bucket, maxObjects: cfg.MaxObjects, log: log}
	if cfg.IndexTTL > 0 {
		ls.cache = expirable.NewLRU[string, *listing](1024, nil, cfg.IndexTTL)
	}
	return ls
}

// get returns every object under prefix.
func (ls *listings) get(ctx context.Context, prefix string) (*listing, error) {
	if ls.cache != nil {
		if l, ok := ls.cache.Get(prefix); ok {
			return l, nil
		}
	}
	ch := ls.flight.DoChan(prefix, func() (any, error) {
		// Callers share this listing, so one caller giving up must not fail
		// the others; the timeout bounds it instead.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
		defer cancel()
		l, err := ls.walk(lctx, prefix)
		if err == nil && ls.cache != nil {
			ls.cache.Add(prefix, l)
		}
		return l, err
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

func (ls *listings) walk(ctx context.Context, prefix string) (*listing, error) {
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
	return &listing{gen: ls.lastGen.Add(1), objs: objs}, nil
}
