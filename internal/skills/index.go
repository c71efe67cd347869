package skills

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// index is one library layer as last listed: every object, and the
// frontmatter head of every SKILL.md that is a skill. It is the unit of
// caching: kept decoded in process, encoded in the shared cache (so every
// replica reuses one listing) and persisted in the bucket (so a replica
// with an empty cache starts from it instead of reading every SKILL.md).
// Nothing changes an index once made; concurrent callers share it.
type index struct {
	// gen identifies the content on every replica: a revalidation that
	// finds nothing changed keeps it, so views built from it stay current.
	gen    uint64
	listed time.Time         // when the listing was taken
	objs   []objstore.Object // in key order
	// heads holds the head of each skill's SKILL.md as of its listed ETag,
	// cut after the frontmatter. A skill without one was deleted between
	// the listing and the read of its head.
	heads map[string][]byte
}

// layer is one library: a user's, or the shared one.
type layer struct {
	tag    string // the user, or sharedTag: the hash tag of its cache keys
	prefix string // of its objects
	object string // its persisted index
}

// listTimeout bounds one load or revalidation of a library.
const listTimeout = time.Minute

var errTooManyObjects = errors.New("too many objects")

// maxIndexBytesPerObject bounds one object's share of an encoded index: a
// key of at most 1 KiB, its ETag and numbers, and a frontmatter head of at
// most MaxFrontmatterBytes.
const maxIndexBytesPerObject = 2<<10 + skillmd.MaxFrontmatterBytes

// indexes serves each library's index: from process memory while it is
// younger than the refresh interval, then after checking the shared cache
// for a newer one (another replica's), revalidating it in the background
// (one replica at a time, by a lock in the shared cache) until it is older
// than the max staleness, when the caller waits for the revalidation.
// Revalidating is one paged LIST and a read of the SKILL.md heads whose
// ETag changed. With refresh 0 every call revalidates and nothing but the
// heads is cached.
type indexes struct {
	bucket   objstore.Bucket
	shared   cache.Cache // the level every replica sees
	heads    *heads
	cfg      Config
	log      *slog.Logger
	cacheLog *cacheLog
	metrics  *metrics
	now      func() time.Time

	mem    *lru.Cache[string, *held] // by layer prefix
	flight singleflight.Group        // loads callers wait for
	bg     sync.Map                  // prefixes revalidating in the background
	wg     sync.WaitGroup            // background revalidations
}

// held is an index in process memory and what this process knows of it.
type held struct {
	idx *index
	// checked is when the shared cache last said idx is the newest, or
	// when a revalidation last ended (failed included): until refresh
	// after it, idx is served without asking anyone.
	checked time.Time
	failed  bool // the last revalidation failed: serve up to StaleIfError
}

func newIndexes(bucket objstore.Bucket, c cache.Cache, hs *heads, cfg Config, log *slog.Logger, cl *cacheLog, m *metrics) *indexes {
	mem, _ := lru.New[string, *held](cfg.MaxHeldIndexes)
	return &indexes{bucket: bucket, shared: cache.Shared(c), heads: hs, cfg: cfg, log: log, cacheLog: cl, metrics: m, now: time.Now, mem: mem}
}

func (ix *indexes) cached() bool { return ix.cfg.IndexRefresh > 0 }

// get returns the index of l, as fresh as the configured bounds promise.
func (ix *indexes) get(ctx context.Context, l layer) (*index, error) {
	if h, ok := ix.mem.Get(l.prefix); ok && ix.cached() && ix.servable(h, ix.now()) {
		ix.observe(h.idx)
		return h.idx, nil
	}
	// Callers share the load, so one caller giving up must not fail the
	// others; listTimeout bounds it instead.
	ch := ix.flight.DoChan(l.prefix, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
		defer cancel()
		return ix.load(lctx, l)
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Shared {
			ix.metrics.coalesced.WithLabelValues("index").Inc()
		}
		if res.Err != nil {
			return nil, res.Err
		}
		x := res.Val.(*index)
		ix.observe(x)
		return x, nil
	}
}

// servable reports whether h may be served without asking anyone.
func (ix *indexes) servable(h *held, now time.Time) bool {
	age := now.Sub(h.idx.listed)
	if age < ix.cfg.IndexRefresh {
		return true
	}
	if now.Sub(h.checked) >= ix.cfg.IndexRefresh {
		return false
	}
	return age < ix.cfg.IndexMaxStale || (h.failed && age < ix.cfg.StaleIfError)
}

func (ix *indexes) observe(x *index) {
	ix.metrics.age.Observe(max(0, ix.now().Sub(x.listed).Seconds()))
}

