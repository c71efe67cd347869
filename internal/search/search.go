package search

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// Layer is one index the caller sees, with its distance from the caller.
type Layer struct {
	X *Index
	// Rank is 0 for the caller's own skills, 1 for a team's, 2 for the
	// organization's: nearer layers first at equal relevance.
	Rank int
	// Skip hides a document (hidden, shadowed, disabled, out of scope);
	// nil hides none.
	Skip func(doc int) bool
	// Vectors are the embeddings of X's documents, for a hybrid search
	// (Query.Vector); nil: the layer has none, and the search is lexical.
	Vectors *Vectors
}

// Query is a search.
type Query struct {
	Text string
	// Limit is how many hits to return; 0 means DefaultLimit.
	Limit int
	// Collapse returns near-duplicates of a better hit as its Alternates
	// rather than as hits of their own.
	Collapse bool
	// Vector is the query's embedding, of the model of the layers'
	// Vectors; with Semantic > 0 and every layer's Vectors of its length,
	// a document's relevance is (1-Semantic)·lexical + Semantic·cosine
	// (clamped to 0..1) and every document is a candidate. Otherwise the
	// search is lexical.
	Vector   []float32
	Semantic float64
}

// Ref names a document: Doc in layers[Layer].X.
type Ref struct {
	Layer, Doc int
}

// Hit is a search result.
type Hit struct {
	Ref
	// Score is the BM25F score: comparable within one search only.
	Score float64
	// Relevance is Score over the most any skill could score for the
	// query (every query term, weighted by its rarity across the layers,
	// fully matched), 0..1: comparable across searches. A collapsed group
	// scores as its best copy. Hits come in non-increasing Relevance: one
	// placed after a less relevant hit (for its nearer layer or its
	// copies) reports that hit's.
	Relevance float64
	// Alternates are the near-duplicates folded into this hit, nearest
	// layer first, then best first.
	Alternates []Ref
}

// Limits of a search.
const (
	DefaultLimit = 10
	MaxLimit     = 1000
	// LayerTie is the relative difference of relevance under which two
	// hits count as equally relevant, so the nearer layer's ranks first:
	// each step of Rank scales a relevance by 1/(1+LayerTie) when ordering
	// hits.
	LayerTie = 0.02
)

// accumulators are per-search score arrays, pooled: a search over 10,000
// documents reuses one rather than allocating 40 KB.
var accumulators sync.Pool

type accumulator struct {
	score   []float32
	touched []int32
	// skip memoizes Layer.Skip per touched document (0 not asked, 1 shown,
	// 2 skipped): a caller's Skip can cost microseconds, and a collapsing
	// search that deepens asks again for the same documents.
	skip []uint8
}

func getAccumulator(n int) *accumulator {
	a, _ := accumulators.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if cap(a.score) < n {
		a.score = make([]float32, n)
		a.skip = make([]uint8, n)
	}
	a.score, a.skip = a.score[:n], a.skip[:n]
	a.touched = a.touched[:0]
	return a
}

func (a *accumulator) release() {
	for _, g := range a.touched {
		a.score[g], a.skip[g] = 0, 0
	}
	a.touched = a.touched[:0]
	accumulators.Put(a)
}

// candidate is a scored, unskipped document.
type candidate struct {
	ref   Ref
	rank  int
	score float64 // BM25F
	rel   float64 // relevance, 0..1
	order float64 // relevance scaled down by layer distance
}

