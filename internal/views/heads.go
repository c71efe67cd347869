package views

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// maxReported bounds the SKILL.md versions whose problems were logged: a
// few hundred KiB, outside the held budget.
const maxReported = 4096

// Heads parses the SKILL.md heads an index holds and logs their problems,
// once per version (key and ETag) while it is among the last maxReported
// logged. Parsed heads live in the layers built from them (on the held
// budget), and a layer of a newer generation takes those of the version it
// held before. A parse is content-addressed too (the version and the
// folder name), so it is shared through the cache: a replica's first
// layer of a library some replica built before decodes its heads instead
// of parsing their YAML, which is most of building it.
type Heads struct {
	log      *slog.Logger
	seed     maphash.Seed
	reported *lru.Cache[uint64, struct{}]
	metrics  *libindex.Metrics
	// Cache shares parsed heads for ttl (--skills.head-ttl); nil: they
	// are not shared.
	Cache    cache.Cache
	ttl      time.Duration
	cacheLog *libindex.CacheLog
}

// NewHeads parses heads, logging their problems to log and counting them
// in m.
func NewHeads(log *slog.Logger, m *libindex.Metrics) *Heads {
	r, _ := lru.New[uint64, struct{}](maxReported)
	return &Heads{log: log, seed: maphash.MakeSeed(), reported: r, metrics: m}
}

// Share makes h share parsed heads through c for ttl.
func (h *Heads) Share(c cache.Cache, ttl time.Duration, cl *libindex.CacheLog) {
	h.Cache, h.ttl, h.cacheLog = c, ttl, cl
}

// firstReport reports whether s's SKILL.md version was not logged before.
func (h *Heads) firstReport(s *skillview.Ref) bool {
	var m maphash.Hash
	m.SetSeed(h.seed)
	m.WriteString(s.SkillMD.Key)
	m.WriteByte(0)
	m.WriteString(s.SkillMD.ETag)
	ok, _ := h.reported.ContainsOrAdd(m.Sum64(), struct{}{})
	return !ok
}

// reportNested logs, once per version, a SKILL.md that lies too deep to be
// served: the library's author expects it to be a skill.
func (h *Heads) reportNested(ctx context.Context, s *skillview.Ref) {
	if h.firstReport(s) {
		h.log.WarnContext(ctx, "skill not served: nested too deep", "layer", s.Layer, "skill", s.Dir, "problem", skillview.NestedProblem)
	}
}

// report logs, once per version, the problems of an invalid skill, however
// its head was parsed.
func (h *Heads) report(ctx context.Context, s *skillview.Ref, p skillmd.Problems) {
	if !p.Valid() && h.firstReport(s) {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.Layer, "skill", s.Dir, "problems", p.Errors)
	}
}

// parse parses the head of s.
func (h *Heads) parse(ctx context.Context, s *skillview.Ref, head []byte) skillview.Head {
	fm, _, problems := skillmd.ParseSkillMDBody(head, s.Folder()) // the body is not kept
	p := skillview.Head{Problems: problems, Src: skillview.HeadSum(head), Derived: skillview.Derivable(fm)}
	fm.Raw = leanRaw(fm.Raw)
	if len(fm.Extra) == 0 {
		fm.Extra = nil
	}
	fm.JSON = bytes.Clone(fm.JSON) // without the encoder's spare capacity
	p.Frontmatter = fm
	p.Written = skillmd.WrittenOf(fm.JSON)
	h.report(ctx, s, problems)
	return p
}

// carried counts the heads a layer build took from the previous
// generation's layer.
func (h *Heads) carried(n int) { h.metrics.Heads.WithLabelValues(libindex.HeadCarried).Add(float64(n)) }

// parallelHeads is the fewest heads worth taking on more than one core.
const parallelHeads = 64

