package library_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/coexist"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// scripted is a Competitors answering each query from a table (query →
// dirs, "" the candidate itself), and recording what it was asked.
type scripted struct {
	mu      sync.Mutex
	top     map[string][]string
	dups    []string
	err     error
	block   bool // until the check's deadline
	asked   []string
	library layout.LibraryRef
	dir     string
}

func (s *scripted) Compete(ctx context.Context, l layout.LibraryRef, c coexist.Candidate, queries []string, k int) (coexist.Competition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked, s.library, s.dir = queries, l, c.Dir
	if s.block {
		<-ctx.Done()
		return coexist.Competition{}, ctx.Err()
	}
	if s.err != nil {
		return coexist.Competition{}, s.err
	}
	rival := func(d string) coexist.Rival {
		if d == "" {
			return coexist.Rival{Dir: c.Dir, Name: c.Dir, Self: true}
		}
		return coexist.Rival{Dir: d, Name: d[strings.LastIndex(d, "/")+1:]}
	}
	var out coexist.Competition
	for _, q := range queries {
		var hits []coexist.Rival
		for i, d := range s.top[q] {
			// Relevance falls a fifth a place, or is written after "@".
			rel := 1 - 0.2*float64(i)
			if d, r, ok := strings.Cut(d, "@"); ok {
				h := rival(d)
				h.Relevance, _ = strconv.ParseFloat(r, 64)
				hits = append(hits, h)
				continue
			}
			h := rival(d)
			h.Relevance = rel
			hits = append(hits, h)
		}
		if len(hits) > k {
			hits = hits[:k]
		}
		out.Top = append(out.Top, hits)
	}
	for _, d := range s.dups {
		out.Duplicates = append(out.Duplicates, rival(d))
	}
	return out, nil
}

func coexistEnv(t *testing.T, c coexist.Competitors, tune func(*library.Config)) env {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	lib := skillstest.Library(t, b, skillstest.Indexed(time.Hour))
	t.Cleanup(lib.Close)
	cfg := library.DefaultConfig()
	if tune != nil {
		tune(&cfg)
	}
	if err := cfg.Validate(mounts.Default(), skills.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	pub := library.New(b, lib.Catalog, cfg, cache.NewLRU(1<<20), library.WithCompetitors(c))
	t.Cleanup(pub.Close)
	return env{bucket: b, lib: lib, pub: pub}
}

func coexistence(ps []skillmd.Problem) []skillmd.Problem {
	var out []skillmd.Problem
	for _, p := range ps {
		if p.Rule == coexist.RuleCoexistence {
			if p.Severity != skillmd.SeverityWarning {
				panic("a coexistence problem is never an error")
			}
			out = append(out, p)
		}
	}
	return out
}

const evalsJSON = `[{"query":"fill in a pdf form","should_trigger":true},{"query":"merge two pdfs","should_trigger":true},{"query":"write a haiku","should_trigger":false}]`

// TestCoexistenceWarnings: a publish names, as warnings, the skills its
// description or should-trigger eval queries retrieve first and those it
// near-duplicates; its eval queries come back ranked; a distinct skill
// gets none; the check asks about the target library with the folder's
// own path.
func TestCoexistenceWarnings(t *testing.T) {
	desc := "Fill PDF forms."
	for _, tc := range []struct {
		name   string
		top    map[string][]string
		dups   []string
		want   []string // in the warnings' messages, one per warning
		values []string
	}{
		{"distinct", map[string][]string{desc: {"", "docx"}, "fill in a pdf form": {""}, "merge two pdfs": {"", "pdf"}, "write a haiku": {"poems"}}, nil, nil, nil},
		{"description", map[string][]string{desc: {"docs/pdf", ""}, "fill in a pdf form": {""}}, nil,
			[]string{"competes with skill pdf (docs/pdf): its description retrieves that skill first"}, []string{"docs/pdf"}},
		{"eval queries", map[string][]string{desc: {""}, "fill in a pdf form": {"docs/pdf", ""}, "merge two pdfs": {"docs/pdf"}, "write a haiku": {"poems"}}, nil,
			[]string{`2 of its eval queries that should trigger it retrieve that skill first (e.g. "fill in a pdf form")`}, []string{"docs/pdf"}},
		{"near-duplicate", map[string][]string{desc: {"", "docs/pdf"}}, []string{"docs/pdf", ""},
			[]string{"competes with skill pdf (docs/pdf): it nearly duplicates it"}, []string{"docs/pdf"}},
		{"close second", map[string][]string{desc: {"", "docs/pdf@0.95"}, "fill in a pdf form": {""}}, nil,
			[]string{"competes with skill pdf (docs/pdf): its description retrieves that skill nearly as well as this one"}, []string{"docs/pdf"}},
		{"two rivals", map[string][]string{desc: {"docx", ""}, "merge two pdfs": {"docs/pdf"}}, []string{"docx"},
			[]string{"docx (docx): it nearly duplicates it; its description retrieves", "pdf (docs/pdf): 1 of its eval queries"}, []string{"docx", "docs/pdf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{top: tc.top, dups: tc.dups}
			e := coexistEnv(t, s, nil)
			for _, validateOnly := range []bool{true, false} {
				res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Category: "x", Name: "pdf-forms", ValidateOnly: validateOnly,
					Files: folder("pdf-forms", "Fill PDF forms.", "eval_queries.json", evalsJSON)})
				if err != nil || !res.Valid {
					t.Fatalf("validate_only %v: %+v, %v", validateOnly, res, err)
				}
				if s.library != (layout.LibraryRef{User: "alice"}) || s.dir != "x/pdf-forms" || len(s.asked) != 4 || s.asked[0] != desc {
					t.Fatalf("asked about %+v %q: %q", s.library, s.dir, s.asked)
				}
				got := coexistence(res.Problems)
				if len(got) != len(tc.want) {
					t.Fatalf("validate_only %v: warnings %+v, want %q", validateOnly, got, tc.want)
				}
				for i, w := range tc.want {
					if !strings.Contains(got[i].Message, w) || got[i].Value != tc.values[i] {
						t.Errorf("warning %d = %+v, want %q", i, got[i], w)
					}
				}
				if len(res.Evals) != 3 || res.Evals[2].ShouldTrigger || res.Evals[2].Query != "write a haiku" {
					t.Fatalf("evals %+v", res.Evals)
				}
				// The stored version keeps what the reviewer should see.
				if !validateOnly && len(res.Version.Problems) != len(tc.want) {
					t.Fatalf("version problems %+v", res.Version.Problems)
				}
			}
		})
	}
	t.Run("ranks", func(t *testing.T) {
		s := &scripted{top: map[string][]string{desc: {""}, "fill in a pdf form": {"docs/pdf", "a", ""}, "merge two pdfs": {""}, "write a haiku": {"poems", ""}}}
		e := coexistEnv(t, s, nil)
		res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Category: "x", Name: "pdf-forms", ValidateOnly: true,
			Files: folder("pdf-forms", "Fill PDF forms.", "eval_queries.json", evalsJSON)})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []struct {
			rank int
			top  string
		}{{3, "docs/pdf"}, {1, ""}, {2, "poems"}} {
			if got := res.Evals[i]; got.Rank != want.rank || got.Top.Dir != want.top {
				t.Errorf("eval %d = %+v, want rank %d top %q", i, got, want.rank, want.top)
			}
		}
	})
}