// better orders candidates: by layer-scaled relevance, then nearer layer, then
// layer and document number, so equal inputs give equal orders.
func better(a, b *candidate) bool {
	if a.order != b.order {
		return a.order > b.order
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.ref.Layer != b.ref.Layer {
		return a.ref.Layer < b.ref.Layer
	}
	return a.ref.Doc < b.ref.Doc
}

// worstFirst is a min-heap of the best candidates seen.
type worstFirst []candidate

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return better(&h[j], &h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Search ranks the documents of layers against q.Text with BM25F, document
// frequencies summed over the layers, and returns the best q.Limit hits by
// relevance: the query is analyzed as each language, a document scored by
// its own language's terms and against their best, so a Spanish task
// prefers Spanish skills to English ones that share a word with it.
func Search(layers []Layer, q Query) []Hit {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	terms := analyzeQuery(q.Text)
	qv := hybridQuery(layers, q)
	if len(terms) == 0 && qv == nil || len(layers) == 0 {
		return nil
	}
	base := make([]int, len(layers)+1)
	for i, l := range layers {
		if l.X != nil {
			base[i+1] = base[i] + l.X.n
		} else {
			base[i+1] = base[i]
		}
	}
	total := base[len(layers)]
	if total == 0 {
		return nil
	}
	idfPower, copyBoost := 1.0, 0.0
	for _, l := range layers {
		if l.X != nil {
			idfPower, copyBoost = l.X.weights.IDFPower, l.X.weights.CopyBoost
			break
		}
	}
	// Global document frequencies: a term rare in the caller's own layer
	// but common in the organization's is common.
	lists := make([][]byte, len(layers)*len(terms))
	idf := make([]float64, len(terms))
	for j, t := range terms {
		df := 0
		for i, l := range layers {
			if l.X == nil {
				continue
			}
			p, n := l.X.lookup(t.text)
			lists[i*len(terms)+j] = p
			df += n
		}
		idf[j] = math.Pow(math.Log(1+(float64(total)-float64(df)+0.5)/(float64(df)+0.5)), idfPower)
	}
	var best [numLangs]float64
	for j, t := range terms {
		for l := range numLangs {
			if t.langs&(1<<l) != 0 {
				best[l] += idf[j]
			}
		}
	}

	acc := getAccumulator(total)
	defer acc.release()
	touchedEnd := make([]int, len(layers))
	for i, l := range layers {
		for j, t := range terms {
			p := lists[i*len(terms)+j]
			if p == nil {
				continue
			}
			w := float32(idf[j] / 255)
			doc := uint64(0)
			for len(p) > 0 {
				d, k := binary.Uvarint(p)
				doc += d
				qv := p[k]
				p = p[k+1:]
				if t.langs&(1<<l.X.lang[doc]) == 0 {
					continue
				}
				g := base[i] + int(doc)
				if acc.score[g] == 0 {
					acc.touched = append(acc.touched, int32(g))
				}
				acc.score[g] += w * float32(qv)
			}
		}
		touchedEnd[i] = len(acc.touched)
	}
	var sem []float32
	if qv != nil {
		// Every document is a candidate: brute force over the layers'
		// vectors costs about a millisecond per 10,000.
		sem = make([]float32, total)
		acc.touched = acc.touched[:0]
		for i, l := range layers {
			if l.X == nil {
				continue
			}
			l.Vectors.similarity(qv, sem[base[i]:base[i+1]])
			for g := base[i]; g < base[i+1]; g++ {
				acc.touched = append(acc.touched, int32(g))
			}
			touchedEnd[i] = len(acc.touched)
		}
	}
	fuse := fusion{sem: sem, w: q.Semantic}

	// The candidates: enough for limit hits, or for limit distinct groups
	// when collapsing, deepened until they suffice or none are left.
	depth := limit
	if q.Collapse {
		depth = limit * 4
	}
	for {
		cands, more := top(layers, acc, base, touchedEnd, &best, depth, fuse)
		if !q.Collapse {
			return hits(cands, nil)
		}
		groups := collapse(layers, cands, limit, copyBoost)
		if len(groups) >= limit || !more {
			return hits(cands, groups)
		}
		depth *= 4
	}
}

// top returns the depth best unskipped candidates, best first, and
// whether there were more.
func top(layers []Layer, acc *accumulator, base, touchedEnd []int, best *[numLangs]float64, depth int, fuse fusion) ([]candidate, bool) {
	h := make(worstFirst, 0, min(depth, len(acc.touched))+1)
	more := false
	start := 0
	for i, l := range layers {
		scale := math.Pow(1+LayerTie, -float64(max(l.Rank, 0)))
		for _, g := range acc.touched[start:touchedEnd[i]] {
			doc := int(g) - base[i]
			s := float64(acc.score[g])
			rel := 0.0
			if m := best[l.X.lang[doc]]; m > 0 {
				rel = min(s/m, 1)
			}
			if fuse.sem != nil {
				rel = (1-fuse.w)*rel + fuse.w*min(max(float64(fuse.sem[g]), 0), 1)
			}
			c := candidate{ref: Ref{Layer: i, Doc: doc}, rank: l.Rank, score: s, rel: rel, order: rel * scale}
			full := len(h) >= depth
			if full && !better(&c, &h[0]) {
				more = true // skipped or not, it is not among the depth best
				continue
			}
			// Skip is asked only of a document that would be kept: a
			// caller's costs microseconds, and most touched documents never
			// come near the top.
			if acc.skip[g] == 0 {
				acc.skip[g] = 1
				if l.Skip != nil && l.Skip(doc) {
					acc.skip[g] = 2
				}
			}
			if acc.skip[g] == 2 {
				continue
			}
			if !full {
				heap.Push(&h, c)
			} else {
				h[0] = c
				heap.Fix(&h, 0)
				more = true
			}
		}
		start = touchedEnd[i]
	}
	out := []candidate(h)
	slices.SortFunc(out, func(a, b candidate) int {
		if better(&a, &b) {
			return -1
		}
		if better(&b, &a) {
			return 1
		}
		return 0
	})
	return out, more
}

// group is a collapsed hit: members[0] is the best copy, rep the one shown.
type group struct {
	members []int // indexes into the candidates
	rep     int
}

// collapse folds each candidate into the first better group it
// near-duplicates and orders the groups: by their best copy's order, raised
// by copyBoost for each copy (a skill copied across the caller's libraries
// is one people use), then cuts them to limit.
func collapse(layers []Layer, cands []candidate, limit int, copyBoost float64) []group {
	var groups []group
	// A candidate is near a group's best copy only if they share its body's
	// digest or its name (fingerprint.near): groups are looked up by those,
	// not compared with every candidate.
	byDigest, byName := map[uint64][]int{}, map[uint64][]int{}
	for ci := range cands {
		c := &cands[ci]
		fc := &layers[c.ref.Layer].X.fp[c.ref.Doc]
		found := -1
		for _, keyed := range [2][]int{byDigest[fc.digest], byName[fc.name]} {
			for _, gi := range keyed {
				s := &cands[groups[gi].members[0]]
				if (found < 0 || gi < found) && layers[s.ref.Layer].X.fp[s.ref.Doc].near(fc) {
					found = gi // the first group, as a scan in order finds
				}
			}
		}
		if found >= 0 {
			g := &groups[found]
			g.members = append(g.members, ci)
			// The caller's nearest copy represents the group.
			if c.rank < cands[g.rep].rank {
				g.rep = ci
			}
			continue
		}
		gi := len(groups)
		groups = append(groups, group{members: []int{ci}, rep: ci})
		if fc.digest != 0 {
			byDigest[fc.digest] = append(byDigest[fc.digest], gi)
		}
		if fc.name != 0 {
			byName[fc.name] = append(byName[fc.name], gi)
		}
	}
	if copyBoost > 0 {
		order := func(g *group) float64 {
			return cands[g.members[0]].order * (1 + copyBoost*math.Log(float64(len(g.members))))
		}
		slices.SortStableFunc(groups, func(a, b group) int { return cmp.Compare(order(&b), order(&a)) })
	}
	return groups[:min(len(groups), limit)]
}

// hits turns candidates (and their groups, when collapsing) into Hits,
// their Relevance made non-increasing: a hit placed after a less relevant
// one (for its nearer layer, or its copies) reports that one's, so a
// caller cutting at a relevance keeps a prefix of the ranking.
func hits(cands []candidate, groups []group) []Hit {
	var out []Hit
	if groups == nil {
		out = make([]Hit, len(cands))
		for i := range cands {
			out[i] = Hit{Ref: cands[i].ref, Score: cands[i].score, Relevance: cands[i].rel}
		}
	} else {
		out = make([]Hit, len(groups))
		for i, g := range groups {
			first := &cands[g.members[0]]
			h := Hit{Ref: cands[g.rep].ref, Score: first.score, Relevance: first.rel}
			alts := make([]int, 0, len(g.members)-1)
			for _, m := range g.members {
				if m != g.rep {
					alts = append(alts, m)
				}
			}
			slices.SortStableFunc(alts, func(a, b int) int { return cands[a].rank - cands[b].rank })
			for _, m := range alts {
				h.Alternates = append(h.Alternates, cands[m].ref)
			}
			out[i] = h
		}
	}
	for i := 1; i < len(out); i++ {
		out[i].Relevance = min(out[i].Relevance, out[i-1].Relevance)
	}
	return out
}

// NearDuplicate reports whether document i of a and document j of b are
// copies of one skill: the same name with near-identical content, or the
// same content under another name.
func NearDuplicate(a, b *Index, i, j int) bool {
	if a == nil || b == nil || i < 0 || j < 0 || i >= a.n || j >= b.n {
		return false
	}
	return a.fp[i].near(&b.fp[j])
}

// fusion is a hybrid search's semantic half: each document's cosine with
// the query (nil: lexical) and its weight.
type fusion struct {
	sem []float32
	w   float64
}

// hybridQuery returns q's unit vector when the search is hybrid: a
// semantic weight, and vectors of its length on every layer with an
// index; nil otherwise.
func hybridQuery(layers []Layer, q Query) []float32 {
	if len(q.Vector) == 0 || !(q.Semantic > 0 && q.Semantic <= 1) {
		return nil
	}
	for _, l := range layers {
		if l.X != nil && l.X.n > 0 && (l.Vectors == nil || l.Vectors.Len() != l.X.n || l.Vectors.Dim() != len(q.Vector)) {
			return nil
		}
	}
	return unit(q.Vector)
}
