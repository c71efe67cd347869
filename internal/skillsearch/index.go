package skillsearch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Folder is one folder of a library layer as its search index reads it:
// a skill, or a folder nested too deep (never served, an empty document).
type Folder struct {
	Nested bool
	// Dir is the folder's path in its library, Layer the layer's name (for
	// logs), Name what the skill is listed by, Category its first folder
	// ("" for a flat skill).
	Dir, Layer, Name, Category string
	// Key and ETag are its SKILL.md's object: the version analyzed.
	Key, ETag string
	Head      skillmd.Frontmatter
	// Files are the paths of the folder's files inside the library,
	// SKILL.md included, in order.
	Files iter.Seq[string]
}

// Layer is one library layer: its generation and its folders, numbered as
// its index numbers its documents.
type Layer interface {
	Gen() uint64
	Len() int
	Folder(i int) Folder
}

// folders returns l's folders.
func folders(l Layer) []Folder {
	fs := make([]Folder, l.Len())
	for i := range fs {
		fs[i] = l.Folder(i)
	}
	return fs
}

// Config bounds the reads of a build.
type Config struct {
	// BodyBytes bounds what is read of one SKILL.md; BodyReads the
	// SKILL.md files read at once in one build.
	BodyBytes int64
	BodyReads int
}

// heldSearch is the kind of the layers' search indexes on the held budget.
const heldSearch = "search"

// Indexes builds the search index of each library layer (the shared
// library's, each team's, each user's own) once per generation of it, for
// every caller whose view holds the layer, as the layers themselves are
// built (the catalog's views). An index is held on the replica's budget with
// the layers. A new generation takes the documents of unchanged skills
// from the index of the one before; a skill no earlier index has is
// analyzed from the shared cache, where some replica put its analysis, and
// only where none did is its SKILL.md read: a replica's first search of a
// library another replica indexed reads no body from storage.
type Indexes struct {
	bucket objstore.Bucket
	shelf  *cache.Shelf[*Index] // by searchKey
	flight singleflight.Group
	// cache shares analyses for ttl, by SKILL.md version (analysisKey);
	// nil: they are not shared.
	cache    cache.Cache
	ttl      time.Duration
	cacheLog *libindex.CacheLog
	log      *slog.Logger
	// bodyBytes bounds what is read of one SKILL.md; reads the SKILL.md
	// read at once in one build.
	bodyBytes int64
	reads     int
	metrics   *searchMetrics
	// nextTooLarge is when an index too large for the budget may be logged
	// again (unix nanoseconds).
	nextTooLarge atomic.Int64
	// sem is the semantic stage, nil when off (WithEmbeddings); embedding
	// holds the layers whose vectors are being made, by shelf key.
	sem       *semantic
	embedding sync.Map
	embedWG   sync.WaitGroup
}

// Index is one layer's search index. Its documents are numbered as the
// layer's folders, a nested folder an empty one, so a layer rebuilt at the
// same generation maps them alike.
type Index struct {
	gen uint64
	x   *search.Index
	// versions are the documents made from a skill's whole analysis, by
	// the sum of its version (skillVersion): what a later generation's
	// build reuses.
	versions []docVersion
	bytes    int64
	// vec are the skills' embeddings when the semantic stage is on and
	// they are made (in the background: a search meanwhile is lexical);
	// seed the previous generation's, by document, until then.
	vec  *search.Vectors
	seed []search.Vec
}

type docVersion struct {
	sum uint64
	doc int32
}

// reusable returns the document of li made from the version sum.
// Lexical is the index of the layer's documents.
func (li *Index) Lexical() *search.Index { return li.x }

