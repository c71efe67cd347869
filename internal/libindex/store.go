package libindex

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex/loads"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Store serves each library's index: from process memory while it is
// younger than the refresh interval, then after checking the shared cache
// for a newer one (another replica's), revalidating it in the background
// until it is older than the max staleness, when the caller waits for the
// revalidation. Revalidating is one paged LIST, a read of the SKILL.md
// heads whose ETag changed and a hash of the skill files whose ETag
// changed. With refresh 0 every call revalidates and nothing but the heads
// and digests is cached.
//
// Storage cost follows use and change, not replicas: a library is
// revalidated only when a call finds its index older than its interval (an
// idle library costs nothing), which grows from the refresh interval while
// the library stays unchanged (FreshFor), and at most once an interval
// across replicas.
// The revalidating replica holds a lock in the shared cache, and, once it
// has it, takes the index from the shared cache instead of listing when
// another replica listed it less than an interval before. A replica that
// dropped an index (its held budget full) loads it from the shared cache.
// Indexes in process memory are on the Held byte budget, least recently
// used out.
type Store struct {
	bucket   objstore.Bucket
	shared   cache.Cache // the level every replica sees
	reader   *headReader
	digests  *digestReader
	files    *Files
	cfg      Config
	log      *slog.Logger
	cacheLog *CacheLog
	metrics  *Metrics
	now      func() time.Time

	held  *cache.Held
	mem   *cache.Shelf[*held]  // by layer prefix
	loads *loads.Group[*Index] // loads callers wait for, and the drops that void them
	bg    sync.Map             // prefixes queued or revalidating in the background
	work  *loads.Background
}

// held is an index in process memory and what this process knows of it.
type held struct {
	idx *Index
	// checked is when the shared cache last said idx is the newest, or
	// when a revalidation last ended (failed included): once idx is due,
	// it is served without asking anyone until a refresh interval (less
	// idx's spread) after the first check since.
	checked time.Time
	failed  bool // the last revalidation failed: serve up to StaleIfError
}

// New returns the store of the libraries in bucket, sharing indexes,
// SKILL.md heads and file digests through c. cl and m are shared with the
// other users of the skills cache.
func New(bucket objstore.Bucket, c cache.Cache, cfg Config, log *slog.Logger, cl *CacheLog, m *Metrics) *Store {
	h := cache.NewHeld(cfg.MaxHeldBytes, m.HeldMetrics)
	hr := &headReader{
		bucket: bucket, cache: c, ttl: cfg.HeadTTL, headBytes: int64(cfg.HeadBytes), concurrency: cfg.Concurrency, cacheLog: cl,
	}
	files := NewFiles(bucket, c, cfg, cl, m)
	dr := &digestReader{bucket: bucket, cache: c, files: files, ttl: cfg.HeadTTL, concurrency: cfg.Concurrency, cacheLog: cl, metrics: m}
	return &Store{bucket: bucket, shared: cache.Shared(c), reader: hr, digests: dr, files: files, cfg: cfg, log: log, cacheLog: cl, metrics: m, now: time.Now, held: h, mem: cache.NewShelf[*held](h, HeldIndex),
		loads: loads.NewGroup[*Index](listTimeout, m.Coalesced.WithLabelValues("index").Inc), work: loads.NewBackground(cmp.Or(cfg.BackgroundRevalidations, DefaultBackgroundRevalidations))}
}

// HeldIndex is the kind of the indexes on the Held budget.
const HeldIndex = "index"

// Held is the budget of what the replica holds decoded: the store's
// indexes are on it, and the catalog puts what it builds on them there too.
func (ix *Store) Held() *cache.Held { return ix.held }

// Files returns the reader of the libraries' files the store hashes
// through: what an index build hashed is cached for every later read.
func (ix *Store) Files() *Files { return ix.files }

// SetNow makes the store read the time from now, for tests that move a
// clock.
func (ix *Store) SetNow(now func() time.Time) { ix.now = now }

func (ix *Store) cached() bool { return ix.cfg.IndexRefresh > 0 }

// Get returns the index of l, as fresh as the configured bounds promise.
func (ix *Store) Get(ctx context.Context, l Layer) (*Index, error) {
	if x, ok := ix.Servable(l); ok {
		return x, nil
	}
	x, err := ix.loads.Do(ctx, l.Prefix, func(ctx context.Context, since uint64) (*Index, error) {
		return traced(ctx, "libindex.load", l, func(ctx context.Context, l Layer) (*Index, error) { return ix.load(ctx, l, since) })
	})
	if err != nil {
		return nil, err
	}
	ix.observe(x)
	return x, nil
}

