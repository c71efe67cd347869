package libindex

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// Index is one library layer as last listed: every object, the frontmatter
// head of every SKILL.md that is a skill, and the digest of every file of a
// skill within the MCP extension's limits. It is the unit of
// caching: kept decoded in process, encoded in the shared cache (so every
// replica reuses one listing) and persisted in the bucket (so a replica
// with an empty cache starts from it instead of reading every SKILL.md).
// Nothing changes an index once made; concurrent callers share it, and
// must not change it either.
type Index struct {
	// Gen identifies the content on every replica: a revalidation that
	// finds nothing changed keeps it, so views built from it stay current.
	Gen    uint64
	Listed time.Time // when the listing was taken
	// Took is how long the revalidation that made it took on this replica
	// (0: unknown): a library that takes long to list is served stale for
	// longer while it is listed in the background (maxStale).
	Took time.Duration
	// Changed is when a listing first found this content (Gen): a
	// library's first listing, or one that found it changed. It travels
	// with the index, so every replica gives a library the same
	// revalidation interval (FreshFor).
	Changed time.Time
	Objs    []objstore.Object // in key order
	// Heads holds the head of each skill's SKILL.md as of its listed ETag,
	// cut after the frontmatter, by key. A skill without one was deleted
	// between the listing and the read of its head.
	Heads []Head
	// Digests holds the digest of each file of every skill within the MCP
	// extension's limits (skillmd.OverLimits), by key, computed once per
	// listed version (key and ETag): a revalidation carries the previous
	// index's over for an unchanged ETag, by key. A file deleted between
	// the listing and its read has none.
	Digests []KeyDigest
}

// Heads and digests are sorted slices, not maps, their keys the strings of
// Objs: a user's index of a few skills is held by the thousand, and a map
// costs several times its entries.

// Head is the head of the SKILL.md at Key.
type Head struct {
	Key  string
	Head []byte
}

// KeyDigest is the digest of the file at Key.
type KeyDigest struct {
	Key string
	Digest
}

// HeadOf returns the head x holds of the SKILL.md at key.
func (x *Index) HeadOf(key string) ([]byte, bool) {
	i, ok := slices.BinarySearchFunc(x.Heads, key, func(h Head, k string) int { return strings.Compare(h.Key, k) })
	if !ok {
		return nil, false
	}
	return x.Heads[i].Head, true
}

// DigestOf returns the digest x holds of the file at key.
func (x *Index) DigestOf(key string) (Digest, bool) {
	i, ok := slices.BinarySearchFunc(x.Digests, key, func(d KeyDigest, k string) int { return strings.Compare(d.Key, k) })
	if !ok {
		return Digest{}, false
	}
	return x.Digests[i].Digest, true
}