func (li *Index) reusable(sum uint64) (int, bool) {
	if li == nil {
		return 0, false
	}
	i, ok := slices.BinarySearchFunc(li.versions, sum, func(d docVersion, s uint64) int {
		switch {
		case d.sum < s:
			return -1
		case d.sum > s:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, false
	}
	return int(li.versions[i].doc), true
}

// searchIndexBuildTimeout bounds a build's reads of SKILL.md bodies.
const searchIndexBuildTimeout = 2 * time.Minute

// searchMetrics say what the held search indexes cost and where their
// documents came from.
type searchMetrics struct {
	bytes, docs prometheus.Gauge
	// vectorDocs counts the skills held with an embedding (the semantic
	// stage, off without --search.embeddings.url).
	vectorDocs prometheus.Gauge
	analyses   *prometheus.CounterVec // by source
}

// Where a search index build took a skill's analysis from.
const (
	analysisReused   = "reused"   // the previous generation's index
	analysisKept     = "kept"     // the previous generation's index, whole (same)
	analysisCached   = "cached"   // the shared cache
	analysisAnalyzed = "analyzed" // its SKILL.md read and analyzed here
)

func newSearchMetrics(reg prometheus.Registerer) *searchMetrics {
	m := &searchMetrics{
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_search_index_bytes",
			Help: "Bytes of the library layers' search indexes this replica holds (on --skills.max-held-bytes), summed.",
		}),
		docs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_search_index_docs",
			Help: "Skills in the library layers' search indexes this replica holds, summed.",
		}),
		vectorDocs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_search_vector_docs",
			Help: "Skills in the held search indexes that have their embedding (--search.embeddings.url; made in the background after an index is built), summed.",
		}),
		analyses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_search_analyses_total",
			Help: "Skills a search index build took, by source: reused (the previous generation's index), cached (the shared cache, where a replica put its analysis), analyzed (its SKILL.md read from storage here).",
		}, []string{"source"}),
	}
	for _, s := range []string{analysisKept, analysisReused, analysisCached, analysisAnalyzed} {
		m.analyses.WithLabelValues(s)
	}
	if reg != nil {
		reg.MustRegister(m.bytes, m.docs, m.vectorDocs, m.analyses)
	}
	return m
}

// held adds li to the gauges (sign 1) or takes it off (-1).
func (m *searchMetrics) held(li *Index, sign float64) {
	m.bytes.Add(sign * float64(li.bytes))
	m.docs.Add(sign * float64(li.x.Len()))
	if li.vec != nil {
		m.vectorDocs.Add(sign * float64(li.vec.Len()))
	}
}

// New returns the search indexes of the layers of bucket's libraries, held
// on held, with their metrics registered on reg.
func New(bucket objstore.Bucket, held *cache.Held, cfg Config, log *slog.Logger, reg prometheus.Registerer) *Indexes {
	si := &Indexes{
		bucket: bucket, shelf: cache.NewShelf[*Index](held, heldSearch), log: log,
		bodyBytes: cfg.BodyBytes, reads: cfg.BodyReads, metrics: newSearchMetrics(reg),
	}
	si.shelf.OnDrop(func(li *Index) { si.metrics.held(li, -1) })
	return si
}

// Share makes si share analyses through c for ttl.
func (si *Indexes) Share(c cache.Cache, ttl time.Duration, cl *libindex.CacheLog) {
	si.cache, si.ttl, si.cacheLog = c, ttl, cl
}

// Held returns the search index of l held under key, if any.
func (si *Indexes) Held(key string, l Layer) (*Index, bool) {
	li, ok := si.shelf.Get(key)
	return li, ok && li.gen == l.Gen()
}

// Of returns the search index of l, held under key (the layer's library),
// built for every caller waiting on it: the first one's leaving fails none
// of the others.
func (si *Indexes) Of(ctx context.Context, key string, l Layer) (*Index, error) {
	if li, ok := si.Held(key, l); ok {
		return li, nil
	}
	ch := si.flight.DoChan(fmt.Sprintf("%s\x00%d", key, l.Gen()), panics.GuardValue(func() (any, error) {
		if li, ok := si.Held(key, l); ok { // a build that just ended
			return li, nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), searchIndexBuildTimeout)
		defer cancel()
		prev, _ := si.shelf.Get(key)
		li, err := si.build(ctx, l.Gen(), folders(l), prev)
		if err != nil {
			return nil, err
		}
		if si.shelf.Add(key, li, li.bytes) {
			si.metrics.held(li, 1)
		} else if now := time.Now().UnixNano(); now >= si.nextTooLarge.Load() {
			si.nextTooLarge.Store(now + int64(time.Minute))
			si.log.Warn("skills: a library's search index is too large to hold within --skills.max-held-bytes; every search builds it again",
				"library", key, "bytes", li.bytes)
		}
		return li, nil
	}))
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Index), nil
	case <-ctx.Done():
		return nil, ctx.Err() // the build goes on for the others
	}
}

