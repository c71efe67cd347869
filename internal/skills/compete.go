package skills

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Compete searches the library lib as its own readers see it (its valid
// skills alone, near-duplicates collapsed), with candidate (nil: none)
// layered over it at rank 0, as a user's own skill is over a shared one,
// for each query, and reports the top k. The live copy of the candidate,
// the skill at candidateDir, is left out: the candidate stands for it.
// It reads the library's index and search index as every caller does (a
// warm one costs no storage request).
func (c *Catalog) Compete(ctx context.Context, lib layout.LibraryRef, candidate *search.Analyzed, candidateDir string, queries []string, k int) ([]skillview.Competition, error) {
	if err := skillview.CheckCompete(queries, k, search.MaxLimit, c.cfg.MaxQueryBytes); err != nil {
		return nil, err
	}
	l, li, err := c.librarySearch(ctx, lib)
	if err != nil {
		return nil, err
	}
	var layers []search.Layer
	if candidate != nil {
		b := search.NewBuilder(search.DefaultWeights)
		b.Add(*candidate)
		layers = append(layers, search.Layer{X: b.Build(), Rank: rankOwn})
	}
	libLayer := len(layers)
	layers = append(layers, search.Layer{X: li.Lexical(), Rank: rankTeam, Skip: func(doc int) bool {
		return !libraryLists(l.All[doc]) || l.All[doc].Dir == candidateDir
	}})
	ref := func(r search.Ref) (dir, name string, cand bool) {
		if r.Layer != libLayer {
			return "", "", true
		}
		s := l.All[r.Doc]
		return s.Dir, s.Name, false
	}
	out := make([]skillview.Competition, len(queries))
	for i, q := range queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i].Query = q
		for j, h := range search.Search(layers, search.Query{Text: q, Limit: k, Collapse: true}) {
			dir, name, cand := ref(h.Ref)
			co := skillview.Competitor{Dir: dir, Name: name, Candidate: cand, Score: h.Score, Relevance: h.Relevance}
			if !cand {
				co.Path = c.cfg.Mount + "/" + dir
			} else if out[i].Rank == 0 {
				out[i].Rank = j + 1
			}
			for _, a := range h.Alternates {
				d, _, _ := ref(a)
				co.Alternates = append(co.Alternates, d)
			}
			out[i].Top = append(out[i].Top, co)
		}
	}
	return out, nil
}

// NearDuplicates returns the skills of the library lib (its valid ones,
// the live copy at candidateDir aside) that candidate near-duplicates:
// the same name with near-identical content, or the same content under
// another name (search.NearDuplicate).
func (c *Catalog) NearDuplicates(ctx context.Context, lib layout.LibraryRef, candidate search.Analyzed, candidateDir string) ([]skillview.LibrarySkill, error) {
	l, li, err := c.librarySearch(ctx, lib)
	if err != nil {
		return nil, err
	}
	b := search.NewBuilder(search.DefaultWeights)
	b.Add(candidate)
	cx := b.Build()
	var out []skillview.LibrarySkill
	for i, s := range l.All {
		if !libraryLists(s) || s.Dir == candidateDir {
			continue
		}
		if search.NearDuplicate(cx, li.Lexical(), 0, i) {
			out = append(out, skillview.LibrarySkill{Dir: s.Dir, Folder: s.Folder(), Category: s.Category(), Name: s.Name})
		}
	}
	return out, nil
}

// libraryLists reports whether a library's own listing holds s: a valid
// skill, not a nested folder.
func libraryLists(s *skillview.Ref) bool {
	return !s.Nested && len(s.Head.Problems.Errors) == 0 && len(s.Note().Errors) == 0
}

// librarySearch returns the layer of the library l alone and its search
// index, the ones its readers' views share.
func (c *Catalog) librarySearch(ctx context.Context, l layout.LibraryRef) (*skillview.Layer, *skillsearch.Index, error) {
	built, err := c.libraryLayer(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	ly, err := c.layer(l)
	if err != nil {
		return nil, nil, err
	}
	key := built.Name // as searchLayers keys a team's or the shared layer
	if built.Name == skillview.LayerUser {
		key = ly.Prefix
	}
	li, err := c.searchIx.Of(ctx, key, built)
	return built, li, err
}

// libraryLayer returns the layer of the library l alone, from its index
// (as fresh as the catalog's).
func (c *Catalog) libraryLayer(ctx context.Context, l layout.LibraryRef) (*skillview.Layer, error) {
	ly, err := c.layer(l)
	if err != nil {
		return nil, err
	}
	x, err := c.views.Indexes.Get(ctx, ly)
	if err != nil {
		return nil, err
	}
	switch {
	case l.Shared:
		return c.views.SharedLayer(ctx, ly.Prefix, skillview.LayerShared, x)
	case l.Team != "":
		return c.views.SharedLayer(ctx, ly.Prefix, skillview.LayerTeam+l.Team, x)
	}
	built, err := c.views.BuildLayer(ctx, x, ly.Prefix, skillview.LayerUser, nil)
	return built, err
}