// take sets the head of each skill of list from its SKILL.md's head in
// heads (by key): decoded from the cache where some replica parsed that
// version before, parsed (and then cached) where none did. The cache is
// asked and filled in one call each; a failing cache, or a value that does
// not decode, only costs the parse. Decoding and parsing run on every core
// when there are many: a replica's first call on a large library (its
// index from the shared cache) is mostly this.
func (h *Heads) take(ctx context.Context, list []*skillview.Ref, x *libindex.Index) {
	if len(list) == 0 {
		return
	}
	keys := make([]string, len(list))
	var hits map[string][]byte
	if h.Cache != nil {
		ask := make([]string, 0, len(list))
		for i, s := range list {
			if s.SkillMD.ETag != "" { // unversioned: no content to address
				keys[i] = ParsedCacheKey(s.SkillMD.Key, s.SkillMD.ETag, s.Folder())
				ask = append(ask, keys[i])
			}
		}
		var err error
		if hits, err = h.Cache.Fetch(ctx, ask); err != nil {
			h.cacheLog.Failed(ctx, "fetching parsed skill heads", err)
		}
	}
	// encoded holds the parses to cache; nil where the head was cached,
	// or is not to be.
	encoded := make([][]byte, len(list))
	var fromCache atomic.Int64
	onCores(len(list), func(i int) {
		s := list[i]
		if b, ok := hits[keys[i]]; keys[i] != "" && ok {
			p, err := skillview.DecodeHead(b)
			if err == nil {
				s.Head = p
				h.report(ctx, s, p.Problems)
				fromCache.Add(1)
				return
			}
			h.cacheLog.Undecodable(ctx, "parsed skill head", err)
		}
		head, _ := x.HeadOf(s.SkillMD.Key)
		s.Head = h.parse(ctx, s, head)
		if keys[i] != "" {
			if b, ok := skillview.EncodeHead(s.Head); ok {
				encoded[i] = b
			}
		}
	})
	cached := int(fromCache.Load())
	h.metrics.Heads.WithLabelValues(libindex.HeadCached).Add(float64(cached))
	h.metrics.Heads.WithLabelValues(libindex.HeadParsed).Add(float64(len(list) - cached))
	items := map[string][]byte{}
	for i, b := range encoded {
		if b != nil {
			items[keys[i]] = b
		}
	}
	if len(items) > 0 && ctx.Err() == nil {
		if err := h.Cache.Store(ctx, items, h.ttl); err != nil {
			h.cacheLog.Failed(ctx, "storing parsed skill heads", err)
		}
	}
}

// onCores calls fn for 0 to n-1, on every core when n is large enough.
func onCores(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelHeads)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				fn(int(i))
			}
		})
	}
	wg.Wait()
}

// leanVersion names what parse keeps of a parse (leanRaw, the nil Extra)
// and skillview.EncodeHead's frame: the cache holds that, so bump it with any
// change to either.
const leanVersion = 2

// parsedKeySpace holds parsed SKILL.md heads. It names the codec's version,
// the parser's and leanVersion: a replica of other rules neither reads nor
// overwrites another's.
var parsedKeySpace = fmt.Sprintf("skills:v%d:parsed:p%d.%d:", skillmd.CodecVersion, skillmd.ParserVersion, leanVersion)

// ParsedCacheKey names the parse of one version (key and ETag) of a
// SKILL.md in the folder folder, which the parse depends on: content
// addressed, as the heads are (libindex). The key's first segment (the
// user, or the shared libraries') is the hash tag, as for file contents.
// Object keys may be 1 KiB long, so the rest is a hash.
func ParsedCacheKey(key, etag, folder string) string {
	tag, _, _ := strings.Cut(key, "/")
	sum := sha256.Sum256([]byte(key + "\x00" + etag + "\x00" + folder))
	return parsedKeySpace + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
}

// leanRaw is what a layer keeps of a frontmatter's Raw fields (and the
// shared cache of every replica, so a change bumps leanVersion): only the
// lists inside metadata, which search ranks and nothing else holds. Every
// other field is in the typed fields, Extra and JSON; Raw as decoded takes
// more heap than all of them together. GetSkill parses SKILL.md afresh, so
// its Raw is whole.
func leanRaw(raw map[string]any) map[string]any {
	meta, ok := raw["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	for _, v := range meta {
		if _, isList := v.([]any); isList {
			return map[string]any{"metadata": meta}
		}
	}
	return nil
}

// ShareMaps makes the skills of one layer whose frontmatter metadata, or
// fields outside the specification, are equal share one map of them: a
// library's skills mostly declare the same owner and tags, and a small map
// costs more than its entries. Parsed heads are read-only, so sharing is
// safe; a layer's estimate counts each map once (layer.heldBytes).
func ShareMaps(skills []*skillview.Ref) {
	metas := map[string]map[string]string{}
	extras := map[string]map[string]any{}
	var key strings.Builder
	for _, s := range skills {
		fm := &s.Head.Frontmatter
		if len(fm.Metadata) > 0 {
			key.Reset()
			for _, k := range slices.Sorted(maps.Keys(fm.Metadata)) {
				fmt.Fprintf(&key, "%d:%s%d:%s", len(k), k, len(fm.Metadata[k]), fm.Metadata[k])
			}
			if m, ok := metas[key.String()]; ok {
				fm.Metadata = m
			} else {
				metas[key.String()] = fm.Metadata
			}
		}
		if len(fm.Extra) > 0 {
			// JSON sorts the keys; equal encodings of different values
			// (none that ParseSkillMD makes) are told apart by DeepEqual.
			b, err := json.Marshal(fm.Extra)
			if err != nil {
				continue
			}
			if m, ok := extras[string(b)]; ok && reflect.DeepEqual(m, fm.Extra) {
				fm.Extra = m
			} else if !ok {
				extras[string(b)] = fm.Extra
			}
		}
	}
}
