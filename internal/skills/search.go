package skills

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// searchOptions checks opts and applies the default limit.
func (c *Catalog) searchOptions(opts skillview.SearchOptions) (skillview.SearchOptions, error) {
	if opts.Query == "" || len(opts.Query) > c.cfg.MaxQueryBytes {
		return opts, fmt.Errorf("%w: query must be 1..%d bytes", errkind.InvalidArgument, c.cfg.MaxQueryBytes)
	}
	n, err := limits.Count("limit", opts.Limit, c.cfg.DefaultSearchResults, c.cfg.MaxSearchResults)
	if err != nil {
		return opts, err
	}
	if !(opts.MinRelevance >= 0 && opts.MinRelevance <= 1) { // NaN too
		return opts, fmt.Errorf("%w: min_relevance must be 0..1, got %v", errkind.InvalidArgument, opts.MinRelevance)
	}
	opts.Limit = n
	return opts, nil
}

// search ranks the snapshot s; opts are checked.
func (c *Catalog) search(ctx context.Context, s snapshot, opts skillview.SearchOptions) (skillview.Results, error) {
	hits, err := c.ranked(ctx, s, skillview.ListOptions{Category: opts.Category, FilterCategory: opts.FilterCategory}, opts.Query, int(opts.Limit))
	if err != nil {
		return skillview.Results{}, err
	}
	// Hits come best first by relevance, so the weak ones are at the end.
	hits = hits[:sort.Search(len(hits), func(i int) bool { return hits[i].relevance < opts.MinRelevance })]
	if c.cfg.SearchUsePrior {
		c.tieBreak(s.id, hits)
	}
	disabled := s.st.DisabledSet()
	out := make([]skillview.Scored, len(hits))
	for i, h := range hits {
		out[i] = skillview.Scored{Skill: c.summary(h.r, h.r.Head.Frontmatter, s.v.Problems(c.cfg.Mount, h.r), disabled), Score: h.score, Relevance: h.relevance}
		for _, alt := range h.alternates {
			out[i].Alternates = append(out[i].Alternates, skillview.Alternate{Path: c.skillPath(alt), Name: alt.Name, Layer: alt.Layer})
		}
	}
	return skillview.Results{Hits: out, LibraryDigest: s.digest()}, nil
}

// A search layer's rank (skillsearch's).
const (
	rankOwn    = skillsearch.RankOwn
	rankTeam   = skillsearch.RankTeam
	rankShared = skillsearch.RankShared
)

// layerRank is the rank of a skill of the layer named layer.
func layerRank(layer string) int {
	switch {
	case layer == skillview.LayerUser:
		return rankOwn
	case strings.HasPrefix(layer, skillview.LayerTeam):
		return rankTeam
	}
	return rankShared
}

// searchLayer is one layer of a view as search ranks it.
type searchLayer struct {
	l    *skillview.Layer
	ix   *skillsearch.Index
	rank int
}

// searchLayers returns the search indexes of the layers of s's view, the
// user's own first, then the teams' in ID order, then the organization's:
// built once per generation of each, for every caller over it.
func (c *Catalog) searchLayers(ctx context.Context, s snapshot) ([]searchLayer, error) {
	v := s.v
	own := v.Raw
	if own == nil { // a pinned thread's view holds its own layer composed
		own = v.Own
	}
	out := make([]searchLayer, 0, 1+len(v.Lower))
	out = append(out, searchLayer{l: own, rank: rankOwn})
	for i, l := range v.Lower {
		r := rankTeam
		if i == len(v.Lower)-1 {
			r = rankShared
		}
		out = append(out, searchLayer{l: l, rank: r})
	}
	// A pinned view's layers are its snapshot's, apart from the live ones.
	pin := ""
	if strings.HasPrefix(v.UserBase, views.PinBase) {
		pin = v.UserBase + "\x00"
	}
	var g *errgroup.Group
	gctx := ctx
	for i := range out {
		key := pin + out[i].l.Name
		if out[i].rank == rankOwn {
			key = pin + v.UserBase
		}
		if li, ok := c.searchIx.Held(key, out[i].l); ok { // most calls
			out[i].ix = li
			c.searchIx.EmbedLater(key, out[i].l, li)
			continue
		}
		if g == nil {
			g, gctx = errgroup.WithContext(ctx)
		}
		g.Go(func() (err error) {
			out[i].ix, err = c.searchIx.Of(gctx, key, out[i].l)
			if err == nil {
				c.searchIx.EmbedLater(key, out[i].l, out[i].ix)
			}
			return err
		})
	}
	if g != nil {
		return out, g.Wait()
	}
	return out, nil
}

// rankedSkill is a skill search ranked, as the caller's view serves it.
type rankedSkill struct {
	r                *skillview.Ref
	score, relevance float64
	alternates       []*skillview.Ref // copies collapsed into it, nearest layer first
}

// ranked is the caller's listed skills (as a listing with opts holds them)
// most relevant to query, at most limit, near-duplicates collapsed.
func (c *Catalog) ranked(ctx context.Context, s snapshot, opts skillview.ListOptions, query string, limit int) ([]rankedSkill, error) {
	sls, err := c.searchLayers(ctx, s)
	if err != nil {
		return nil, err
	}
	disabled := s.st.DisabledSet()
	layers := make([]skillsearch.Ranked, len(sls))
	for i, sl := range sls {
		layers[i] = skillsearch.Ranked{Index: sl.ix, Rank: sl.rank, Skip: func(doc int) bool {
			_, ok := s.shows(sl.l, doc, opts, disabled)
			return !ok
		}}
	}
	hits := c.searchIx.Search(ctx, layers, query, limit)
	out := make([]rankedSkill, 0, len(hits))
	for _, h := range hits {
		r, ok := s.shows(sls[h.Layer].l, h.Doc, opts, disabled)
		if !ok {
			continue // Skip said so: never
		}
		rs := rankedSkill{r: r, score: h.Score, relevance: h.Relevance}
		for _, a := range h.Alternates {
			alt := sls[a.Layer].l.All[a.Doc]
			if v, ok := s.shows(sls[a.Layer].l, a.Doc, opts, disabled); ok {
				alt = v
			}
			rs.alternates = append(rs.alternates, alt)
		}
		out = append(out, rs)
	}
	return out, nil
}

// shows returns the skill the caller's listing with opts holds for doc,
// the folder at that place of l (one of the view's layers): the view's own
// copy of it (the same version of the same layer's skill, with the view's
// notes), when the view serves it (not hidden or shadowed by a nearer
// layer's, within the view's cut) and the listing lists it (lists).
func (s snapshot) shows(l *skillview.Layer, doc int, opts skillview.ListOptions, disabled map[string]bool) (*skillview.Ref, bool) {
	r := l.All[doc]
	if r.Nested {
		return nil, false
	}
	var v *skillview.Ref
	if l == s.v.Shared {
		// Most of a search's candidates: a folder of the layer under the
		// user's, looked up in the user's small layer alone.
		if own, ok := s.v.Own.Dir(r.Dir); ok {
			if v = own; !s.v.Kept(v) {
				return nil, false
			}
		} else if v = s.v.Shown(r); v == nil {
			return nil, false
		}
	} else {
		var ok bool
		if v, ok = s.v.Skill(r.Dir); !ok {
			return nil, false
		}
	}
	if v.Layer != r.Layer || v.SkillMD.Key != r.SkillMD.Key || v.SkillMD.ETag != r.SkillMD.ETag {
		return nil, false
	}
	return v, s.lists(v, opts, disabled)
}