// load finds the newest index of l this replica can get, and revalidates
// it when it is too old: in the background when it may still be served,
// before returning when not.
func (ix *indexes) load(ctx context.Context, l layer) (*index, error) {
	if !ix.cached() {
		return ix.revalidate(ctx, l, ix.current(l))
	}
	h, _ := ix.mem.Get(l.prefix)
	var x *index
	failed := false
	if h != nil {
		x, failed = h.idx, h.failed
	}
	shared, dropped := ix.fromShared(ctx, l, x)
	if shared != nil {
		x = shared
	}
	if x == nil && !dropped {
		if x = ix.fromBucket(ctx, l); x != nil {
			// Shared at once: a replica holding an index whose stamp is
			// missing takes it as dropped.
			ix.share(ctx, l, x, true)
		}
	}
	if shared != nil {
		failed = false
	}
	if dropped {
		// An operator dropped it, or the cache holds another library's
		// under its key: list and read every head afresh.
		x = nil
	}
	now := ix.now()
	if x != nil {
		switch age := now.Sub(x.listed); {
		case age < ix.cfg.IndexRefresh:
			ix.hold(l, x, now, failed)
			return x, nil
		case age < ix.cfg.IndexMaxStale:
			ix.hold(l, x, now, failed)
			ix.revalidateInBackground(l, x)
			return x, nil
		case failed && age < ix.cfg.StaleIfError:
			// Storage failed the last revalidation: retry it in the
			// background rather than make this caller wait for it to fail.
			ix.metrics.staleServed.Inc()
			ix.hold(l, x, now, true)
			ix.revalidateInBackground(l, x)
			return x, nil
		}
	}
	fresh, err := ix.revalidate(ctx, l, x)
	ix.metrics.revalidations.WithLabelValues(modeSync, result(err)).Inc()
	if err == nil {
		return fresh, nil
	}
	if x != nil && now.Sub(x.listed) < ix.cfg.StaleIfError && ctx.Err() == nil {
		// Storage is failing: the last index beats no answer, and it is
		// retried once per refresh interval, not by every call.
		ix.log.WarnContext(ctx, "skills: serving the last library index; revalidating it failed", "prefix", l.prefix, "age", now.Sub(x.listed).Round(time.Second), "err", err)
		ix.metrics.staleServed.Inc()
		ix.hold(l, x, now, true)
		return x, nil
	}
	return nil, err
}

// current is the index held in process, or nil.
func (ix *indexes) current(l layer) *index {
	if h, ok := ix.mem.Get(l.prefix); ok {
		return h.idx
	}
	return nil
}

func (ix *indexes) hold(l layer, x *index, checked time.Time, failed bool) {
	ix.mem.Add(l.prefix, &held{idx: x, checked: checked, failed: failed})
}

// fromShared returns a newer index of l than x from the shared cache, or
// nil. dropped reports that the shared cache, reachable, holds none although
// x exists (an operator dropped it, or it expired), or holds another
// library's under l's keys: neither x nor the persisted index may be served
// without a listing.
func (ix *indexes) fromShared(ctx context.Context, l layer, x *index) (newer *index, dropped bool) {
	keys := []string{stampKey(l)}
	if x == nil {
		keys = append(keys, indexKey(l)) // nothing to compare: fetch it at once
	}
	hits, err := ix.shared.Fetch(ctx, keys)
	if err != nil {
		ix.cacheLog.failed(ctx, "fetching a library index", err)
		return nil, false
	}
	st, err := decodeStamp(hits[stampKey(l)], l)
	if errors.Is(err, errOtherLibrary) {
		ix.mismatched(ctx, l, sourceSharedCache, err)
		return nil, true
	}
	if err != nil {
		return nil, x != nil
	}
	st.listed = ix.clamp(st.listed)
	if x != nil {
		switch {
		case st.gen == x.gen && st.listed.After(x.listed):
			// Revalidated elsewhere, unchanged: same content, newer date.
			return &index{gen: x.gen, listed: st.listed, objs: x.objs, heads: x.heads}, false
		case st.gen == x.gen || !st.listed.After(x.listed):
			return nil, false
		}
		if hits, err = ix.shared.Fetch(ctx, []string{indexKey(l)}); err != nil {
			ix.cacheLog.failed(ctx, "fetching a library index", err)
			return nil, false
		}
	}
	b, ok := hits[indexKey(l)]
	if !ok {
		return nil, false
	}
	y, err := decodeIndex(b, l, ix.cfg.MaxObjects)
	if errors.Is(err, errOtherLibrary) {
		ix.mismatched(ctx, l, sourceSharedCache, err)
		return nil, true
	}
	if err != nil {
		ix.log.WarnContext(ctx, "skills cache: ignoring a cached library index", "prefix", l.prefix, "err", err)
		return nil, false
	}
	if y.gen == st.gen {
		y.listed = st.listed
	}
	y.listed = ix.clamp(y.listed)
	ix.metrics.loads.WithLabelValues(sourceSharedCache).Inc()
	return y, false
}

