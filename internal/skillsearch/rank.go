package skillsearch

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/search"
)

// A search layer's rank: nearer layers win ties and represent the copies
// collapsed with theirs.
const (
	RankOwn    = 0
	RankTeam   = 1
	RankShared = 2
)

// Ranked is one layer of a caller's search: its index, its rank, and the
// documents the caller's view does not list (Skip, asked only of a
// document that would enter the top).
type Ranked struct {
	Index *Index
	Rank  int
	Skip  func(doc int) bool
}

// Search ranks the documents of layers against text, at most limit,
// near-duplicates collapsed (search.Search): with the semantic stage on
// and every layer's vectors made, by their embeddings' similarity to text
// too.
func (si *Indexes) Search(ctx context.Context, layers []Ranked, text string, limit int) []search.Hit {
	ls := make([]search.Layer, len(layers))
	for i, r := range layers {
		ls[i] = search.Layer{X: r.Index.x, Rank: r.Rank, Skip: r.Skip}
	}
	q := search.Query{Text: text, Limit: limit, Collapse: true}
	if sem := si.sem; sem != nil && text != "" {
		q.Vector, q.Semantic = si.hybrid(ctx, layers, ls, text), sem.weight
	}
	return search.Search(ls, q)
}
