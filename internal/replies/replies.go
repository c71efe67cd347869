package replies

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
)

// Reply kinds: a label of the metrics (the catalog's keys name their kind
// themselves).
const (
	KindList   = "list"
	KindFormat = "format"
	KindSearch = "search"
	KindGet    = "get"
)

// Results of a request for a reply: a label of the metrics. Get counts its
// own; a caller that builds a reply without Get (one it must not keep)
// counts Miss or Uncached with Count.
const (
	Hit      = "hit"
	Shared   = "shared"
	Miss     = "miss"
	Uncached = "uncached"
)

// sharedKind reports whether replies of kind are looked for and put in the
// shared cache: a GetSkill reply is built from what the replica holds in
// less time than a round trip takes.
func sharedKind(kind string) bool { return kind != KindGet }

// replyOverhead is charged per reply on top of its key, for the list
// element and map slot, so a flood of tiny replies is bounded too;
// bodyOverhead per distinct body on top of its bytes.
const (
	replyOverhead = 96
	bodyOverhead  = 96
)

// Cache keeps encoded replies by key, least recently used first out,
// within maxBytes. A reply is never changed once stored: every caller
// shares the same bytes. Concurrent misses of one key build it once.
//
// Replies of the same bytes are kept once (body), whatever their keys: the
// prompt block of every user who sees the same skills within the budget
// is one block, and a user's key costs its key and not another copy.
//
// With a shared cache (Redis), a reply this replica does not keep is
// looked for there before it is built, and a reply built here is put
// there: a key names one content on every replica (skills.Snapshot), so a
// block one replica built serves every replica, and a replica serving more
// users than its own bound keeps costs a round trip instead of a build.
type Cache struct {
	maxBytes  int64 // 0: nothing is kept
	flight    singleflight.Group
	metrics   *metrics
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

// New returns a cache of replies within maxBytes
// (--skills.reply-cache-bytes; 0 keeps none), its metrics registered on reg
// unless it is nil.
func New(maxBytes int64, reg prometheus.Registerer) *Cache {
	r := &Cache{maxBytes: maxBytes, metrics: newMetrics(reg), bodies: map[[sha256.Size]byte]*body{}}
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

// Share makes r look for and put replies in c for ttl (c nil or ttl 0:
// not at all): c is a level apart from the process (Redis), as an
// in-process one would hold a second copy of what r keeps.
func (r *Cache) Share(c cache.Cache, ttl time.Duration, cl *libindex.CacheLog) {
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

// Get returns the reply of kind under key, built by build when it is kept
// neither here nor in the shared cache. build must depend on nothing but
// what key names: its result answers every later call with the same key.
func (r *Cache) Get(ctx context.Context, kind, key string, build func() ([]byte, error)) ([]byte, error) {
	if r.maxBytes <= 0 {
		r.metrics.requests.WithLabelValues(kind, Uncached).Inc()
		return build()
	}
	if b, ok := r.Hit(kind, key); ok {
		return b, nil
	}
	// The build reads only the snapshot its caller took, not the caller's
	// context: whoever waits on it gets the reply of the same key, and one
	// caller giving up fails none of them.
	ctx = context.WithoutCancel(ctx)
	v, err, _ := r.flight.Do(key, func() (any, error) {
		if b, ok := r.kept(key); ok { // a build that just ended may have kept it

			r.metrics.requests.WithLabelValues(kind, Hit).Inc()
			return b, nil
		}
		if b, ok := r.fetchShared(ctx, kind, key); ok {
			r.metrics.requests.WithLabelValues(kind, Shared).Inc()
			return r.add(key, b), nil
		}
		r.metrics.requests.WithLabelValues(kind, Miss).Inc()
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

// Hit returns the reply kept in process under key, counted as a hit: a
// caller that has a key before it can build (GetSkill's, before the file is
// read) answers from it at once.
func (r *Cache) Hit(kind, key string) ([]byte, bool) {
	if r.maxBytes <= 0 {
		return nil, false
	}
	b, ok := r.kept(key)
	if ok {
		r.metrics.requests.WithLabelValues(kind, Hit).Inc()
	}
	return b, ok
}

// fetchShared returns the reply under key from the shared cache; a failed
// or damaged read is a miss.
func (r *Cache) fetchShared(ctx context.Context, kind, key string) ([]byte, bool) {
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
func (r *Cache) storeShared(ctx context.Context, kind, key string, b []byte) {
	if r.shared == nil || !sharedKind(kind) {
		return
	}
	if err := r.shared.Store(ctx, map[string][]byte{sharedReplyKey(key): sharedReply(b)}, r.sharedTTL); err != nil {
		r.cacheLog.Failed(ctx, "storing a reply", err)
	}
}

// kept returns the reply kept under key.
func (r *Cache) kept(key string) ([]byte, bool) {
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
func (r *Cache) add(key string, b []byte) []byte {
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

// Count counts a reply of kind built without Get, as result (Miss or
// Uncached).
func (r *Cache) Count(kind, result string) { r.metrics.requests.WithLabelValues(kind, result).Inc() }

// Held returns the replies kept and the bytes charged for them.
func (r *Cache) Held() (n int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len(), r.bytes
}

// metrics tell an operator how often a reply is reused, and what the
// kept replies cost.
type metrics struct {
	requests *prometheus.CounterVec
	bytes    prometheus.Gauge
}

// newMetrics returns the metrics, registered on reg unless it is nil.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_replies_total",
			Help: "ListSkills pages, FormatSkills blocks, SearchSkills and GetSkill replies by reply (list, format, search, get) and result: hit (an encoded reply reused: the caller's library, settings and request unchanged; for get, the skill's version, notes and setting), shared (not kept here, taken from the shared cache, where a replica put it; never for get), miss (built and kept), uncached (--skills.reply-cache-bytes=0, or a get of a pinned thread or of a SKILL.md newer than its listing).",
		}, []string{"reply", "result"}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_skills_reply_cache_bytes",
			Help: "Bytes charged for the encoded replies this process keeps, at most --skills.reply-cache-bytes.",
		}),
	}
	for _, kind := range []string{KindList, KindFormat, KindSearch, KindGet} {
		for _, result := range []string{Hit, Shared, Miss, Uncached} {
			m.requests.WithLabelValues(kind, result)
		}
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.bytes)
	}
	return m
}