// SortedHeads returns heads by key as an index holds them.
func SortedHeads(heads map[string][]byte) []Head {
	out := make([]Head, 0, len(heads))
	for k, h := range heads {
		out = append(out, Head{Key: k, Head: h})
	}
	slices.SortFunc(out, func(a, b Head) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// SortedDigests returns digests by key as an index holds them.
func SortedDigests(digests map[string]Digest) []KeyDigest {
	out := make([]KeyDigest, 0, len(digests))
	for k, dg := range digests {
		out = append(out, KeyDigest{Key: k, Digest: dg})
	}
	slices.SortFunc(out, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Layer is one library: a user's, or the shared one.
type Layer struct {
	Tag    string // the user, or SharedTag: the hash tag of its cache keys
	Prefix string // of its objects
	Object string // its persisted index
	// Side is an object outside the library read with it (the names of
	// its protected skills): listed in the index's Objs when it exists, so
	// its version is part of the index's content and generation.
	Side string
}

// Skill is one skill folder among a library's objects.
type Skill struct {
	SkillMD objstore.Object   // whose head an index holds
	Files   []objstore.Object // every file the skill serves, SKILL.md included
}

// Skills returns the skills among a library's objects (under prefix): the
// SKILL.md files whose heads an index holds, and the files whose digests it
// holds. Which folders are skills and which files belong to one is the
// catalog's rule, so the Store is given it.
type Skills func(objs []objstore.Object, prefix string) []Skill

// listTimeout bounds one load or revalidation of a library.
const listTimeout = time.Minute

var errTooManyObjects = errors.New("too many objects")

// maxIndexBytesPerObject bounds one object's share of an encoded index: a
// key of at most 1 KiB, its ETag and numbers, a frontmatter head of at
// most MaxFrontmatterBytes, and a digest.
const maxIndexBytesPerObject = 2<<10 + skillmd.MaxFrontmatterBytes + digestBytes

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
	skills   Skills
	cfg      Config
	log      *slog.Logger
	cacheLog *CacheLog
	metrics  *Metrics
	now      func() time.Time

	held   *Held
	mem    *Shelf[*held]      // by layer prefix
	flight singleflight.Group // loads callers wait for
	// drops count the Drop and Forget calls, and the Drops under way, by
	// stripe of layer prefixes: a load keeps (holds, publishes) what it
	// read only while no drop of its stripe began since the load did, so an
	// index read or listed before a change that dropped it is never kept
	// after the drop. dropMu makes that check and the hold one step.
	dropMu sync.Mutex
	drops  [dropStripes]dropState
	bg     sync.Map // prefixes queued or revalidating in the background
	work   *background
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
func New(bucket objstore.Bucket, c cache.Cache, cfg Config, skills Skills, log *slog.Logger, cl *CacheLog, m *Metrics) *Store {
	h := NewHeld(cfg.MaxHeldBytes, m)
	hr := &headReader{
		bucket: bucket, cache: c, ttl: cfg.HeadTTL, headBytes: int64(cfg.HeadBytes), concurrency: cfg.Concurrency, cacheLog: cl,
	}
	files := NewFiles(bucket, c, cfg, cl, m)
	dr := &digestReader{bucket: bucket, cache: c, files: files, ttl: cfg.HeadTTL, concurrency: cfg.Concurrency, cacheLog: cl, metrics: m}
	return &Store{bucket: bucket, shared: cache.Shared(c), reader: hr, digests: dr, files: files, skills: skills, cfg: cfg, log: log, cacheLog: cl, metrics: m, now: time.Now, held: h, mem: NewShelf[*held](h, HeldIndex), work: newBackground(cmp.Or(cfg.BackgroundRevalidations, DefaultBackgroundRevalidations))}
}

// HeldIndex is the kind of the indexes on the Held budget.
const HeldIndex = "index"

// Held is the budget of what the replica holds decoded: the store's
// indexes are on it, and the catalog puts what it builds on them there too.
func (ix *Store) Held() *Held { return ix.held }

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
	arrived := time.Now()
	x, started, err := ix.joinLoad(ctx, l)
	if err != nil && started.Before(arrived) && errkind.Of(err) == errkind.Unavailable && ctx.Err() == nil {
		// The load this caller joined began before it came and found
		// storage failing: storage may have recovered since (the first
		// caller after an outage would otherwise get the outage's
		// answer). One more load, itself shared, is the caller's own.
		x, _, err = ix.joinLoad(ctx, l)
	}
	if err != nil {
		return nil, err
	}
	ix.observe(x)
	return x, nil
}

// loaded is a shared load's outcome: its index, and when it began.
type loaded struct {
	x       *Index
	started time.Time
}

// joinLoad loads l, joining a load of l under way if there is one, and
// returns its index and when that load began.
func (ix *Store) joinLoad(ctx context.Context, l Layer) (*Index, time.Time, error) {
	// Callers share the load, so one caller giving up must not fail the
	// others; listTimeout bounds it instead.
	ch := ix.flight.DoChan(l.Prefix, func() (any, error) {
		started := time.Now()
		x, err := panics.GuardValue(func() (*Index, error) {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
			defer cancel()
			return traced(lctx, "libindex.load", l, func(ctx context.Context, l Layer) (*Index, error) { return ix.load(ctx, l, ix.dropCount(l)) })
		})()
		return loaded{x, started}, err
	})
	select {
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	case res := <-ch:
		if res.Shared {
			ix.metrics.Coalesced.WithLabelValues("index").Inc()
		}
		out, _ := res.Val.(loaded)
		return out.x, out.started, res.Err
	}
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
	shared, dropped := ix.fromShared(ctx, l, x)
	if shared != nil {
		x = shared
	}
	if x == nil && !dropped {
		if x = ix.fromBucket(ctx, l); x != nil && ix.keeps(l, since) {
			// Shared at once: a replica holding an index whose stamp is
			// missing takes it as dropped.
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
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	if ix.drops[stripe(l)].keeps(since) {
		ix.mem.Add(l.Prefix, &held{idx: x, checked: checked, failed: failed}, x.HeldBytes())
	}
}

// dropState is one stripe's drops: how many began or were forgotten, and
// how many Drops are deleting copies now.
type dropState struct {
	count   uint64
	running int
}

// keeps reports whether a load that began at count since may keep what it
// read: no drop began since, and none is deleting (a load during one may
// have read a copy just before it was deleted).
func (d dropState) keeps(since uint64) bool { return d.running == 0 && d.count == since }

// dropStripes spreads the drop counts, so dropping one library rarely
// keeps another's concurrent load from being held.
const dropStripes = 64

func stripe(l Layer) int {
	h := fnv.New32a()
	h.Write([]byte(l.Prefix))
	return int(h.Sum32() % dropStripes)
}

// dropCount is where a load of l begins: its stripe's count of drops.
func (ix *Store) dropCount(l Layer) uint64 {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	return ix.drops[stripe(l)].count
}

// keeps reports whether a load of l that began at since may keep what it
// read.
func (ix *Store) keeps(l Layer, since uint64) bool {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	return ix.drops[stripe(l)].keeps(since)
}

// forgetHeld counts a drop of l (running says how many Drops of its stripe
// began, +1, or ended, -1) and forgets the index held of it, in one step
// against hold.
func (ix *Store) forgetHeld(l Layer, running int) {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	d := &ix.drops[stripe(l)]
	d.count++
	d.running += running
	ix.mem.Remove(l.Prefix)
}

// unpublishIfDropped takes back what a load of l that began at since just
// published, when a drop began meanwhile: it may have published a copy
// the drop had already deleted. At worst that costs another listing.
func (ix *Store) unpublishIfDropped(ctx context.Context, l Layer, since uint64) {
	if ix.keeps(l, since) {
		return
	}
	if err := ix.shared.Delete(ctx, StampKey(l), IndexKey(l)); err != nil {
		ix.cacheLog.Failed(ctx, "taking back a library index", err)
	}
	if err := ix.bucket.Delete(ctx, l.Object); err != nil {
		ix.log.WarnContext(ctx, "skills: persisted library index not taken back", "object", l.Object, "err", err)
	}
}

// fromShared returns a newer index of l than x from the shared cache, or
// nil. dropped reports that the shared cache, reachable, holds none although
// x exists (an operator dropped it, or it expired), or holds another
// library's under l's keys: neither x nor the persisted index may be served
// without a listing.
func (ix *Store) fromShared(ctx context.Context, l Layer, x *Index) (newer *Index, dropped bool) {
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
		return nil, x != nil
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

// revalidateInBackground revalidates x on one of the store's background
// workers unless this process already is, or another replica holds the
// lock; the caller goes on serving x. Its spans
// join the trace of the load that asked for it (ctx's). since is where the
// load of x began: a drop after it keeps x from being held again.
func (ix *Store) revalidateInBackground(ctx context.Context, l Layer, x *Index, since uint64) {
	if _, running := ix.bg.LoadOrStore(l.Prefix, true); running {
		return
	}
	queued := ix.work.try(func() {
		defer ix.bg.Delete(l.Prefix)
		_ = panics.Guard(func() error {
			ctx, span := startSpan(tracing.Detached(ctx), "libindex.revalidate_background", l)
			defer span.End()
			ctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			unlock, ok, err := ix.shared.TryLock(ctx, LockKey(l), ix.cfg.IndexMaxStale)
			switch {
			case err != nil:
				// The lock is an optimization: without the shared cache each
				// replica revalidates on its own.
				ix.cacheLog.Failed(ctx, "locking a library index", err)
			case !ok:
				// Another replica is on it; ask the shared cache again after
				// a refresh interval.
				ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultLocked).Inc()
				ix.hold(l, x, ix.now(), false, since)
				return nil
			default:
				defer unlock()
			}
			if y := ix.revalidatedElsewhere(ctx, l, x, since); y != nil {
				ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultElsewhere).Inc()
				return nil
			}
			_, err = ix.revalidate(ctx, l, x, since)
			ix.metrics.Revalidations.WithLabelValues(ModeBackground, result(err)).Inc()
			if err != nil {
				ix.log.WarnContext(ctx, "skills: serving the last library index; revalidating it failed", "prefix", l.Prefix, "age", ix.now().Sub(x.Listed).Round(time.Second), "background", true, "err", err)
				ix.hold(l, x, ix.now(), true, since)
			}
			return nil
		})()
	})
	if !queued {
		// Every worker busy and the queue full: x is served as it is and
		// tried again a refresh interval later.
		ix.bg.Delete(l.Prefix)
		ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultDeferred).Inc()
	}
}

// syncLockWait bounds how long a caller that must have a fresh index waits
// for another replica's revalidation of it before listing itself (the
// other replica may have died holding the lock).
const syncLockWait = 5 * time.Second

// revalidateOnce is revalidate for a caller that waits for the result:
// under l's lock, waiting up to syncLockWait for another replica holding
// it, so that replicas asked for one stale library at once list it once.
// recheck: the shared cache may hold another replica's index (it held no
// other library's, nor was it dropped).
func (ix *Store) revalidateOnce(ctx context.Context, l Layer, x *Index, recheck bool, since uint64) (*Index, error) {
	if unlock, ok := ix.waitLock(ctx, l); ok {
		defer unlock()
	}
	if recheck {
		if y := ix.revalidatedElsewhere(ctx, l, x, since); y != nil {
			ix.metrics.Revalidations.WithLabelValues(ModeSync, ResultElsewhere).Inc()
			return y, nil
		}
	}
	fresh, err := ix.revalidate(ctx, l, x, since)
	ix.metrics.Revalidations.WithLabelValues(ModeSync, result(err)).Inc()
	return fresh, err
}

// waitLock takes l's revalidation lock, retrying while another replica
// holds it, for up to syncLockWait. ok is false when the lock could not be
// had (the shared cache failing, the wait over): the caller revalidates
// without it.
func (ix *Store) waitLock(ctx context.Context, l Layer) (unlock func(), ok bool) {
	wctx, cancel := context.WithTimeout(ctx, syncLockWait)
	defer cancel()
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		unlock, ok, err := ix.shared.TryLock(wctx, LockKey(l), ix.cfg.IndexMaxStale)
		if err != nil {
			if wctx.Err() == nil {
				ix.cacheLog.Failed(ctx, "locking a library index", err)
			}
			return nil, false
		}
		if ok {
			return unlock, true
		}
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

// revalidatedElsewhere returns l's index from the shared cache when another
// replica listed it less than a refresh interval ago (after x, which may be
// nil), holding it: the caller, holding l's lock, then lists nothing. A
// replica that decided to revalidate may have lost the race for the lock to
// one that has just done it.
func (ix *Store) revalidatedElsewhere(ctx context.Context, l Layer, x *Index, since uint64) *Index {
	y, _ := ix.fromShared(ctx, l, x)
	if y == nil {
		return nil
	}
	now := ix.now()
	if now.Sub(y.Listed) >= ix.FreshFor(y) {
		return nil
	}
	ix.hold(l, y, now, false, since)
	return y
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// revalidate lists l, reads the heads of the SKILL.md files and hashes the
// skill files that prev does not hold at their listed ETag, and publishes
// the new index: in process, in the shared cache, and in the bucket when
// its content changed.
func (ix *Store) revalidate(ctx context.Context, l Layer, prev *Index, since uint64) (x *Index, err error) {
	ctx, span := startSpan(ctx, "libindex.revalidate", l)
	defer func() { endSpan(span, x, err) }()
	listed := ix.now()
	var objs []objstore.Object
	err = objstore.Walk(ctx, ix.bucket, l.Prefix, func(o objstore.Object) error {
		if len(objs) == ix.cfg.MaxObjects {
			return errTooManyObjects
		}
		objs = append(objs, o)
		return nil
	})
	if errors.Is(err, errTooManyObjects) {
		// Serve what fits rather than fail every call for this library.
		ix.log.WarnContext(ctx, "skill library truncated", "prefix", l.Prefix, "max_objects", ix.cfg.MaxObjects)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if l.Side != "" {
		a, err := ix.bucket.Stat(ctx, l.Side)
		switch {
		case err == nil:
			o := objstore.Object{Key: l.Side, Attributes: a}
			i, _ := slices.BinarySearchFunc(objs, l.Side, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
			objs = slices.Insert(objs, i, o)
		case !errors.Is(err, objstore.ErrNotFound):
			return nil, err
		}
	}
	if cap(objs) > len(objs) {
		objs = slices.Clone(objs) // held as it is: without the listing's spare room
	}
	skills := ix.skills(objs, l.Prefix)
	files := 0
	for _, s := range skills {
		files += len(s.Files)
	}
	// Sized for what there is: an index is held as it is made.
	x = &Index{Listed: listed, Objs: objs, Heads: make([]Head, 0, len(skills)), Digests: make([]KeyDigest, 0, files)}
	var missing, unhashed []objstore.Object
	carried := 0
	for _, s := range skills {
		o := s.SkillMD
		if h, ok := prev.head(o); ok {
			x.Heads = append(x.Heads, Head{Key: o.Key, Head: h})
		} else {
			missing = append(missing, o)
		}
		if !hashed(s.Files) {
			continue
		}
		for _, f := range s.Files {
			if dg, ok := prev.digest(f); ok {
				x.Digests = append(x.Digests, KeyDigest{Key: f.Key, Digest: dg})
				carried++
			} else {
				unhashed = append(unhashed, f)
			}
		}
	}
	read, moved, err := ix.reader.fetch(ctx, l.Tag, missing)
	if err != nil {
		return nil, err
	}
	for key, a := range moved {
		// The head read is of a version written since the listing: the
		// index names that version (the next listing finds it unchanged).
		if i, ok := slices.BinarySearchFunc(objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) }); ok {
			objs[i].Attributes = a
		}
	}
	for _, o := range missing {
		if h, ok := read[o.Key]; ok {
			x.Heads = append(x.Heads, Head{Key: o.Key, Head: h})
		}
	}
	hashed, err := ix.digests.fetch(ctx, l.Tag, unhashed)
	if err != nil {
		return nil, err
	}
	for _, o := range unhashed {
		if dg, ok := hashed[o.Key]; ok {
			x.Digests = append(x.Digests, KeyDigest{Key: o.Key, Digest: dg})
		}
	}
	slices.SortFunc(x.Heads, func(a, b Head) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(x.Digests, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	x.Digests = slices.CompactFunc(x.Digests, func(a, b KeyDigest) bool { return a.Key == b.Key }) // a file of two skills
	ix.metrics.Digests.WithLabelValues(DigestCarried).Add(float64(carried))
	noteRevalidation(ctx, len(missing), len(unhashed), carried)
	x.Gen, x.Changed = rand.Uint64(), listed
	changed := prev == nil || !prev.same(x)
	if !changed {
		x.Gen, x.Changed = prev.Gen, prev.Changed
	}
	x.Took = ix.now().Sub(listed)
	ix.metrics.Loads.WithLabelValues(SourceListing).Inc()
	// Held even uncached: the next revalidation reuses its heads. A
	// listing that began before a drop may predate the change that caused
	// it: it answers its callers but is neither kept nor published.
	ix.hold(l, x, ix.now(), false, since)
	if ix.cached() && ix.keeps(l, since) {
		ix.publish(ctx, l, x, changed)
		ix.unpublishIfDropped(ctx, l, since)
	}
	return x, nil
}

// publish stores x in the shared cache (only its stamp when its content is
// the one already there) and persists it when it changed. Both are best
// effort: a failure costs another replica a listing, never a call.
func (ix *Store) publish(ctx context.Context, l Layer, x *Index, changed bool) {
	b := ix.share(ctx, l, x, changed)
	if b == nil {
		return
	}
	if _, err := ix.bucket.Put(ctx, l.Object, bytes.NewReader(b), int64(len(b)), objstore.PutOptions{}); err != nil {
		ix.log.WarnContext(ctx, "skills: library index not persisted", "object", l.Object, "err", err)
	}
}

// share stores x's stamp in the shared cache, and x itself first when
// withIndex, returning its encoding (nil when not encoded).
func (ix *Store) share(ctx context.Context, l Layer, x *Index, withIndex bool) []byte {
	var b []byte
	if withIndex {
		var err error
		if b, err = encodeIndex(x, l); err != nil {
			ix.log.WarnContext(ctx, "skills: library index not published", "prefix", l.Prefix, "err", err)
			return nil
		}
		// Stored before the stamp that names it: a replica that sees the
		// stamp finds the index.
		if err := ix.shared.Store(ctx, map[string][]byte{IndexKey(l): b}, ix.cfg.HeadTTL); err != nil {
			ix.cacheLog.Failed(ctx, "storing a library index", err)
		}
	}
	st := encodeStamp(Stamp{Gen: x.Gen, Listed: x.Listed}, l)
	if err := ix.shared.Store(ctx, map[string][]byte{StampKey(l): st}, ix.cfg.HeadTTL); err != nil {
		ix.cacheLog.Failed(ctx, "storing a library index stamp", err)
	}
	return b
}

// Drop forgets every copy of l's index: in process, in the shared cache
// and in the bucket. Other replicas notice the missing stamp within a
// refresh interval and list before answering (at once after Forget). A
// load here that read the shared or persisted copy before it was deleted
// keeps nothing: the drop is counted before and after the deletes.
func (ix *Store) Drop(ctx context.Context, l Layer) error {
	ix.forgetHeld(l, +1)
	defer ix.forgetHeld(l, -1)
	if err := ix.shared.Delete(ctx, StampKey(l), IndexKey(l)); err != nil {
		return err
	}
	return ix.bucket.Delete(ctx, l.Object)
}

// Forget drops this process's copy of l's index only: another replica
// dropped the shared and persisted copies (an event told it of a change),
// so the next call here reads the newer index it published, or lists.
// A load under way here keeps nothing it read before.
func (ix *Store) Forget(l Layer) { ix.forgetHeld(l, 0) }

// ForgetAll drops every index this process holds, for a replica that may
// have missed a Forget (its subscription to them was interrupted): each is
// read again from the shared cache, without a listing unless it changed.
func (ix *Store) ForgetAll() {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	for i := range ix.drops {
		ix.drops[i].count++
	}
	ix.mem.Purge()
}

// Close waits for the background revalidations under way. The store
// stays usable: a later call may start more.
func (ix *Store) Close() { ix.work.wait() }

// head returns the head x holds of o's listed version; x may be nil.
func (x *Index) head(o objstore.Object) ([]byte, bool) {
	if x == nil {
		return nil, false
	}
	h, ok := x.HeadOf(o.Key)
	return h, ok && x.etag(o.Key) == o.ETag
}

// digest returns the digest x holds of o's listed version; x may be nil.
// A file without an ETag names no version, so it is hashed again.
func (x *Index) digest(o objstore.Object) (Digest, bool) {
	if x == nil || o.ETag == "" {
		return Digest{}, false
	}
	dg, ok := x.DigestOf(o.Key)
	return dg, ok && x.etag(o.Key) == o.ETag
}

// etag is the listed ETag of key, or "".
func (x *Index) etag(key string) string {
	i, ok := x.object(key)
	if !ok {
		return ""
	}
	return x.Objs[i].ETag
}

// object returns the number in Objs of the object at key.
func (x *Index) object(key string) (int, bool) {
	return slices.BinarySearchFunc(x.Objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
}

// same reports whether y holds the same objects, heads and digests as x.
func (x *Index) same(y *Index) bool {
	if len(x.Objs) != len(y.Objs) || len(x.Heads) != len(y.Heads) || len(x.Digests) != len(y.Digests) {
		return false
	}
	for i, o := range x.Objs {
		p := y.Objs[i]
		if o.Key != p.Key || o.ETag != p.ETag || o.Size != p.Size || !o.ModTime.Equal(p.ModTime) {
			return false
		}
	}
	for i, h := range x.Heads {
		if g := y.Heads[i]; g.Key != h.Key || !bytes.Equal(g.Head, h.Head) {
			return false
		}
	}
	for i, dg := range x.Digests {
		if y.Digests[i] != dg {
			return false
		}
	}
	return true
}
