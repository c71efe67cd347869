package skills

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Scored is a search hit.
type Scored struct {
	Skill
	// Score is the BM25F score: comparable within one search only.
	Score float64
	// Relevance is Score over the most any skill could score for the
	// query (every query word, weighted by how rare it is in the library,
	// matched as strongly as BM25 counts), 0–1: comparable across
	// searches, so a caller can cut off weak hits.
	Relevance float64
}

// Field weights for BM25F: a word in the name says more than one in the
// description.
const (
	weightName     = 3.0
	weightTags     = 2.0
	weightCategory = 1.5
	weightDesc     = 1.0
	weightMeta     = 0.5
	bm25K1         = 1.2
	bm25B          = 0.75
)

// tokenize splits text into lower-case words, folding plurals ("files",
// "spreadsheets") onto their singular so a task and a description meet.
func tokenize(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range words {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
			words[i] = w[:len(w)-1]
		}
	}
	return words
}

// stopwords carry no signal in task descriptions.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true, "for": true,
	"from": true, "how": true, "i": true, "in": true, "is": true, "it": true, "me": true, "my": true, "of": true,
	"on": true, "or": true, "please": true, "that": true, "the": true, "this": true, "to": true, "use": true,
	"when": true, "with": true, "you": true, "your": true,
}

// SearchOptions select what Search ranks and returns.
type SearchOptions struct {
	Query string // a task description
	Limit int32  // 0 means the configured default
	// Category limits the search to one category ("" is flat skills)
	// when FilterCategory is set.
	Category       string
	FilterCategory bool
	// MinRelevance drops hits below it, 0–1.
	MinRelevance float64
}

// Results are a search's hits, best first, and the digest of the library
// searched (as Page.LibraryDigest).
type Results struct {
	Hits          []Scored
	LibraryDigest string
}

// Search ranks the caller's listed skills against a task description with
// BM25F over name, display name, tags, category, description and metadata.
func (c *Catalog) Search(ctx context.Context, id mounts.Caller, opts SearchOptions) (Results, error) {
	opts, err := c.searchOptions(opts)
	if err != nil {
		return Results{}, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return Results{}, err
	}
	return c.search(s, opts), nil
}

// searchOptions checks opts and applies the default limit.
func (c *Catalog) searchOptions(opts SearchOptions) (SearchOptions, error) {
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
func (c *Catalog) search(s snapshot, opts SearchOptions) Results {
	hits := Rank(c.list(s, ListOptions{Category: opts.Category, FilterCategory: opts.FilterCategory}), opts.Query, int(opts.Limit))
	// Relevance falls with the score, so the weak hits are at the end.
	cut := sort.Search(len(hits), func(i int) bool { return hits[i].Relevance < opts.MinRelevance })
	return Results{Hits: hits[:cut], LibraryDigest: s.digest()}
}

// tagFields are frontmatter fields whose words label a skill: worth more
// than its description, as an author chose them to be found by.
var tagFields = map[string]bool{"tags": true, "keywords": true}

// labels calls add with the text of a frontmatter value that is a string
// or a list of scalars; maps and nested lists are not indexed.
func labels(v any, add func(string)) {
	switch x := v.(type) {
	case string:
		add(x)
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, float64, bool:
				add(fmt.Sprint(e))
			}
		}
	}
}

// Rank scores skills against query; only skills sharing a term are returned.
func Rank(skills []Skill, query string, limit int) []Scored {
	var terms []string
	seen := map[string]bool{}
	for _, t := range tokenize(query) {
		if !stopwords[t] && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 || len(skills) == 0 {
		return nil
	}
	type doc struct {
		tf  map[string]float64
		len float64
	}
	docs := make([]doc, len(skills))
	df := map[string]int{}
	var total float64
	for i, s := range skills {
		d := doc{tf: map[string]float64{}}
		add := func(text string, w float64) {
			for _, t := range tokenize(text) {
				d.tf[t] += w
				d.len += w
			}
		}
		add(s.Name, weightName)
		add(s.DisplayName, weightName)
		add(s.Category, weightCategory)
		add(s.Description, weightDesc)
		for k, v := range s.Metadata {
			add(k+" "+v, weightMeta)
		}
		// Lists in the frontmatter (tags, keywords, triggers, …) and in
		// metadata, which Metadata leaves out for not being text.
		for k, v := range s.Extra {
			w := weightMeta
			if tagFields[k] {
				w = weightTags
			}
			if _, isList := v.([]any); isList || tagFields[k] {
				labels(v, func(t string) { add(t, w) })
			}
		}
		if meta, ok := s.Raw["metadata"].(map[string]any); ok {
			for k, v := range meta {
				w := weightMeta
				if tagFields[k] {
					w = weightTags
				}
				if _, isList := v.([]any); isList {
					labels(v, func(t string) { add(t, w) })
				}
			}
		}
		for t := range d.tf {
			df[t]++
		}
		docs[i] = d
		total += d.len
	}
	avg := total / float64(len(docs))
	n := float64(len(docs))
	idf := make([]float64, len(terms))
	best := 0.0 // a term's score tends to idf·(k1+1) as its frequency grows
	for j, t := range terms {
		idf[j] = math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
		best += idf[j] * (bm25K1 + 1)
	}
	var out []Scored
	for i, d := range docs {
		score := 0.0
		for j, t := range terms {
			tf := d.tf[t]
			if tf == 0 {
				continue
			}
			score += idf[j] * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.len/avg))
		}
		if score > 0 {
			out = append(out, Scored{Skill: skills[i], Score: score, Relevance: min(score/best, 1)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