// mismatched counts and logs an index of another library found under l's
// key in source.
func (ix *indexes) mismatched(ctx context.Context, l layer, source string, err error) {
	ix.metrics.mismatched.WithLabelValues(kindIndex, source).Inc()
	ix.cacheLog.mismatched(ctx, kindIndex, source, l.prefix, err)
}

// clamp keeps another replica's clock running ahead from making an index
// look younger than it is.
func (ix *indexes) clamp(t time.Time) time.Time {
	if now := ix.now(); t.After(now) {
		return now
	}
	return t
}

// fromBucket returns the persisted index of l, or nil.
func (ix *indexes) fromBucket(ctx context.Context, l layer) *index {
	rc, a, err := ix.bucket.Get(ctx, l.object)
	if err != nil {
		if !objstore.IsNotFound(err) {
			ix.log.WarnContext(ctx, "skills: persisted library index not read", "prefix", l.prefix, "err", err)
		}
		return nil
	}
	defer rc.Close()
	// Anyone with bucket access can write the object: never read more
	// than an index of --skills.max-objects objects can take.
	limit := int64(ix.cfg.MaxObjects) * maxIndexBytesPerObject
	if a.Size > limit {
		ix.log.WarnContext(ctx, "skills: ignoring a persisted library index", "object", l.object, "size", a.Size, "limit", limit)
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(max(a.Size, 0)))
	if _, err := buf.ReadFrom(io.LimitReader(rc, limit+1)); err != nil {
		ix.log.WarnContext(ctx, "skills: persisted library index not read", "prefix", l.prefix, "err", err)
		return nil
	}
	x, err := decodeIndex(buf.Bytes(), l, ix.cfg.MaxObjects)
	switch {
	case errors.Is(err, errOtherLibrary):
		// Listed afresh and, as it then changed, persisted over.
		ix.mismatched(ctx, l, sourceBucket, err)
		return nil
	case errors.Is(err, errIndexVersion):
		// An older replica's: a miss, rewritten after the listing.
		ix.log.DebugContext(ctx, "skills: persisted library index of another version", "object", l.object, "err", err)
		return nil
	case err != nil:
		ix.log.WarnContext(ctx, "skills: ignoring a persisted library index", "object", l.object, "err", err)
		return nil
	}
	x.listed = ix.clamp(x.listed)
	ix.metrics.loads.WithLabelValues(sourceBucket).Inc()
	return x
}

