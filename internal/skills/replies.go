package skills

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Encode turns a catalog answer into the reply sent for it. It must depend
// on nothing but its argument and what the caller named in the call (the
// variant of PageReply), as its result answers every later call with the
// same key.
type Encode[T any] func(T) ([]byte, error)

// PageReply is Page encoded by encode, reused while the caller's library
// and settings and the request are unchanged: a warm listing costs the
// lookup of the view and settings every call makes, not a listing and an
// encoding. variant names whatever else encode depends on (a view of the
// reply), so differently encoded replies of one page are kept apart.
func (c *Catalog) PageReply(ctx context.Context, id mounts.Caller, opts ListOptions, pageSize int32, token, variant string, encode Encode[Page]) ([]byte, error) {
	q, err := c.pageQuery(opts, pageSize, token)
	if err != nil {
		return nil, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	c.listed(ctx, id, s)
	k := s.replyKey(replyList).str(variant).str(q.scope).int(int64(q.count)).str(q.after)
	return c.replies.get(ctx, replyList, k.sum(), func() ([]byte, error) { return encode(c.page(s, q)) })
}

// PromptReply is Prompt encoded by encode, reused as PageReply's pages
// are, and the caller's library digest. The block encode is given has no
// LibraryDigest: the caller adds the digest to each reply, so users who
// see the same block, whatever else their libraries hold, share one kept
// reply (replies keeps equal bytes once).
func (c *Catalog) PromptReply(ctx context.Context, id mounts.Caller, opts ListOptions, f skillmd.FormatOptions, encode Encode[Block]) (reply []byte, libraryDigest string, err error) {
	f, err = c.formatOptions(f)
	if err != nil {
		return nil, "", err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return nil, "", err
	}
	k := s.replyKey(replyFormat).str(opts.Category).bool(opts.FilterCategory).
		str(f.Format).int(int64(f.CharBudget)).int(int64(f.MaxSkills)).bool(f.GroupByCategory).str(f.SearchTool).str(f.Query)
	reply, err = c.replies.get(ctx, replyFormat, k.sum(), func() ([]byte, error) {
		// Waiters on this build share it: one leaving fails none (as replies.get).
		b, err := c.prompt(context.WithoutCancel(ctx), s, opts, f)
		if err != nil {
			return nil, err
		}
		b.LibraryDigest = ""
		return encode(b)
	})
	if err != nil {
		return nil, "", err
	}
	return reply, s.digest(), nil
}

// SearchReply is Search encoded by encode, reused as PageReply's pages are
// for a repeated query.
func (c *Catalog) SearchReply(ctx context.Context, id mounts.Caller, opts SearchOptions, encode Encode[Results]) ([]byte, error) {
	opts, err := c.searchOptions(opts)
	if err != nil {
		return nil, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	k := s.replyKey(replySearch).str(opts.Query).int(int64(opts.Limit)).str(opts.Category).bool(opts.FilterCategory).
		int(int64(math.Float64bits(opts.MinRelevance)))
	return c.replies.get(ctx, replySearch, k.sum(), func() ([]byte, error) {
		res, err := c.search(context.WithoutCancel(ctx), s, opts) // as PromptReply's
		if err != nil {
			return nil, err
		}
		return encode(res)
	})
}

// GetReply is Get encoded by encode, reused while the skill ref resolves
// to is the same: one version of one layer's skill, with the same notes and
// enabled or not. Unlike the other replies it is not keyed by the caller's
// library: a shared skill's reply serves every user who sees it alike, so
// the replies a replica keeps grow with the skills in use, not the users.
// A pinned thread's call, and a SKILL.md read at a version newer than the
// listing's, are answered without keeping the reply.
func (c *Catalog) GetReply(ctx context.Context, id mounts.Caller, ref string, encode Encode[Detail]) ([]byte, error) {
	r, err := c.resolve(ctx, id, ref)
	if err != nil {
		return nil, err
	}
	pinned := c.views.pinned(ctx)
	var key string
	if !pinned && r.s.skillMD.ETag != "" {
		// The key names the SKILL.md's version, and a reply is kept only
		// when built from that version: a kept one needs the file neither
		// read nor parsed (with many users, their parsed files are not all
		// held).
		key = r.replyKey().sum()
		if b, ok := c.replies.hit(replyGet, key); ok {
			return b, nil
		}
	}
	f, err := c.skillMD(ctx, r.s)
	if err != nil {
		return nil, err
	}
	build := func() ([]byte, error) {
		d, err := c.detail(r, f)
		if err != nil {
			return nil, err
		}
		if d.Files, d.FilesOmitted, err = c.describe(ctx, r.s); err != nil {
			return nil, err
		}
		return encode(d)
	}
	if f.etag != r.s.skillMD.ETag || pinned {
		c.replies.metrics.requests.WithLabelValues(replyGet, "uncached").Inc()
		return build()
	}
	if key == "" {
		key = r.replyKey().sum()
	}
	if !c.admitReply.keeps(r.s, key) {
		c.replies.metrics.requests.WithLabelValues(replyGet, "miss").Inc()
		return build()
	}
	return c.replies.get(ctx, replyGet, key, build)
}

// replyKey is the key of r's GetSkill reply. A layer's generation names
// its files, manifests and protections on every replica, so the skill's
// layer and generation, its dir and name (as the view resolved it), its
// notes and whether the caller disabled it say everything the reply holds.
// A user's own skill is keyed by the user's library and both generations
// (what the user's layer makes of the shared one can change its notes);
// any other by the generation of the layers under the user's, the same
// for every user over them.
func (r resolved) replyKey() *keyBuilder {
	s := r.s
	k := (&keyBuilder{}).str(replyGet).str(s.layer).str(s.dir).str(s.name).str(s.skillMD.Key).str(s.skillMD.ETag)
	if s.layer == LayerUser {
		k.str(r.v.userBase).int(int64(r.v.userGen))
	}
	k.int(int64(r.v.sharedGen)).bool(slices.Contains(r.st.Disabled, s.name))
	for _, p := range [][]string{s.note().Warnings, r.notes} {
		k.int(int64(len(p)))
		for _, w := range p {
			k.str(w)
		}
	}
	return k
}

// Reply kinds: the first field of every reply key, and a label of the
// metrics.
const (
	replyList   = "list"
	replyFormat = "format"
	replySearch = "search"
	replyGet    = "get"
)

// sharedKind reports whether replies of kind are looked for and put in the
// shared cache: a GetSkill reply is built from what the replica holds in
// less time than a round trip takes.
func sharedKind(kind string) bool { return kind != replyGet }

// replyKey starts the key of a reply of kind made from s. A view is rebuilt
// exactly when one of its indexes' generations changes (and a generation
// names one content of its library on every replica), so the user's
// library, the two generations and the settings say everything a reply
// depends on besides the request. The library digest alone would not: it
// leaves out invalid skills (listed with include_invalid), a SKILL.md's
// ETag and which layer serves a skill.
func (s snapshot) replyKey(kind string) *keyBuilder {
	k := (&keyBuilder{}).str(kind).str(s.v.userBase).int(int64(s.v.userGen)).int(int64(s.v.sharedGen))
	k.int(int64(len(s.st.Disabled)))
	for _, name := range s.st.Disabled {
		k.str(name)
	}
	return k.str(string(s.v.scopeKey()))
}

// keyBuilder encodes a key's fields so that no two sequences of fields
// encode alike.
type keyBuilder struct{ b []byte }

func (k *keyBuilder) str(s string) *keyBuilder { k.b = appendField(k.b, s); return k }

func (k *keyBuilder) int(n int64) *keyBuilder { k.b = binary.AppendVarint(k.b, n); return k }

func (k *keyBuilder) bool(v bool) *keyBuilder {
	if v {
		return k.int(1)
	}
	return k.int(0)
}

// sum is the key: fixed-size whatever the fields (a query, a long list of
// disabled skills), so the bound on the cache counts keys exactly.
func (k *keyBuilder) sum() string {
	sum := sha256.Sum256(k.b)
	return string(sum[:])
}

// replyOverhead is charged per reply on top of its key, for the list
// element and map slot, so a flood of tiny replies is bounded too;
// bodyOverhead per distinct body on top of its bytes.
const (
	replyOverhead = 96
	bodyOverhead  = 96
)

// replies keeps encoded replies by key, least recently used first out,
// within maxBytes. A reply is never changed once stored: every caller
// shares the same bytes. Concurrent misses of one key build it once.
//
// Replies of the same bytes are kept once (body), whatever their keys: the
// prompt block of every user who sees the same skills within the budget
// is one block, and a user's key costs its key and not another copy.
//
// With a shared cache (Redis), a reply this replica does not keep is
// looked for there before it is built, and a reply built here is put
// there: a key names one content on every replica (replyKey), so a block
// one replica built serves every replica, and a replica serving more users
// than its own bound keeps costs a round trip instead of a build.
type replies struct {
	maxBytes  int64 // 0: nothing is kept
	flight    singleflight.Group
	metrics   *replyMetrics
	shared    cache.Cache // nil: replies are kept in process only
	sharedTTL time.Duration
	cacheLog  *libindex.CacheLog

	mu     sync.Mutex
	lru    *simplelru.LRU[string, *body]
	bodies map[[sha256.Size]byte]*body // by the sha256 of their bytes
	bytes  int64
}

// body is the bytes of one or more kept replies.
type body struct {
	b    []byte
	sum  [sha256.Size]byte
	refs int // keys kept with it
}

func newReplies(maxBytes int64, m *replyMetrics) *replies {
	r := &replies{maxBytes: maxBytes, metrics: m, bodies: map[[sha256.Size]byte]*body{}}
	// Bounded by bytes, not count: the count bound is never reached.
	r.lru, _ = simplelru.NewLRU(math.MaxInt, func(key string, b *body) {
		r.bytes -= keyCost(key)
		if b.refs--; b.refs == 0 {
			delete(r.bodies, b.sum)
			r.bytes -= bodyCost(b.b)
		}
	})
	return r
}

// share makes r look for and put replies in c for ttl (c nil or ttl 0:
// not at all).
func (r *replies) share(c cache.Cache, ttl time.Duration, cl *libindex.CacheLog) {
	if c == nil || ttl <= 0 || r.maxBytes <= 0 {
		return
	}
	r.shared, r.sharedTTL, r.cacheLog = c, ttl, cl
}

func keyCost(key string) int64 { return int64(len(key) + replyOverhead) }

func bodyCost(b []byte) int64 { return int64(len(b) + bodyOverhead) }

// replyCost is what a reply of its own body costs.
func replyCost(key string, b []byte) int64 { return keyCost(key) + bodyCost(b) }

// replyKeySpace names replies in the shared cache; the version names how a
// reply is encoded and framed (sharedReply): bump it when an encoder's
// output changes, so replicas of another version never serve each other's.
const replyKeySpace = "skills:v3:reply:"

func sharedReplyKey(key string) string { return replyKeySpace + hex.EncodeToString([]byte(key)) }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// sharedReply frames b for the shared cache: b, then its CRC-32C, so a
// damaged or cut value is never sent as a reply.
func sharedReply(b []byte) []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, len(b)+4), b...), crc32.Checksum(b, crcTable))
}

