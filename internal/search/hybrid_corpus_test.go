package search

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/embed"
)

// TestHybridCorpus measures the semantic stage on the corpus: every
// skill's EmbedText and every request embedded by the endpoint at
// $SEARCH_EMBEDDINGS_URL (model $SEARCH_EMBEDDINGS_MODEL), the semantic
// weight chosen on the tune requests, the holdout reported. Vectors are
// kept in $SEARCH_EMBEDDINGS_CACHE (a directory; default the temp dir) by
// model and text, so a second run asks for none.
func TestHybridCorpus(t *testing.T) {
	url := os.Getenv("SEARCH_EMBEDDINGS_URL")
	if url == "" {
		t.Skip("SEARCH_EMBEDDINGS_URL names an embeddings endpoint to measure")
	}
	c := loadCorpus(t, fullCorpus)
	model := os.Getenv("SEARCH_EMBEDDINGS_MODEL")
	if model == "" {
		model = "all-MiniLM-L6-v2"
	}
	cl, err := embed.New(embed.Config{URL: url, Model: model, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("SEARCH_EMBEDDINGS_CACHE")
	if dir == "" {
		dir = os.TempDir()
	}
	vecs := func(texts []string) []Vec {
		out := make([]Vec, len(texts))
		var miss []int
		path := func(i int) string {
			s := sha256.Sum256([]byte(model + "\x00" + texts[i]))
			return filepath.Join(dir, "emb-"+hex.EncodeToString(s[:12]))
		}
		for i := range texts {
			if b, err := os.ReadFile(path(i)); err == nil {
				out[i] = b
			} else {
				miss = append(miss, i)
			}
		}
		if os.Getenv("SEARCH_EMBEDDINGS_REVERSE") != "" { // a second process from the other end
			slices.Reverse(miss)
		}
		start := time.Now()
		for k := 0; k < len(miss); k += embed.MaxBatch {
			var part []int
			for _, i := range miss[k:min(k+embed.MaxBatch, len(miss))] {
				if b, err := os.ReadFile(path(i)); err == nil { // another process's
					out[i] = b
				} else {
					part = append(part, i)
				}
			}
			if len(part) == 0 {
				continue
			}
			in := make([]string, len(part))
			for j, i := range part {
				in[j] = texts[i]
			}
			vs, err := cl.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			for j, i := range part {
				out[i] = Quantize(vs[j])
				if err := os.WriteFile(path(i), out[i], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if k/embed.MaxBatch%10 == 0 {
				t.Logf("embedded %d of %d in %v", k+len(part), len(miss), time.Since(start).Round(time.Second))
			}
		}
		return out
	}
	texts := make([]string, len(c.docs))
	for i, d := range c.docs {
		texts[i] = EmbedText(d)
	}
	docVecs := vecs(texts)
	qs := make([]string, len(c.requests))
	for i, r := range c.requests {
		qs[i] = r.Query
	}
	qVecs := vecs(qs)
	b := NewBuilder(DefaultWeights)
	for _, a := range c.analyzed() {
		b.Add(a)
	}
	x := b.Build()
	vx, err := NewVectors(docVecs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vectors: %d dimensions, %d bytes (%d per skill); lexical index %d per skill", vx.Dim(), vx.Bytes(), vx.Bytes()/int64(vx.Len()), x.Bytes()/int64(x.Len()))
	layers := []Layer{{X: x, Rank: 2, Vectors: vx}}
	eval := func(w float64, split string) scores {
		var s scores
		for i, r := range c.requests {
			if r.Split != split {
				continue
			}
			hs := Search(layers, Query{Text: r.Query, Limit: 10, Collapse: true, Vector: dequantize(qVecs[i]), Semantic: w})
			s.add(hs, func(doc int) bool { return c.isCopy(r.Target, doc) }, r.Query)
		}
		return s.done()
	}
	best, bestW := scores{}, 0.0
	for _, w := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1} {
		s := eval(w, "tune")
		t.Logf("weight %.1f: tune %v", w, s)
		if s.objective() > best.objective()+1e-9 {
			best, bestW = s, w
		}
	}
	t.Logf("chosen weight %.1f: tune %v", bestW, best)
	t.Logf("holdout at weight 0 (lexical): %v", eval(0, "holdout"))
	ho := eval(bestW, "holdout")
	t.Logf("holdout at weight %.1f: %v", bestW, ho)
	for _, q := range ho.Missed {
		t.Logf("holdout missed: %s", q)
	}
	// Each request's own cost (its fastest of 5 runs), lexical and hybrid:
	// the query's embedding is not in it (one request to the endpoint,
	// then the service's LRU).
	cost := func(w float64) (p50, p99 time.Duration) {
		var ds []time.Duration
		for i, r := range c.requests {
			q := Query{Text: r.Query, Limit: 10, Collapse: true, Vector: dequantize(qVecs[i]), Semantic: w}
			best := time.Duration(1 << 62)
			for range 5 {
				start := time.Now()
				Search(layers, q)
				best = min(best, time.Since(start))
			}
			ds = append(ds, best)
		}
		slices.Sort(ds)
		return ds[len(ds)/2], ds[len(ds)*99/100]
	}
	lp50, lp99 := cost(0)
	hp50, hp99 := cost(bestW)
	t.Logf("own cost per search: lexical p50 %v p99 %v; hybrid p50 %v p99 %v", lp50, lp99, hp50, hp99)
	// Reciprocal rank fusion of the lexical and the semantic rankings
	// (k 60), for comparison: it ranks by rank alone, so a hit has no
	// relevance comparable across searches.
	rrf := func(split string) scores {
		var s scores
		for i, r := range c.requests {
			if r.Split != split {
				continue
			}
			q := Query{Text: r.Query, Limit: 100, Collapse: true, Vector: dequantize(qVecs[i])}
			fused := map[int]float64{}
			groupOf := map[int][]int{}
			for _, w := range []float64{0, 1} {
				q.Semantic = w
				for rank, h := range Search(layers, q) {
					members := []int{h.Doc}
					for _, a := range h.Alternates {
						members = append(members, a.Doc)
					}
					for _, m := range members {
						fused[m] += 1 / (60 + float64(rank+1))
						groupOf[m] = members
					}
				}
			}
			docs := make([]int, 0, len(fused))
			for d := range fused {
				docs = append(docs, d)
			}
			slices.SortFunc(docs, func(a, b int) int {
				if fused[a] != fused[b] {
					return cmp.Compare(fused[b], fused[a])
				}
				return a - b
			})
			var hs []Hit
			seen := map[int]bool{}
			for _, d := range docs {
				if seen[d] || len(hs) == 10 {
					continue
				}
				h := Hit{Ref: Ref{Doc: d}}
				for _, m := range groupOf[d] {
					seen[m] = true
					if m != d {
						h.Alternates = append(h.Alternates, Ref{Doc: m})
					}
				}
				hs = append(hs, h)
			}
			s.add(hs, func(doc int) bool { return c.isCopy(r.Target, doc) }, r.Query)
		}
		return s.done()
	}
	t.Logf("reciprocal rank fusion: tune %v", rrf("tune"))
	t.Logf("reciprocal rank fusion: holdout %v", rrf("holdout"))
	if w := os.Getenv("SEARCH_EMBEDDINGS_WEIGHTS"); w != "" {
		var f float64
		fmt.Sscan(w, &f)
		t.Logf("holdout at weight %.2f: %v", f, eval(f, "holdout"))
	}
}

// dequantize is v as floats (unit length, up to quantization).
func dequantize(v Vec) []float32 {
	if v.Dim() == 0 {
		return nil
	}
	s := v.scale()
	out := make([]float32, v.Dim())
	for i, b := range v[4:] {
		out[i] = float32(int8(b)) * s
	}
	return out
}

// add counts one request's hits: the rank of the first that is the target
// or holds it among its alternates.
func (s *scores) add(hs []Hit, isTarget func(doc int) bool, query string) {
	rank := 0
	for i, h := range hs {
		if isTarget(h.Doc) || slices_any(h.Alternates, func(a Ref) bool { return isTarget(a.Doc) }) {
			rank = i + 1
			break
		}
	}
	s.N++
	switch {
	case rank == 0:
		s.Missed = append(s.Missed, query)
	case rank == 1:
		s.Hit1++
		fallthrough
	case rank <= 3:
		s.Hit3++
		fallthrough
	default:
		s.R10++
		s.MRR += 1 / float64(rank)
	}
}

func (s scores) done() scores {
	if s.N > 0 {
		n := float64(s.N)
		s.Hit1, s.Hit3, s.R10, s.MRR = s.Hit1/n, s.Hit3/n, s.R10/n, s.MRR/n
	}
	return s
}