// Servable returns the index of l Get would return without asking anyone
// or waiting, if there is one: a caller needing several indexes, most
// calls all held, then starts no goroutine to wait for them.
func (ix *Store) Servable(l Layer) (*Index, bool) {
	if h, ok := ix.mem.Get(l.Prefix); ok && ix.cached() && ix.servable(h, ix.now()) {
		ix.observe(h.idx)
		return h.idx, true
	}
	return nil, false
}

// servable reports whether h may be served without asking anyone.
func (ix *Store) servable(h *held, now time.Time) bool {
	due := h.idx.Listed.Add(ix.FreshFor(h.idx))
	if now.Before(due) {
		return true
	}
	// Due: ask the shared cache (another replica may have revalidated it)
	// as it falls due, then once a refresh interval, less its spread.
	if h.checked.Before(due) || now.Sub(h.checked) >= ix.cfg.IndexRefresh-spread(ix.cfg.IndexRefresh, h.idx.Gen) {
		return false
	}
	age := now.Sub(h.idx.Listed)
	return age < ix.maxStale(h.idx) || (h.failed && age < ix.cfg.StaleIfError)
}

// staleListings is how many of its own listings' time an index may be
// served stale while the next runs in the background, when that is longer
// than --skills.index-max-stale: with the local store's 1s bound, listing a
// library of 10,000 skills (about a second) would otherwise make a call
// wait for a listing almost every second.
const staleListings = 4

// maxStale is the age after which x is revalidated before answering.
func (ix *Store) maxStale(x *Index) time.Duration {
	return max(ix.cfg.IndexMaxStale, staleListings*x.Took)
}

func (ix *Store) observe(x *Index) {
	ix.metrics.Age.Observe(max(0, ix.now().Sub(x.Listed).Seconds()))
}

