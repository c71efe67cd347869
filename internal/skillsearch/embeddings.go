package skillsearch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/search"
)

// Embedder embeds texts: internal/embed's Client, an OpenAI-compatible
// endpoint. With one (Indexes.Embed), search ranks each layer by what its
// skills say and by their embeddings' similarity to the task together.
type Embedder interface {
	Embed(ctx context.Context, inputs []string) ([][]float32, error)
	Model() string
}

// Embed turns on the semantic stage of search: e embeds each skill
// (search.EmbedText) once per SKILL.md version and model, cached as the
// analyses are, and each distinct query; weight (0..1) is the
// similarity's share of a hit's relevance. A failing endpoint leaves
// search lexical, never failing a call. Without it no embedding is asked
// for or held. Call it before the first search.
func (si *Indexes) Embed(e Embedder, weight float64, reg prometheus.Registerer) {
	si.sem = newSemantic(e, weight, si.log, reg)
}

// Wait waits for the layers' vectors being made in the background.
func (si *Indexes) Wait() { si.embedWG.Wait() }

// Bounds of the semantic stage.
const (
	// queryVectors is how many queries' embeddings a replica keeps: agents
	// repeat their tasks, and one vector is about 1.5 KB.
	queryVectors = 1024
	// embeddingRetry is how long a failing endpoint is left alone: queries
	// are answered lexically meanwhile, and a layer whose vectors failed is
	// embedded again after it.
	embeddingRetry = 30 * time.Second
	// queryEmbedTimeout bounds embedding a task, retries included: a slow
	// endpoint costs a search this at most, then it is answered lexically.
	queryEmbedTimeout = 2 * time.Second
)

// semantic is the optional embeddings stage of the search indexes.
type semantic struct {
	e      Embedder
	weight float64
	// space names the cached vectors by model and embedded text's shape.
	space   string
	queries *lru.Cache[string, []float32]
	// downUntil is when a failed endpoint is asked again (unix nanoseconds).
	downUntil atomic.Int64
	failures  *prometheus.CounterVec // by stage: index, query
	fallbacks prometheus.Counter
	log       *slog.Logger
}

func newSemantic(e Embedder, weight float64, log *slog.Logger, reg prometheus.Registerer) *semantic {
	q, _ := lru.New[string, []float32](queryVectors)
	sum := sha256.Sum256([]byte(e.Model() + "\x00" + strconv.Itoa(search.EmbedTextBytes)))
	s := &semantic{
		e: e, weight: weight, queries: q, log: log,
		space: "skills:embed:" + hex.EncodeToString(sum[:6]) + ":",
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_search_embedding_failures_total",
			Help: "Failed requests to the embeddings endpoint (--search.embeddings.url), by stage: index (a layer's skills) or query (a task). Search answers lexically meanwhile.",
		}, []string{"stage"}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_search_lexical_fallbacks_total",
			Help: "Searches answered lexically although the semantic stage is on: the endpoint failed, or a layer has no vectors yet.",
		}),
	}
	s.failures.WithLabelValues("index")
	s.failures.WithLabelValues("query")
	if reg != nil {
		reg.MustRegister(s.failures, s.fallbacks)
	}
	return s
}

// key names the cached vector of one version of a skill (skillVersion).
func (s *semantic) key(objKey string, sum [sha256.Size]byte) string {
	return s.space + analysisKey(objKey, sum)[len(analysisKeySpace):]
}

// down reports whether the endpoint failed lately.
func (s *semantic) down() bool { return time.Now().UnixNano() < s.downUntil.Load() }

// failed notes a failure of stage, logging the first of each retry period.
func (s *semantic) failed(ctx context.Context, stage string, err error) {
	s.failures.WithLabelValues(stage).Inc()
	now := time.Now().UnixNano()
	if prev := s.downUntil.Load(); now >= prev && s.downUntil.CompareAndSwap(prev, now+int64(embeddingRetry)) {
		s.log.WarnContext(ctx, "search: the embeddings endpoint failed; searching lexically", "stage", stage, "retry_in", embeddingRetry, "err", err)
	}
}

// query returns the embedding of a task, nil when the endpoint fails or
// failed lately.
func (s *semantic) query(ctx context.Context, q string) []float32 {
	if v, ok := s.queries.Get(q); ok {
		return v
	}
	if s.down() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	vs, err := s.e.Embed(ctx, []string{q})
	if err != nil || len(vs) != 1 {
		s.failed(ctx, "query", err)
		return nil
	}
	s.queries.Add(q, vs[0])
	return vs[0]
}

