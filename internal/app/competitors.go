package app

import (
	"context"
	"strings"

	"github.com/skillsvc/skillsvc/internal/coexist"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
)

// competitors is the catalog's search as a publish's coexistence check
// asks it (coexist.Competitors): the candidate folder analyzed as the
// library's own skills are, layered over the target library in place of
// its live copy.
type competitors struct {
	catalog *skills.Catalog
	// maxQuery is --skills.max-query-bytes: a query is cut to it (on a
	// character boundary) rather than fail the whole check.
	maxQuery int
}

// Compete implements coexist.Competitors.
func (c competitors) Compete(ctx context.Context, l layout.LibraryRef, cand coexist.Candidate, queries []string, k int) (coexist.Competition, error) {
	var raw []byte
	paths := make([]string, 0, len(cand.Files))
	for _, f := range cand.Files {
		if f.Path == skillmd.SkillFile {
			raw = f.Data
		}
		paths = append(paths, f.Path)
	}
	a := search.Analyze(skillsearch.SearchDoc(raw, cand.Dir, paths))
	qs := make([]string, len(queries))
	for i, q := range queries {
		if len(q) > c.maxQuery {
			q = strings.ToValidUTF8(q[:c.maxQuery], "")
		}
		qs[i] = q
	}
	ranked, err := c.catalog.Compete(ctx, l, &a, cand.Dir, qs, k)
	if err != nil {
		return coexist.Competition{}, err
	}
	dups, err := c.catalog.NearDuplicates(ctx, l, a, cand.Dir)
	if err != nil {
		return coexist.Competition{}, err
	}
	out := coexist.Competition{Top: make([][]coexist.Rival, len(ranked))}
	for i, r := range ranked {
		for _, h := range r.Top {
			out.Top[i] = append(out.Top[i], coexist.Rival{Dir: h.Dir, Name: h.Name, Self: h.Candidate, Relevance: h.Relevance})
		}
	}
	for _, d := range dups {
		out.Duplicates = append(out.Duplicates, coexist.Rival{Dir: d.Dir, Name: d.Name})
	}
	return out, nil
}