// TestCoexistenceNeverFails: a search that fails or overruns
// --library.coexistence-timeout leaves a warning, and the publish goes
// through; a folder without eval_queries.json asks one query; a malformed
// one is a warning and runs none.
func TestCoexistenceNeverFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *scripted
		want string
	}{
		{"error", &scripted{err: errors.New("boom")}, "could not run (the search failed)"},
		{"timeout", &scripted{block: true}, "could not run (it took over 1ms (--library.coexistence-timeout))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := coexistEnv(t, tc.s, func(c *library.Config) { c.CoexistenceTimeout = time.Millisecond })
			res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "Fill PDF forms.")})
			if err != nil {
				t.Fatal(err)
			}
			got := coexistence(res.Problems)
			if len(got) != 1 || !strings.Contains(got[0].Message, tc.want) {
				t.Fatalf("warnings %+v", got)
			}
			if e.listed(t, "alice")["pdf@user"] != res.Version.ID {
				t.Fatal("the publish did not go live")
			}
		})
	}
	t.Run("malformed evals", func(t *testing.T) {
		s := &scripted{}
		e := coexistEnv(t, s, nil)
		res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "Fill PDF forms.", "eval_queries.json", `{"query":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || res.Problems[0].Rule != skillmd.RuleEvalQueries || len(s.asked) != 1 || len(res.Evals) != 0 {
			t.Fatalf("problems %+v, asked %q, evals %+v", res.Problems, s.asked, res.Evals)
		}
	})
	t.Run("off", func(t *testing.T) {
		s := &scripted{err: errors.New("never asked")}
		e := coexistEnv(t, s, func(c *library.Config) { c.CoexistenceTimeout = 0 })
		res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "Fill PDF forms.")})
		if err != nil || len(res.Problems) != 0 || s.asked != nil {
			t.Fatalf("%+v, %v, asked %q", res, err, s.asked)
		}
	})
	t.Run("invalid folder", func(t *testing.T) {
		s := &scripted{}
		e := coexistEnv(t, s, nil)
		res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "pdf", ValidateOnly: true, Files: folder("docx", "Wrong name.")})
		if err != nil || res.Valid || s.asked != nil {
			t.Fatalf("%+v, %v, asked %q", res, err, s.asked)
		}
	})
}

// TestCoexistenceForReviewers: under review, the proposal keeps its
// warnings, and the admin listing the skill's versions sees them.
func TestCoexistenceForReviewers(t *testing.T) {
	s := &scripted{top: map[string][]string{"Fill PDF forms.": {"pdf", ""}}}
	e := coexistEnv(t, s, func(c *library.Config) { c.Review = true })
	res, err := e.pub.Publish(t.Context(), bob, library.PublishRequest{Library: shared, Name: "pdf-forms", Files: folder("pdf-forms", "Fill PDF forms.")})
	if err != nil || !res.Pending {
		t.Fatalf("%+v, %v", res, err)
	}
	if s.library != shared {
		t.Fatalf("checked against %+v", s.library)
	}
	page, err := e.pub.ListVersions(t.Context(), admin, library.ListRequest{Library: shared, Name: "pdf-forms"})
	if err != nil || len(page.Versions) != 1 {
		t.Fatalf("%+v, %v", page, err)
	}
	ps := page.Versions[0].Problems
	if len(ps) != 1 || ps[0].Rule != coexist.RuleCoexistence || !strings.Contains(ps[0].Message, "competes with skill pdf (pdf)") {
		t.Fatalf("the reviewer sees %+v", ps)
	}
	v, _, err := e.pub.GetVersion(t.Context(), admin, shared, "pdf-forms", res.Version.ID)
	if err != nil || len(v.Problems) != 1 {
		t.Fatalf("GetVersion: %+v, %v", v.Problems, err)
	}
}