// build makes l's index, taking from prev (an earlier generation's, or
// nil) the documents of the skill versions it has.
func (si *Indexes) build(ctx context.Context, gen uint64, l []Folder, prev *Index) (*Index, error) {
	n := len(l)
	sums := make([][sha256.Size]byte, n)
	reuse := make([]int, n) // the document of prev, or -1
	analyzed := make([]*search.Analyzed, n)
	whole := make([]bool, n) // analyzed with the body it should have
	var need []int
	for i, s := range l {
		reuse[i] = -1
		if s.Nested {
			continue
		}
		sums[i] = skillVersion(s)
		if d, ok := prev.reusable(short(sums[i])); ok && s.ETag != "" {
			reuse[i] = d
			continue
		}
		need = append(need, i)
	}
	if keeps(prev, reuse, need) {
		// A new generation with the same skills (a file's digest came, a
		// file outside every skill changed): the index as it is, not a
		// rebuild every search of the library would wait for.
		si.metrics.analyses.WithLabelValues(analysisKept).Add(float64(len(prev.versions)))
		return &Index{gen: gen, x: prev.x, versions: prev.versions, bytes: prev.bytes, vec: prev.vec, seed: prev.seed}, nil
	}
	if err := si.analyze(ctx, l, need, sums, analyzed, whole); err != nil {
		return nil, err
	}
	b := search.NewBuilder(search.DefaultWeights)
	li := &Index{gen: gen}
	var empty *search.Analyzed
	for i, s := range l {
		switch {
		case s.Nested:
			if empty == nil {
				a := search.Analyze(search.Doc{})
				empty = &a
			}
			b.Add(*empty)
		case reuse[i] >= 0:
			if !b.Reuse(prev.x, reuse[i]) {
				return si.build(ctx, gen, l, nil) // prev was weighted otherwise: analyze every skill
			}
			li.versions = append(li.versions, docVersion{short(sums[i]), int32(i)})
		default:
			b.Add(*analyzed[i])
			if whole[i] && s.ETag != "" {
				li.versions = append(li.versions, docVersion{short(sums[i]), int32(i)})
			}
		}
	}
	li.x = b.Build()
	if si.sem != nil && prev != nil && prev.vec != nil {
		li.seed = make([]search.Vec, n)
		for i, d := range reuse {
			if d >= 0 {
				li.seed[i] = prev.vec.Row(d)
			}
		}
	}
	si.metrics.analyses.WithLabelValues(analysisReused).Add(float64(n - len(need) - countNested(l)))
	slices.SortFunc(li.versions, func(a, b docVersion) int {
		switch {
		case a.sum < b.sum:
			return -1
		case a.sum > b.sum:
			return 1
		}
		return 0
	})
	li.bytes = li.x.Bytes() + int64(cap(li.versions))*16 + 64
	return li, nil
}

// keeps reports whether prev serves as the new generation's index: every
// skill reuses the document at its own place and there are as many, so
// only nested folders (never served) can differ.
func keeps(prev *Index, reuse, need []int) bool {
	if prev == nil || len(need) > 0 || prev.x.Len() != len(reuse) {
		return false
	}
	for i, d := range reuse {
		if d >= 0 && d != i {
			return false
		}
	}
	return true
}

func countNested(l []Folder) int {
	n := 0
	for _, s := range l {
		if s.Nested {
			n++
		}
	}
	return n
}

