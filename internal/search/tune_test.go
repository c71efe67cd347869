package search

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// request is a task as a user phrases it and the skill that should answer.
type request struct {
	Query  string
	Target int // a document of the corpus
	Split  string
}

// scores are the ranking figures of a set of requests.
type scores struct {
	N                int
	Hit1, Hit3, R10  float64
	MRR              float64
	Missed           []string // queries whose target is not in the top 10
	missedRankedHigh []string
}

func (s scores) String() string {
	return fmt.Sprintf("n=%d Hit@1 %.3f Recall@3 %.3f Recall@10 %.3f MRR %.3f", s.N, s.Hit1, s.Hit3, s.R10, s.MRR)
}

// evaluate searches each request as the service does (collapsed, 10 hits)
// and counts a hit when a result is the target or a copy of it.
func evaluate(x *Index, reqs []request, isCopy func(target, doc int) bool) scores {
	var s scores
	for _, r := range reqs {
		hs := Search([]Layer{{X: x, Rank: 2}}, Query{Text: r.Query, Limit: 10, Collapse: true})
		rank := 0
		for i, h := range hs {
			if isCopy(r.Target, h.Doc) || slices_any(h.Alternates, func(a Ref) bool { return isCopy(r.Target, a.Doc) }) {
				rank = i + 1
				break
			}
		}
		s.N++
		if rank == 1 {
			s.Hit1++
		}
		if rank >= 1 && rank <= 3 {
			s.Hit3++
		}
		if rank >= 1 {
			s.R10++
			s.MRR += 1 / float64(rank)
		} else {
			s.Missed = append(s.Missed, r.Query)
		}
	}
	if s.N > 0 {
		n := float64(s.N)
		s.Hit1, s.Hit3, s.R10, s.MRR = s.Hit1/n, s.Hit3/n, s.R10/n, s.MRR/n
	}
	return s
}