var errBadReply = errors.New("reply checksum mismatch")

// unframeReply returns the reply framed by sharedReply.
func unframeReply(v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, errBadReply
	}
	b := v[:len(v)-4]
	if crc32.Checksum(b, crcTable) != binary.BigEndian.Uint32(v[len(v)-4:]) {
		return nil, errBadReply
	}
	return b[:len(b):len(b)], nil
}

// get returns the reply under key, built by build when it is kept neither
// here nor in the shared cache.
func (r *replies) get(ctx context.Context, kind, key string, build func() ([]byte, error)) ([]byte, error) {
	if r.maxBytes <= 0 {
		r.metrics.requests.WithLabelValues(kind, "uncached").Inc()
		return build()
	}
	if b, ok := r.hit(kind, key); ok {
		return b, nil
	}
	// The build reads only the snapshot its caller took, not the caller's
	// context: whoever waits on it gets the reply of the same key, and one
	// caller giving up fails none of them.
	ctx = context.WithoutCancel(ctx)
	v, err, _ := r.flight.Do(key, func() (any, error) {
		if b, ok := r.kept(key); ok { // a build that just ended may have kept it

			r.metrics.requests.WithLabelValues(kind, "hit").Inc()
			return b, nil
		}
		if b, ok := r.fetchShared(ctx, kind, key); ok {
			r.metrics.requests.WithLabelValues(kind, "shared").Inc()
			return r.add(key, b), nil
		}
		r.metrics.requests.WithLabelValues(kind, "miss").Inc()
		b, err := build()
		if err != nil {
			return nil, err
		}
		b = b[:len(b):len(b)] // an append by a reader copies, never writes into it
		r.storeShared(ctx, kind, key, b)
		return r.add(key, b), nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// hit returns the reply kept in process under key, counted as a hit.
func (r *replies) hit(kind, key string) ([]byte, bool) {
	if r.maxBytes <= 0 {
		return nil, false
	}
	b, ok := r.kept(key)
	if ok {
		r.metrics.requests.WithLabelValues(kind, "hit").Inc()
	}
	return b, ok
}

// fetchShared returns the reply under key from the shared cache; a failed
// or damaged read is a miss.
func (r *replies) fetchShared(ctx context.Context, kind, key string) ([]byte, bool) {
	if r.shared == nil || !sharedKind(kind) {
		return nil, false
	}
	k := sharedReplyKey(key)
	hits, err := r.shared.Fetch(ctx, []string{k})
	if err != nil {
		r.cacheLog.Failed(ctx, "fetching a reply", err)
		return nil, false
	}
	v, ok := hits[k]
	if !ok {
		return nil, false
	}
	b, err := unframeReply(v)
	if err != nil {
		r.cacheLog.Undecodable(ctx, "reply", err)
		return nil, false
	}
	return b, true
}

// storeShared puts b under key in the shared cache, best effort.
func (r *replies) storeShared(ctx context.Context, kind, key string, b []byte) {
	if r.shared == nil || !sharedKind(kind) {
		return
	}
	if err := r.shared.Store(ctx, map[string][]byte{sharedReplyKey(key): sharedReply(b)}, r.sharedTTL); err != nil {
		r.cacheLog.Failed(ctx, "storing a reply", err)
	}
}

// kept returns the reply kept under key.
func (r *replies) kept(key string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.lru.Get(key); ok {
		return b.b, true
	}
	return nil, false
}

// add keeps b under key, evicting the least recently used replies past the
// bound, and returns the bytes kept: a body of the same bytes already kept
// (b's own are then dropped). A reply larger than the whole bound is not
// kept.
func (r *replies) add(key string, b []byte) []byte {
	if replyCost(key, b) > r.maxBytes {
		return b
	}
	sum := sha256.Sum256(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	// Remove first: simplelru's Add of an existing key calls no eviction
	// callback, so the old reply's bytes would be lost.
	r.lru.Remove(key)
	bd, ok := r.bodies[sum]
	if !ok {
		bd = &body{b: b, sum: sum}
		r.bodies[sum] = bd
		r.bytes += bodyCost(b)
	}
	bd.refs++
	r.lru.Add(key, bd)
	r.bytes += keyCost(key)
	for r.bytes > r.maxBytes {
		r.lru.RemoveOldest()
	}
	r.metrics.bytes.Set(float64(r.bytes))
	return bd.b
}

// held returns the replies kept and the bytes charged for them.
func (r *replies) held() (n int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len(), r.bytes
}

// replyMetrics tell an operator how often a reply is reused, and what the
// kept replies cost.
type replyMetrics struct {
	requests *prometheus.CounterVec
	bytes    prometheus.Gauge
}

// newReplyMetrics returns the metrics, registered on reg unless it is nil.
func newReplyMetrics(reg prometheus.Registerer) *replyMetrics {
	m := &replyMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_replies_total",
			Help: "ListSkills pages, FormatSkills blocks, SearchSkills and GetSkill replies by reply (list, format, search, get) and result: hit (an encoded reply reused: the caller's library, settings and request unchanged; for get, the skill's version, notes and setting), shared (not kept here, taken from the shared cache, where a replica put it; never for get), miss (built and kept), uncached (--skills.reply-cache-bytes=0, or a get of a pinned thread or of a SKILL.md newer than its listing).",
		}, []string{"reply", "result"}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_skills_reply_cache_bytes",
			Help: "Bytes charged for the encoded replies this process keeps, at most --skills.reply-cache-bytes.",
		}),
	}
	for _, kind := range []string{replyList, replyFormat, replySearch, replyGet} {
		for _, result := range []string{"hit", "shared", "miss", "uncached"} {
			m.requests.WithLabelValues(kind, result)
		}
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.bytes)
	}
	return m
}