// analyze sets analyzed[i] for each i of need: from the shared cache where
// a replica analyzed that version, else from its SKILL.md, read here (and
// the analysis then cached). whole[i] says the analysis had its body: one
// whose read failed is made of the head alone, used but neither cached
// nor reused.
func (si *Indexes) analyze(ctx context.Context, l []Folder, need []int, sums [][sha256.Size]byte, analyzed []*search.Analyzed, whole []bool) error {
	if len(need) == 0 {
		return nil
	}
	keys := make([]string, len(l))
	var hits map[string][]byte
	if si.cache != nil {
		ask := make([]string, 0, len(need))
		for _, i := range need {
			if l[i].ETag != "" {
				keys[i] = analysisKey(l[i].Key, sums[i])
				ask = append(ask, keys[i])
			}
		}
		var err error
		if hits, err = si.cache.Fetch(ctx, ask); err != nil {
			si.cacheLog.Failed(ctx, "fetching skill analyses", err)
		}
	}
	var read []int
	for _, i := range need {
		if b, ok := hits[keys[i]]; ok && keys[i] != "" {
			a, err := search.UnmarshalAnalyzed(b)
			if err == nil {
				analyzed[i], whole[i] = &a, true
				continue
			}
			si.cacheLog.Undecodable(ctx, "skill analysis", err)
		}
		read = append(read, i)
	}
	si.metrics.analyses.WithLabelValues(analysisCached).Add(float64(len(need) - len(read)))
	si.metrics.analyses.WithLabelValues(analysisAnalyzed).Add(float64(len(read)))
	items := make([][]byte, len(l))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(si.reads)
	for _, i := range read {
		s := &l[i]
		g.Go(func() error {
			body, err := si.body(gctx, s)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				si.log.DebugContext(ctx, "search: indexing a skill without its body", "layer", s.Layer, "skill", s.Dir, "err", err)
			}
			a := search.Analyze(searchDoc(s, body))
			analyzed[i], whole[i] = &a, err == nil
			if err == nil && keys[i] != "" {
				if b, err := a.MarshalBinary(); err == nil {
					items[i] = b
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	store := map[string][]byte{}
	for i, b := range items {
		if b != nil {
			store[keys[i]] = b
		}
	}
	if len(store) > 0 {
		if err := si.cache.Store(ctx, store, si.ttl); err != nil {
			si.cacheLog.Failed(ctx, "storing skill analyses", err)
		}
	}
	return nil
}

// body reads the body of s's SKILL.md: at most bodyBytes of the file, so a
// huge one costs no more than a long one.
func (si *Indexes) body(ctx context.Context, s *Folder) (string, error) {
	rc, _, err := si.bucket.GetRange(ctx, s.Key, 0, si.bodyBytes)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, si.bodyBytes))
	if err != nil {
		return "", err
	}
	// A cut file may end inside a character.
	for len(data) > 0 && !utf8.Valid(data[max(0, len(data)-utf8.UTFMax):]) {
		data = data[:len(data)-1]
	}
	_, start, ok := skillmd.Split(data)
	if !ok {
		return string(bytes.ToValidUTF8(data, nil)), nil
	}
	return string(data[start:]), nil
}

// searchDoc is what search indexes of s, its body read.
func searchDoc(s *Folder, body string) search.Doc {
	d := docOf(s.Name, s.Category, s.Head, body)
	prefix := s.Dir + "/"
	for rel := range s.Files {
		if rel := strings.TrimPrefix(rel, prefix); rel != "SKILL.md" {
			d.Files = append(d.Files, rel)
		}
	}
	return d
}

// skillVersion sums what a skill's analysis is made of: its SKILL.md's
// version (key and ETag: the head and body, and the folder's path) and
// the names of its files.
func skillVersion(s Folder) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(s.Key), s.Key, len(s.ETag), s.ETag)
	for rel := range s.Files {
		fmt.Fprintf(h, "%d:%s", len(rel), rel)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// short is the part of a version's sum an index keeps to find the
// documents a later generation reuses: one layer's versions, few enough
// that 64 bits tell them apart.
func short(sum [sha256.Size]byte) uint64 { return binary.BigEndian.Uint64(sum[:8]) }

// analysisKeySpace holds skill analyses. It names what search makes of a
// probe document, so replicas whose analysis differs (another search
// version: its encoding, stemmers, stop words) neither read nor overwrite
// each other's, and no one has to remember to bump a number.
var analysisKeySpace = func() string {
	a := search.Analyze(search.Doc{
		Name: "pdf-forms", DisplayName: "PDF Forms", Description: "Fill in PDF forms and extract their fields.",
		Category: "documents", Labels: []string{"pdf", "forms"}, Files: []string{"scripts/fillForm.py"},
		Body: "# Filling forms\nRead the fields, then write the values.\n## Rellenar formularios\nLee los campos y escribe los valores.",
	})
	b, _ := a.MarshalBinary()
	sum := sha256.Sum256(b)
	return "skills:search:" + hex.EncodeToString(sum[:6]) + ":"
}()

// analysisKey names the analysis of one version of a skill (skillVersion):
// content addressed, as parsed heads are. The key's first segment is the
// hash tag, as for parsed heads.
func analysisKey(key string, sum [sha256.Size]byte) string {
	tag, _, _ := strings.Cut(key, "/")
	return analysisKeySpace + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
}