// revalidateInBackground revalidates x unless this process already is, or
// another replica holds the lock; the caller goes on serving x.
func (ix *indexes) revalidateInBackground(l layer, x *index) {
	if _, running := ix.bg.LoadOrStore(l.prefix, true); running {
		return
	}
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		defer ix.bg.Delete(l.prefix)
		_ = panics.Guard(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
			defer cancel()
			unlock, ok, err := ix.shared.TryLock(ctx, lockKey(l), ix.cfg.IndexMaxStale)
			switch {
			case err != nil:
				// The lock is an optimization: without the shared cache each
				// replica revalidates on its own.
				ix.cacheLog.failed(ctx, "locking a library index", err)
			case !ok:
				// Another replica is on it; ask the shared cache again after
				// a refresh interval.
				ix.metrics.revalidations.WithLabelValues(modeBackground, "locked").Inc()
				ix.hold(l, x, ix.now(), false)
				return nil
			default:
				defer unlock()
			}
			_, err = ix.revalidate(ctx, l, x)
			ix.metrics.revalidations.WithLabelValues(modeBackground, result(err)).Inc()
			if err != nil {
				ix.log.WarnContext(ctx, "skills: serving the last library index; revalidating it failed", "prefix", l.prefix, "age", ix.now().Sub(x.listed).Round(time.Second), "background", true, "err", err)
				ix.hold(l, x, ix.now(), true)
			}
			return nil
		})()
	}()
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// revalidate lists l, reads the heads of the SKILL.md files that prev does
// not hold at their listed ETag, and publishes the new index: in process,
// in the shared cache, and in the bucket when its content changed.
func (ix *indexes) revalidate(ctx context.Context, l layer, prev *index) (*index, error) {
	listed := ix.now()
	var objs []objstore.Object
	err := objstore.Walk(ctx, ix.bucket, l.prefix, func(o objstore.Object) error {
		if len(objs) == ix.cfg.MaxObjects {
			return errTooManyObjects
		}
		objs = append(objs, o)
		return nil
	})
	if errors.Is(err, errTooManyObjects) {
		// Serve what fits rather than fail every call for this library.
		ix.log.WarnContext(ctx, "skill library truncated", "prefix", l.prefix, "max_objects", ix.cfg.MaxObjects)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	x := &index{listed: listed, objs: objs, heads: map[string][]byte{}}
	var missing []objstore.Object
	for _, o := range skillMDs(objs, l.prefix, ix.cfg.MaxSkills) {
		if prev != nil {
			if h, ok := prev.heads[o.Key]; ok && prev.etag(o.Key) == o.ETag {
				x.heads[o.Key] = h
				continue
			}
		}
		missing = append(missing, o)
	}
	read, err := ix.heads.fetch(ctx, l.tag, missing)
	if err != nil {
		return nil, err
	}
	for k, h := range read {
		x.heads[k] = h
	}
	x.gen = rand.Uint64()
	changed := prev == nil || !prev.same(x)
	if !changed {
		x.gen = prev.gen
	}
	ix.metrics.loads.WithLabelValues(sourceListing).Inc()
	// Held even uncached: the next revalidation reuses its heads.
	ix.hold(l, x, ix.now(), false)
	if ix.cached() {
		ix.publish(ctx, l, x, changed)
	}
	return x, nil
}

// publish stores x in the shared cache (only its stamp when its content is
// the one already there) and persists it when it changed. Both are best
// effort: a failure costs another replica a listing, never a call.
func (ix *indexes) publish(ctx context.Context, l layer, x *index, changed bool) {
	b := ix.share(ctx, l, x, changed)
	if b == nil {
		return
	}
	if _, err := ix.bucket.Put(ctx, l.object, bytes.NewReader(b), int64(len(b)), objstore.PutOptions{}); err != nil {
		ix.log.WarnContext(ctx, "skills: library index not persisted", "object", l.object, "err", err)
	}
}

// share stores x's stamp in the shared cache, and x itself first when
// withIndex, returning its encoding (nil when not encoded).
func (ix *indexes) share(ctx context.Context, l layer, x *index, withIndex bool) []byte {
	var b []byte
	if withIndex {
		var err error
		if b, err = encodeIndex(x, l); err != nil {
			ix.log.WarnContext(ctx, "skills: library index not published", "prefix", l.prefix, "err", err)
			return nil
		}
		// Stored before the stamp that names it: a replica that sees the
		// stamp finds the index.
		if err := ix.shared.Store(ctx, map[string][]byte{indexKey(l): b}, ix.cfg.HeadTTL); err != nil {
			ix.cacheLog.failed(ctx, "storing a library index", err)
		}
	}
	st := encodeStamp(stamp{gen: x.gen, listed: x.listed}, l)
	if err := ix.shared.Store(ctx, map[string][]byte{stampKey(l): st}, ix.cfg.HeadTTL); err != nil {
		ix.cacheLog.failed(ctx, "storing a library index stamp", err)
	}
	return b
}

// drop forgets every copy of l's index: in process, in the shared cache
// and in the bucket. Other replicas notice the missing stamp within a
// refresh interval and list before answering.
func (ix *indexes) drop(ctx context.Context, l layer) error {
	ix.mem.Remove(l.prefix)
	if err := ix.shared.Delete(ctx, stampKey(l), indexKey(l)); err != nil {
		return err
	}
	return ix.bucket.Delete(ctx, l.object)
}

// close waits for background revalidations.
func (ix *indexes) close() { ix.wg.Wait() }

// etag is the listed ETag of key, or "".
func (x *index) etag(key string) string {
	i, ok := slices.BinarySearchFunc(x.objs, key, func(o objstore.Object, k string) int {
		switch {
		case o.Key < k:
			return -1
		case o.Key > k:
			return 1
		}
		return 0
	})
	if !ok {
		return ""
	}
	return x.objs[i].ETag
}

// same reports whether y holds the same objects and heads as x.
func (x *index) same(y *index) bool {
	if len(x.objs) != len(y.objs) || len(x.heads) != len(y.heads) {
		return false
	}
	for i, o := range x.objs {
		p := y.objs[i]
		if o.Key != p.Key || o.ETag != p.ETag || o.Size != p.Size || !o.ModTime.Equal(p.ModTime) {
			return false
		}
	}
	for k, h := range x.heads {
		if g, ok := y.heads[k]; !ok || !bytes.Equal(g, h) {
			return false
		}
	}
	return true
}

// skillMDs returns the SKILL.md objects of the skills among objs, which
// findSkills would find: the ones whose heads an index holds.
func skillMDs(objs []objstore.Object, prefix string, maxSkills int) []objstore.Object {
	refs, _ := findSkills(addressable(objs, prefix), "", maxSkills)
	out := make([]objstore.Object, len(refs))
	for i, s := range refs {
		out[i] = s.skillMD
	}
	return out
}
