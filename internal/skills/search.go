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
	Score float64
}

// Field weights for BM25F: a word in the name says more than one in the
// description.
const (
	weightName     = 3.0
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

// Search ranks the caller's listed skills against a task description with
// BM25F over name, category, description and metadata, returning at most
// limit hits (0 means the configured default).
func (c *Catalog) Search(ctx context.Context, id mounts.Identity, query string, limit int32) ([]Scored, error) {
	if query == "" || len(query) > c.cfg.MaxQueryBytes {
		return nil, fmt.Errorf("%w: query must be 1..%d bytes", errkind.InvalidArgument, c.cfg.MaxQueryBytes)
	}
	n, err := limits.Count("limit", limit, c.cfg.DefaultSearchResults, c.cfg.MaxSearchResults)
	if err != nil {
		return nil, err
	}
	skills, err := c.Skills(ctx, id, ListOptions{})
	if err != nil {
		return nil, err
	}
	return Rank(skills, query, int(n)), nil
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
		add(s.Category, weightCategory)
		add(s.Description, weightDesc)
		for k, v := range s.Metadata {
			add(k+" "+v, weightMeta)
		}
		for t := range d.tf {
			df[t]++
		}
		docs[i] = d
		total += d.len
	}
	avg := total / float64(len(docs))
	n := float64(len(docs))
	var out []Scored
	for i, d := range docs {
		score := 0.0
		for _, t := range terms {
			tf := d.tf[t]
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.len/avg))
		}
		if score > 0 {
			out = append(out, Scored{Skill: skills[i], Score: score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