func slices_any[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// objective is what tuning maximizes: MRR, which moves with every rank
// rather than only at the first and tenth.
func (s scores) objective() float64 { return s.MRR + 0.25*s.R10 }

// restrict keeps of each analysis only the terms the requests have: an
// index of those ranks the requests as the whole one does, far cheaper
// to build per trial.
func restrict(analyzed []Analyzed, reqs []request) []Analyzed {
	keep := map[string]bool{}
	for _, r := range reqs {
		for _, t := range analyzeQuery(r.Query) {
			keep[t.text] = true
		}
	}
	out := make([]Analyzed, len(analyzed))
	for i, a := range analyzed {
		r := Analyzed{lang: a.lang, length: a.length, fp: a.fp}
		for _, o := range a.occ {
			if t := a.terms[o.term]; keep[t] {
				if len(r.terms) == 0 || r.terms[len(r.terms)-1] != t {
					r.terms = append(r.terms, t)
				}
				o.term = uint32(len(r.terms) - 1)
				r.occ = append(r.occ, o)
			}
		}
		out[i] = r
	}
	return out
}

// TestTuneWeights chooses BM25F's weights by coordinate search on the
// corpus's "tune" requests and reports the "holdout" ones, which tuning
// never sees. Slow (minutes): SEARCH_TUNE=1 go test -run TestTuneWeights
// -v -timeout 1h ./internal/search/
func TestTuneWeights(t *testing.T) {
	if os.Getenv("SEARCH_TUNE") == "" {
		t.Skip("SEARCH_TUNE=1 runs the tuning")
	}
	c := loadCorpus(t, fullCorpus)
	var tune, holdout []request
	for _, r := range c.requests {
		if r.Split == "holdout" {
			holdout = append(holdout, r)
		} else {
			tune = append(tune, r)
		}
	}
	analyzed := restrict(c.analyzed(), c.requests)
	eval := func(w Weights, reqs []request) scores {
		b := NewBuilder(w)
		for _, a := range analyzed {
			b.Add(a)
		}
		return evaluate(b.Build(), reqs, c.isCopy)
	}
	w := DefaultWeights
	if os.Getenv("SEARCH_TUNE_FROM") == "neutral" {
		for f := range w.Fields {
			w.Fields[f] = FieldWeight{Weight: 1, B: 0.75}
		}
		w.K1, w.IDFPower = 1.2, 1
	}
	best := eval(w, tune)
	t.Logf("start: tune %v | holdout %v", best, eval(w, holdout))
	type param struct {
		name string
		ptr  func(*Weights) *float64
		vals func(v float64) []float64
	}
	scale := func(v float64) []float64 {
		return []float64{v * 0.5, v * 0.7, v * 1.4, v * 2, math.Max(v, 0.05) * 3}
	}
	unit := func(float64) []float64 { return []float64{0, 0.2, 0.4, 0.6, 0.8, 1} }
	var params []param
	for f := range numFields {
		params = append(params,
			param{Field(f).String() + ".weight", func(w *Weights) *float64 { return &w.Fields[f].Weight }, scale},
			param{Field(f).String() + ".b", func(w *Weights) *float64 { return &w.Fields[f].B }, unit})
	}
	params = append(params, param{"idf-power", func(w *Weights) *float64 { return &w.IDFPower }, func(float64) []float64 { return []float64{0, 0.25, 0.5, 0.75, 1} }})
	params = append(params, param{"copy-boost", func(w *Weights) *float64 { return &w.CopyBoost }, func(float64) []float64 { return []float64{0, 0.1, 0.2, 0.4, 0.8, 1.6} }})
	params = append(params, param{"k1", func(w *Weights) *float64 { return &w.K1 }, func(float64) []float64 { return []float64{0.5, 0.8, 1.2, 1.6, 2.0, 3.0} }})
	for pass := range 3 {
		improved := false
		for _, p := range params {
			for _, v := range p.vals(*p.ptr(&w)) {
				trial := w
				*p.ptr(&trial) = v
				if s := eval(trial, tune); s.objective() > best.objective()+1e-9 {
					t.Logf("pass %d: %s = %.3g: tune %v", pass, p.name, v, s)
					best, w, improved = s, trial, true
				}
			}
		}
		if !improved {
			break
		}
	}
	ho := eval(w, holdout)
	t.Logf("chosen: %s", weightsLiteral(w))
	t.Logf("tune    %v", best)
	t.Logf("holdout %v", ho)
	for _, q := range ho.Missed {
		t.Logf("holdout miss: %q", q)
	}
}

func weightsLiteral(w Weights) string {
	var b strings.Builder
	b.WriteString("Weights{Fields: [numFields]FieldWeight{")
	for f, fw := range w.Fields {
		fmt.Fprintf(&b, "%s: {Weight: %.3g, B: %.3g}, ", fieldConst[f], fw.Weight, fw.B)
	}
	fmt.Fprintf(&b, "}, K1: %.3g, IDFPower: %.3g, CopyBoost: %.3g}", w.K1, w.IDFPower, w.CopyBoost)
	return b.String()
}

var fieldConst = [numFields]string{"FieldName", "FieldDisplayName", "FieldDescription", "FieldBody", "FieldHeadings", "FieldFiles", "FieldCategory", "FieldLabels"}

// TestMeasureBodyCap reports ranking and index size as the body cap
// varies (BodyCap's comment): SEARCH_TUNE=1 go test -run TestMeasureBodyCap -v
func TestMeasureBodyCap(t *testing.T) {
	if os.Getenv("SEARCH_TUNE") == "" {
		t.Skip("SEARCH_TUNE=1 runs the measurement")
	}
	c := loadCorpus(t, fullCorpus)
	var tune []request
	for _, r := range c.requests {
		if r.Split != "holdout" {
			tune = append(tune, r)
		}
	}
	defer func(v int) { bodyCap = v }(bodyCap)
	for _, kib := range []int{1, 2, 4, 6, 8, 12, 16, 32, 64} {
		bodyCap = kib << 10
		b := NewBuilder(DefaultWeights)
		for _, d := range c.docs {
			b.Add(Analyze(d))
		}
		x := b.Build()
		t.Logf("body cap %2d KiB: %4d bytes per skill, tune %v", kib, x.Bytes()/int64(x.Len()), evaluate(x, tune, c.isCopy))
	}
}

// TestExplainRequests prints the top hits of the requests whose text holds
// $SEARCH_EXPLAIN ("*": all), the target's copies starred.
func TestExplainRequests(t *testing.T) {
	want := os.Getenv("SEARCH_EXPLAIN")
	if want == "" {
		t.Skip("SEARCH_EXPLAIN=<part of a request> explains its ranking")
	}
	c := loadCorpus(t, fullCorpus)
	b := NewBuilder(DefaultWeights)
	for _, a := range c.analyzed() {
		b.Add(a)
	}
	x := b.Build()
	for _, r := range c.requests {
		if want != "*" && !strings.Contains(r.Query, want) {
			continue
		}
		t.Logf("%q (target %s)", r.Query, c.paths[r.Target])
		for _, h := range Search([]Layer{{X: x}}, Query{Text: r.Query, Limit: 5, Collapse: true}) {
			mark := " "
			if c.isCopy(r.Target, h.Doc) {
				mark = "*"
			}
			t.Logf("  %s %.3f %s | %.80s", mark, h.Relevance, c.paths[h.Doc], c.docs[h.Doc].Description)
		}
	}
}
