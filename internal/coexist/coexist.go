package coexist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Competitors is what the coexistence check needs of the catalog's search:
// the target library as it would be with a candidate folder in it, in
// place of whatever that folder holds now.
type Competitors interface {
	// Compete runs each query against library l with cand in it and
	// returns each query's first k skills, best first (near-duplicates not
	// collapsed), and the library's skills cand near-duplicates.
	Compete(ctx context.Context, l layout.LibraryRef, cand Candidate, queries []string, k int) (Competition, error)
}

// Candidate is a folder about to be published.
type Candidate struct {
	Dir   string // "<category>/<name>" or "<name>", as the library lists it
	Files []skillmd.File
}

// Competition is what Compete found.
type Competition struct {
	Top        [][]Rival // per query
	Duplicates []Rival
}

// Rival is one skill of the library (or, Self, the candidate).
type Rival struct {
	Dir, Name string
	Self      bool
	Relevance float64 // for the query, 0..1
}

// RuleCoexistence: the skill competes with another of the library for the
// same requests. Never an error: a reviewer weighs it.
const RuleCoexistence = "coexistence"

// nearlyAsWell is how close (a share of the skill's own relevance) another
// skill ranked second for the skill's description must come to compete.
const nearlyAsWell = 0.9

// maxRivalProblems bounds the coexistence warnings of one publish.
const maxRivalProblems = 8

// TriggerEval is one query of the folder's eval_queries.json run against
// the library with the folder in it.
type TriggerEval struct {
	skillmd.EvalQuery
	Rank int   // 1 first; 0 not in the first skillmd.EvalDepth
	Top  Rival // the first result, when it is another skill
}

// Check is the coexistence check of a publish: the catalog's search and
// how long it may take.
type Check struct {
	Search  Competitors   // nil: no check
	Timeout time.Duration // --library.coexistence-timeout; 0: no check
	Log     *slog.Logger
}

// Run checks the valid folder cand (the skill name) against the library
// l: which skills its description or its should-trigger eval queries
// retrieve first, and which it near-duplicates, as warnings; and its eval
// queries' ranks. It never fails a publish: a check that cannot run is a
// warning.
func (c Check) Run(ctx context.Context, l layout.LibraryRef, name string, cand Candidate) ([]skillmd.Problem, []TriggerEval) {
	if c.Search == nil || c.Timeout <= 0 {
		return nil, nil
	}
	var md, evalData []byte
	hasEvals := false
	for _, f := range cand.Files {
		switch f.Path {
		case skillmd.SkillFile:
			md = f.Data
		case skillmd.EvalQueriesFile:
			evalData, hasEvals = f.Data, true
		}
	}
	fm, _, _ := skillmd.ParseSkillMDBody(md, name)
	var evals []skillmd.EvalQuery
	if hasEvals {
		evals, _ = skillmd.ParseEvalQueries(evalData) // its problems are CheckFolder's
	}
	// The first query is the skill's description, the text a router
	// chooses by, as a request: one that finds another skill first says
	// the two answer the same requests. (Its name is left out: a word only
	// it has would find it whatever the rest says.) Then the evals, at
	// most MaxEvalQueries.
	first := strings.TrimSpace(fm.Description)
	if first == "" {
		first = strings.ReplaceAll(name, "-", " ")
	}
	queries := make([]string, 0, 1+len(evals))
	queries = append(queries, clipQuery(first))
	for _, e := range evals {
		queries = append(queries, e.Query)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	comp, err := c.Search.Compete(ctx, l, cand, queries, skillmd.EvalDepth)
	if err == nil && len(comp.Top) != len(queries) {
		err = fmt.Errorf("the search answered %d of %d queries", len(comp.Top), len(queries))
	}
	if err != nil {
		why := "the search failed"
		if errors.Is(err, context.DeadlineExceeded) {
			why = fmt.Sprintf("it took over %v (--library.coexistence-timeout)", c.Timeout)
		}
		c.Log.Warn("coexistence check failed", "library", fmt.Sprintf("%+v", l), "skill", cand.Dir, "err", err)
		return []skillmd.Problem{{Severity: skillmd.SeverityWarning, Rule: RuleCoexistence,
			Message: "the coexistence check could not run (" + why + "); the skill was not compared with the library's others"}}, nil
	}
	rivals := rivalSet{}
	switch top := comp.Top[0]; {
	case len(top) > 0 && !top[0].Self:
		rivals.add(top[0]).description = true
	case len(top) > 1 && !top[1].Self && top[0].Relevance > 0 && top[1].Relevance >= nearlyAsWell*top[0].Relevance:
		// First by a hair is no guarantee: a router could pick either.
		rivals.add(top[1]).close = true
	}
	out := make([]TriggerEval, len(evals))
	for i, e := range evals {
		te := TriggerEval{EvalQuery: e}
		top := comp.Top[i+1]
		for r, h := range top {
			if h.Self {
				te.Rank = r + 1
				break
			}
		}
		if len(top) > 0 && !top[0].Self {
			te.Top = top[0]
			if e.ShouldTrigger {
				r := rivals.add(top[0])
				r.queries++
				if r.example == "" {
					r.example = e.Query
				}
			}
		}
		out[i] = te
	}
	for _, d := range comp.Duplicates {
		if !d.Self {
			rivals.add(d).duplicate = true
		}
	}
	return rivals.problems(), out
}

// clipQuery keeps a query within the search's bound, on a rune boundary.
func clipQuery(q string) string {
	if len(q) <= skillmd.MaxEvalQueryBytes {
		return q
	}
	q = q[:skillmd.MaxEvalQueryBytes]
	return strings.ToValidUTF8(q, "")
}

// rival is what one competing skill did.
type rival struct {
	Rival
	// description: the description retrieves it first; close: second,
	// nearly as relevant as the skill itself.
	description, close, duplicate bool
	queries                       int
	example                       string
}

// rivalSet keeps the rivals in the order found.
type rivalSet struct {
	list []*rival
}

func (s *rivalSet) add(r Rival) *rival {
	for _, x := range s.list {
		if x.Dir == r.Dir {
			return x
		}
	}
	x := &rival{Rival: r}
	s.list = append(s.list, x)
	return x
}

// problems words one warning per rival, at most maxRivalProblems.
func (s *rivalSet) problems() []skillmd.Problem {
	var out []skillmd.Problem
	for i, r := range s.list {
		if i == maxRivalProblems {
			out = append(out, skillmd.Problem{Severity: skillmd.SeverityWarning, Rule: RuleCoexistence, Value: fmt.Sprint(len(s.list) - i),
				Message: fmt.Sprintf("it competes with %d more skills of the library", len(s.list)-i)})
			break
		}
		var why []string
		if r.duplicate {
			why = append(why, "it nearly duplicates it")
		}
		if r.description {
			why = append(why, "its description retrieves that skill first")
		}
		if r.close {
			why = append(why, "its description retrieves that skill nearly as well as this one")
		}
		if r.queries > 0 {
			verb := "retrieve"
			if r.queries == 1 {
				verb = "retrieves"
			}
			why = append(why, fmt.Sprintf("%d of its eval queries that should trigger it %s that skill first (e.g. %q)", r.queries, verb, clipRunes(r.example, 80)))
		}
		out = append(out, skillmd.Problem{Severity: skillmd.SeverityWarning, Rule: RuleCoexistence, Value: r.Dir,
			Message: fmt.Sprintf("competes with skill %s (%s): %s", r.Name, r.Dir, strings.Join(why, "; "))})
	}
	return out
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