// load finds the newest index of l this replica can get, and revalidates
// it when it is too old: in the background when it may still be served,
// before returning when not.
func (ix *Store) load(ctx context.Context, l Layer, since uint64) (*Index, error) {
	if !ix.cached() {
		return ix.revalidate(ctx, l, ix.current(l), since)
	}
	h, _ := ix.mem.Get(l.Prefix)
	var x *Index
	failed := false
	if h != nil {
		x, failed = h.idx, h.failed
	}
	shared, dropped := ix.fromShared(ctx, l, x, true)
	if shared != nil {
		x = shared
	}
	if x == nil && !dropped {
		if x = ix.fromBucket(ctx, l); x != nil && ix.keeps(l, since) {
			// Shared at once: a replica holding an index whose stamp is
			// missing reads the persisted one's head (stampMissing).
			ix.share(ctx, l, x, true)
			ix.unpublishIfDropped(ctx, l, since)
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
		switch age := now.Sub(x.Listed); {
		case age < ix.FreshFor(x):
			ix.hold(l, x, now, failed, since)
			return x, nil
		case age < ix.maxStale(x):
			ix.hold(l, x, now, failed, since)
			ix.revalidateInBackground(ctx, l, x, since)
			return x, nil
		case failed && age < ix.cfg.StaleIfError:
			// Storage failed the last revalidation: retry it in the
			// background rather than make this caller wait for it to fail.
			ix.metrics.StaleServed.Inc()
			ix.hold(l, x, now, true, since)
			ix.revalidateInBackground(ctx, l, x, since)
			return x, nil
		}
	}
	fresh, err := ix.revalidateOnce(ctx, l, x, !dropped, since)
	if err == nil {
		return fresh, nil
	}
	if x != nil && now.Sub(x.Listed) < ix.cfg.StaleIfError && ctx.Err() == nil {
		// Storage is failing: the last index beats no answer, and it is
		// retried once per refresh interval, not by every call.
		ix.log.WarnContext(ctx, "skills: serving the last library index; revalidating it failed", "prefix", l.Prefix, "age", now.Sub(x.Listed).Round(time.Second), "err", err)
		ix.metrics.StaleServed.Inc()
		ix.hold(l, x, now, true, since)
		return x, nil
	}
	return nil, err
}

// current is the index held in process, or nil.
func (ix *Store) current(l Layer) *Index {
	if h, ok := ix.mem.Get(l.Prefix); ok {
		return h.idx
	}
	return nil
}

// hold keeps x in process unless l was dropped since the load began.
func (ix *Store) hold(l Layer, x *Index, checked time.Time, failed bool, since uint64) {
	ix.loads.KeepIf(l.Prefix, since, func() {
		ix.mem.Add(l.Prefix, &held{idx: x, checked: checked, failed: failed}, x.HeldBytes())
	})
}

// fromShared returns a newer index of l than x from the shared cache, or
// nil. dropped reports that the shared cache holds another library's under
// l's keys, or, reachable, no stamp although x exists and (with check) the
// persisted index says it was dropped (stampMissing): neither x nor the
// persisted index may be served without a listing.
func (ix *Store) fromShared(ctx context.Context, l Layer, x *Index, check bool) (newer *Index, dropped bool) {
	keys := []string{StampKey(l)}
	if x == nil {
		keys = append(keys, IndexKey(l)) // nothing to compare: fetch it at once
	}
	hits, err := ix.shared.Fetch(ctx, keys)
	if err != nil {
		ix.cacheLog.Failed(ctx, "fetching a library index", err)
		return nil, false
	}
	st, err := DecodeStamp(hits[StampKey(l)], l)
	if errors.Is(err, errOtherLibrary) {
		ix.mismatched(ctx, l, SourceSharedCache, err)
		return nil, true
	}
	if err != nil {
		if x == nil || !check {
			return nil, x != nil
		}
		return ix.stampMissing(ctx, l, x)
	}
	st.Listed = ix.clamp(st.Listed)
	if x != nil {
		switch {
		case st.Gen == x.Gen && st.Listed.After(x.Listed):
			// Revalidated elsewhere, unchanged: same content, newer date.
			return &Index{Gen: x.Gen, Listed: st.Listed, Changed: x.Changed, Objs: x.Objs, Heads: x.Heads, Digests: x.Digests}, false
		case st.Gen == x.Gen || !st.Listed.After(x.Listed):
			return nil, false
		}
		if hits, err = ix.shared.Fetch(ctx, []string{IndexKey(l)}); err != nil {
			ix.cacheLog.Failed(ctx, "fetching a library index", err)
			return nil, false
		}
	}
	b, ok := hits[IndexKey(l)]
	if !ok {
		return nil, false
	}
	y, err := DecodeIndex(b, l, ix.cfg.MaxObjects)
	if errors.Is(err, errOtherLibrary) {
		ix.mismatched(ctx, l, SourceSharedCache, err)
		return nil, true
	}
	if err != nil {
		ix.log.WarnContext(ctx, "skills cache: ignoring a cached library index", "prefix", l.Prefix, "err", err)
		return nil, false
	}
	if y.Gen == st.Gen {
		y.Listed = st.Listed
	}
	y.Listed = ix.clamp(y.Listed)
	ix.metrics.Loads.WithLabelValues(SourceSharedCache).Inc()
	return y, false
}

// mismatched counts and logs an index of another library found under l's
// key in source.
func (ix *Store) mismatched(ctx context.Context, l Layer, source string, err error) {
	ix.metrics.Mismatched.WithLabelValues(KindIndex, source).Inc()
	ix.cacheLog.Mismatched(ctx, KindIndex, source, l.Prefix, err)
}

// clamp keeps another replica's clock running ahead from making an index
// look younger than it is.
func (ix *Store) clamp(t time.Time) time.Time {
	if now := ix.now(); t.After(now) {
		return now
	}
	return t
}

// fromBucket returns the persisted index of l, or nil.
func (ix *Store) fromBucket(ctx context.Context, l Layer) *Index {
	rc, a, err := ix.bucket.Get(ctx, l.Object)
	if err != nil {
		if !objstore.IsNotFound(err) {
			ix.log.WarnContext(ctx, "skills: persisted library index not read", "prefix", l.Prefix, "err", err)
		}
		return nil
	}
	defer rc.Close()
	// Anyone with bucket access can write the object: never read more
	// than an index of --skills.max-objects objects can take.
	limit := int64(ix.cfg.MaxObjects) * maxIndexBytesPerObject
	if a.Size > limit {
		ix.log.WarnContext(ctx, "skills: ignoring a persisted library index", "object", l.Object, "size", a.Size, "limit", limit)
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(max(a.Size, 0)))
	if _, err := buf.ReadFrom(io.LimitReader(rc, limit+1)); err != nil {
		ix.log.WarnContext(ctx, "skills: persisted library index not read", "prefix", l.Prefix, "err", err)
		return nil
	}
	x, err := DecodeIndex(buf.Bytes(), l, ix.cfg.MaxObjects)
	switch {
	case errors.Is(err, errOtherLibrary):
		// Listed afresh and, as it then changed, persisted over.
		ix.mismatched(ctx, l, SourceBucket, err)
		return nil
	case errors.Is(err, errIndexVersion):
		// An older replica's: a miss, rewritten after the listing.
		ix.log.DebugContext(ctx, "skills: persisted library index of another version", "object", l.Object, "err", err)
		return nil
	case err != nil:
		ix.log.WarnContext(ctx, "skills: ignoring a persisted library index", "object", l.Object, "err", err)
		return nil
	}
	x.Listed = ix.clamp(x.Listed)
	ix.metrics.Loads.WithLabelValues(SourceBucket).Inc()
	return x
}

// Close waits for the background revalidations under way. The store
// stays usable: a later call may start more.
func (ix *Store) Close() { ix.work.Wait() }