// vectors returns the embeddings of l's skills, numbered as its search
// index: seed[i] where the previous generation had that version's, else
// from the shared cache, else embedded from its SKILL.md (read here) and
// cached. nil, with the failure counted, when the endpoint fails: the
// layer is searched lexically until the endpoint's retry period ends.
func (si *Indexes) vectors(ctx context.Context, l []Folder, seed []search.Vec, sums [][sha256.Size]byte) *search.Vectors {
	s := si.sem
	rows := make([]search.Vec, len(l))
	keys := make([]string, len(l))
	texts := make([]string, len(l))
	var ask []string
	for i, r := range l {
		switch {
		case r.Nested:
		case i < len(seed) && seed[i] != nil:
			rows[i] = seed[i]
		case r.ETag != "":
			keys[i] = s.key(r.Key, sums[i])
			ask = append(ask, keys[i])
		}
	}
	var hits map[string][]byte
	if si.cache != nil && len(ask) > 0 {
		var err error
		if hits, err = si.cache.Fetch(ctx, ask); err != nil {
			si.cacheLog.Failed(ctx, "fetching skill embeddings", err)
		}
	}
	var need []int
	for i, r := range l {
		if r.Nested || rows[i] != nil {
			continue
		}
		if b, ok := hits[keys[i]]; ok && keys[i] != "" && search.Vec(b).Dim() > 0 {
			rows[i] = search.Vec(b)
			continue
		}
		need = append(need, i)
	}
	if len(need) > 0 && s.down() {
		s.fallbacks.Inc()
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(si.reads)
	for _, i := range need {
		g.Go(func() error {
			body, err := si.body(gctx, &l[i])
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				keys[i] = "" // embedded without its body: not cached
			}
			texts[i] = search.EmbedText(searchDoc(&l[i], body))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil
	}
	in := make([]string, len(need))
	for k, i := range need {
		in[k] = texts[i]
	}
	if len(in) > 0 {
		vs, err := s.e.Embed(ctx, in)
		if err == nil && len(vs) != len(in) {
			err = fmt.Errorf("embeddings: %d vectors for %d texts", len(vs), len(in))
		}
		if err != nil {
			s.failed(ctx, "index", err)
			return nil
		}
		store := map[string][]byte{}
		for k, i := range need {
			rows[i] = search.Quantize(vs[k])
			if keys[i] != "" && rows[i] != nil {
				store[keys[i]] = rows[i]
			}
		}
		if si.cache != nil && len(store) > 0 {
			if err := si.cache.Store(ctx, store, si.ttl); err != nil {
				si.cacheLog.Failed(ctx, "storing skill embeddings", err)
			}
		}
	}
	v, err := search.NewVectors(rows)
	if err != nil { // a model of another dimension behind the same name
		s.failed(ctx, "index", err)
		return nil
	}
	return v
}

// embedBuildTimeout bounds making one layer's vectors: at 10,000 skills a
// slow CPU endpoint takes minutes, and search is lexical meanwhile.
const embedBuildTimeout = 30 * time.Minute

// EmbedLater makes li's vectors in the background when the semantic stage
// is on and it has none (a new generation, or the endpoint failed), then
// holds li with them in its place under key; one job per key at a time,
// none while the endpoint is down.
func (si *Indexes) EmbedLater(key string, l Layer, li *Index) {
	if si.sem == nil || li.vec != nil || si.sem.down() {
		return
	}
	if _, busy := si.embedding.LoadOrStore(key, struct{}{}); busy {
		return
	}
	si.embedWG.Add(1)
	go func() {
		defer si.embedWG.Done()
		defer si.embedding.Delete(key)
		ctx, cancel := context.WithTimeout(context.Background(), embedBuildTimeout)
		defer cancel()
		fs := folders(l)
		sums := make([][sha256.Size]byte, len(fs))
		for i, r := range fs {
			if !r.Nested {
				sums[i] = skillVersion(r)
			}
		}
		v := si.vectors(ctx, fs, li.seed, sums)
		if v == nil {
			return
		}
		if cur, ok := si.shelf.Get(key); !ok || cur != li {
			return // a newer generation or evicted: its own job embeds it
		}
		with := *li
		with.vec, with.seed = v, nil
		with.bytes += v.Bytes()
		if si.shelf.Add(key, &with, with.bytes) {
			si.metrics.held(&with, 1)
		}
	}()
}

// hybrid returns the query's embedding and sets each layer's vectors when
// every layer has them and the endpoint answers; nil (a lexical search,
// counted) otherwise.
func (si *Indexes) hybrid(ctx context.Context, sls []Ranked, layers []search.Layer, query string) []float32 {
	for _, sl := range sls {
		if sl.Index.vec == nil && sl.Index.x.Len() > 0 {
			si.sem.fallbacks.Inc()
			return nil
		}
	}
	v := si.sem.query(ctx, query)
	if v == nil {
		si.sem.fallbacks.Inc()
		return nil
	}
	for i, sl := range sls {
		layers[i].Vectors = sl.Index.vec
	}
	return v
}
