package search

import (
	"math"
	"testing"
)

// TestHybridRanking: the vectors reorder what the words alone rank, a
// skipped document stays out however close its vector, and a layer
// without vectors keeps the search lexical.
func TestHybridRanking(t *testing.T) {
	docs := []Doc{
		{Name: "deck-cleaner", Description: "Clean the deck of a boat: deck washing and deck care."},
		{Name: "slides", Description: "Build presentations from an outline."},
		{Name: "slides-copy-hidden", Description: "Build slide presentations for meetings."},
	}
	vecs := [][]float32{{0, 1, 0}, {1, 0.1, 0}, {1, 0, 0}}
	b := NewBuilder(DefaultWeights)
	rows := make([]Vec, len(docs))
	for i, d := range docs {
		b.Add(Analyze(d))
		rows[i] = Quantize(vecs[i])
	}
	x := b.Build()
	vx, err := NewVectors(rows)
	if err != nil {
		t.Fatal(err)
	}
	skip := func(doc int) bool { return doc == 2 }
	q := Query{Text: "a deck for the board", Limit: 3, Vector: []float32{2, 0, 0}, Semantic: 0.5}
	first := func(layers []Layer, q Query) int {
		hs := Search(layers, q)
		for _, h := range hs {
			if h.Doc == 2 {
				t.Errorf("a skipped document ranked: %+v", hs)
			}
		}
		if len(hs) == 0 {
			t.Fatal("no hits")
		}
		return hs[0].Doc
	}
	if got := first([]Layer{{X: x, Skip: skip}}, q); got != 0 {
		t.Errorf("without vectors: %q first, want the lexical deck-cleaner", docs[got].Name)
	}
	if got := first([]Layer{{X: x, Skip: skip, Vectors: vx}}, q); got != 1 {
		t.Errorf("hybrid: %q first, want slides", docs[got].Name)
	}
	lexical := q
	lexical.Semantic = 0
	if got := first([]Layer{{X: x, Skip: skip, Vectors: vx}}, lexical); got != 0 {
		t.Errorf("weight 0: %q first", docs[got].Name)
	}
	wrongDim := q
	wrongDim.Vector = []float32{1, 0}
	if got := first([]Layer{{X: x, Skip: skip, Vectors: vx}}, wrongDim); got != 0 {
		t.Errorf("a query vector of another model: %q first", docs[got].Name)
	}
	// A query with no word the index knows is still answered by meaning.
	if got := first([]Layer{{X: x, Skip: skip, Vectors: vx}}, Query{Text: "zzqx", Vector: []float32{1, 0, 0}, Semantic: 0.5}); got != 1 {
		t.Errorf("no shared words: %q first", docs[got].Name)
	}
}

// TestQuantize: a Vec keeps a vector's direction within 1% of its cosine,
// and a Vectors row is the Vec it was made from.
func TestQuantize(t *testing.T) {
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(math.Sin(float64(i) * 0.37))
	}
	q := Quantize(v)
	if q.Dim() != 384 || len(q) != 388 {
		t.Fatalf("Vec of %d bytes", len(q))
	}
	vx, err := NewVectors([]Vec{q, nil})
	if err != nil {
		t.Fatal(err)
	}
	sim := make([]float32, 2)
	vx.similarity(unit(v), sim)
	if math.Abs(float64(sim[0])-1) > 0.01 || sim[1] != 0 {
		t.Errorf("similarities %v, want about 1 and 0", sim)
	}
	if string(vx.Row(0)) != string(q) || vx.Row(1) != nil {
		t.Error("Row does not give back the Vec")
	}
	if Quantize(make([]float32, 3)) != nil {
		t.Error("a zero vector quantized")
	}
	if _, err := NewVectors([]Vec{q, Quantize([]float32{1, 2})}); err == nil {
		t.Error("vectors of two lengths accepted")
	}
}

// BenchmarkSimilarity is the brute-force half of a hybrid search: 10,000
// skills of 384 dimensions.
func BenchmarkSimilarity(b *testing.B) {
	const n, dim = 10000, 384
	rows := make([]Vec, n)
	v := make([]float32, dim)
	for d := range rows {
		for i := range v {
			v[i] = float32(math.Sin(float64(d*dim + i)))
		}
		rows[d] = Quantize(v)
	}
	x, err := NewVectors(rows)
	if err != nil {
		b.Fatal(err)
	}
	q := unit(v)
	sim := make([]float32, n)
	for b.Loop() {
		x.similarity(q, sim)
	}
}
