package skills_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// catalog is a small, realistic set of skills to rank.
func catalog() []skills.Skill {
	mk := func(cat, name, desc string, meta map[string]string) skills.Skill {
		s := skillN(name, desc)
		s.Category, s.Dir, s.Path = cat, cat+"/"+name, "/skills/"+cat+"/"+name
		s.Metadata = meta
		return s
	}
	return []skills.Skill{
		mk("docs", "docx", "Create, edit and review Word documents with tracked changes and comments.", nil),
		mk("docs", "pdf", "Extract text and tables from PDF files, fill PDF forms, merge and split documents.", nil),
		mk("data", "xlsx", "Build spreadsheets with formulas, charts and pivot tables; read Excel files.", nil),
		mk("data", "csv-tools", "Helpers for tabular data exports.", nil),
		mk("data", "reports", "Summarize csv exports into weekly reports for the team.", nil),
		mk("dev", "git-helper", "Write commit messages, rebase branches and resolve merge conflicts.", map[string]string{"owner": "platform"}),
		mk("media", "image-resize", "Resize, crop and convert images to web formats.", nil),
	}
}

func names(hits []skills.Scored) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		limit int
		first string // "" when no hit is wanted
		want  []string
	}{
		{name: "pdf task", query: "extract text from pdf files", first: "pdf"},
		{name: "case is ignored", query: "EXTRACT Text From PDF", first: "pdf"},
		{name: "name match outweighs description match", query: "csv", first: "csv-tools", want: []string{"csv-tools", "reports"}},
		{name: "category counts", query: "media", first: "image-resize", want: []string{"image-resize"}},
		{name: "metadata counts", query: "platform", first: "git-helper", want: []string{"git-helper"}},
		{name: "spreadsheet task", query: "build spreadsheets with charts", first: "xlsx"},
		{name: "git task", query: "resolve a merge conflict in my branch", first: "git-helper"},
		{name: "limit", query: "files documents tables", limit: 2},
		{name: "stopwords only", query: "how to use the", first: ""},
		{name: "punctuation only", query: "?!. --", first: ""},
		{name: "empty query", query: "", first: ""},
		{name: "no skill shares a word", query: "kubernetes helm", first: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := skills.Rank(catalog(), tc.query, tc.limit)
			if tc.limit > 0 && len(hits) != tc.limit {
				t.Errorf("got %d hits %q, want limit %d", len(hits), names(hits), tc.limit)
			}
			if tc.first == "" && tc.limit == 0 {
				if hits != nil {
					t.Errorf("hits = %q, want nil", names(hits))
				}
				return
			}
			if len(hits) == 0 {
				t.Fatal("no hits")
			}
			if tc.first != "" && hits[0].Name != tc.first {
				t.Errorf("first hit = %s (hits %q), want %s", hits[0].Name, names(hits), tc.first)
			}
			if tc.want != nil && strings.Join(names(hits), ",") != strings.Join(tc.want, ",") {
				t.Errorf("hits = %q, want %q", names(hits), tc.want)
			}
			for i, h := range hits {
				if h.Score <= 0 {
					t.Errorf("hit %s has score %v", h.Name, h.Score)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("scores not descending: %s %v after %s %v", h.Name, h.Score, hits[i-1].Name, hits[i-1].Score)
				}
			}
		})
	}
}

// A word in the name weighs more than the same word in the description,
// all else being equal.
func TestRankNameWeight(t *testing.T) {
	list := []skills.Skill{
		skillN("notes", "Keep invoice records tidy."),
		skillN("invoice", "Keep notes records tidy."),
	}
	hits := skills.Rank(list, "invoice", 0)
	if len(hits) != 2 || hits[0].Name != "invoice" || !(hits[0].Score > hits[1].Score) {
		t.Fatalf("hits = %+v, want invoice strictly first", hits)
	}
}

func TestRankEmptyCatalog(t *testing.T) {
	if hits := skills.Rank(nil, "pdf", 5); hits != nil {
		t.Errorf("hits = %v, want nil", hits)
	}
}

func testSearch(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name  string
		id    mounts.Caller
		query string
		limit int32
		first string // Dir@Layer of the best hit; "" for no hits
	}{
		{"user skill", aliceID, "extract text from pdf files", 3, "docs/pdf@user"},
		{"shared skill", aliceID, "comma-separated values", 0, "data/csv@shared"},
		{"bob gets the shared pdf", bobID, "pdf", 0, "docs/pdf@shared"},
		{"overridden shared skill not found", aliceID, "SHARED overridden", 0, ""},
		{"invalid skill not found", aliceID, "broken frontmatter", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := hitsOf(lib.Catalog.Search(t.Context(), tc.id, skills.SearchOptions{Query: tc.query, Limit: tc.limit}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.first == "" {
				if len(hits) != 0 {
					t.Errorf("hits = %+v, want none", hits)
				}
				return
			}
			if len(hits) == 0 || hits[0].Dir+"@"+hits[0].Layer != tc.first {
				t.Fatalf("hits = %+v, want %s first", hits, tc.first)
			}
			if tc.limit > 0 && len(hits) > int(tc.limit) {
				t.Errorf("%d hits, limit %d", len(hits), tc.limit)
			}
			for i, h := range hits {
				if h.Score <= 0 || i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hit %d %s score %v out of order", i, h.Dir, h.Score)
				}
			}
		})
	}
}

// TestRankTags: tags, keywords and other lists in the frontmatter or its
// metadata are indexed, tags above the description.
func TestRankTags(t *testing.T) {
	withExtra := func(name, desc string, extra map[string]any, raw map[string]any) skills.Skill {
		s := skillN(name, desc)
		s.Extra, s.Raw = extra, raw
		return s
	}
	list := []skills.Skill{
		withExtra("ledger", "Keep the books.", map[string]any{"tags": []any{"invoice", "accounting"}}, nil),
		withExtra("mailer", "Send emails about an invoice.", nil, nil),
		withExtra("forms", "Fill forms.", map[string]any{"keywords": "paperwork, acroform"}, nil),
		withExtra("triage", "Sort tickets.", map[string]any{"triggers": []any{"incident", "outage"}, "model": "incident"}, nil),
		withExtra("deploy", "Ship releases.", nil, map[string]any{"metadata": map[string]any{"tags": []any{"kubernetes", "helm"}}}),
		withExtra("plain", "Nothing tagged.", map[string]any{"hooks": map[string]any{"pre": "secret-word"}}, nil),
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"invoice", []string{"ledger", "mailer"}}, // a tag outweighs a word of the description
		{"acroform", []string{"forms"}},           // keywords as a string
		{"outage", []string{"triage"}},            // any list-valued field
		{"helm", []string{"deploy"}},              // lists in metadata
		{"secret", nil},                           // maps are not indexed
	} {
		t.Run(tc.query, func(t *testing.T) {
			if got := names(skills.Rank(list, tc.query, 0)); !slices.Equal(got, tc.want) {
				t.Errorf("hits = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRankRelevance: relevance is the score over the most the query could
// score, so it is 0–1, falls with the score, and is lower when the query
// asks for more than a skill offers.
func TestRankRelevance(t *testing.T) {
	all := skills.Rank(catalog(), "extract tables pdf", 0)
	part := skills.Rank(catalog(), "extract tables pdf kubernetes helm", 0)
	if len(all) == 0 || len(part) == 0 || all[0].Name != "pdf" || part[0].Name != "pdf" {
		t.Fatalf("hits %q and %q, want pdf first", names(all), names(part))
	}
	for _, hits := range [][]skills.Scored{all, part} {
		for i, h := range hits {
			if h.Relevance <= 0 || h.Relevance > 1 || i > 0 && h.Relevance > hits[i-1].Relevance {
				t.Errorf("hit %s relevance %v (scores %v): want 0–1, falling", h.Name, h.Relevance, h.Score)
			}
		}
	}
	if !(part[0].Relevance < all[0].Relevance) {
		t.Errorf("relevance %v for a query half of which no skill matches, %v for one all matched", part[0].Relevance, all[0].Relevance)
	}
	if all[0].Relevance < 0.3 {
		t.Errorf("pdf matches every word of the query, relevance only %v", all[0].Relevance)
	}
}

// testSearchOptions: the category filter, the minimum relevance and their
// refusals, on a real library.
func testSearchOptions(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		opts skills.SearchOptions
		want []string // Dir@Layer, sorted
	}{
		{"no filter", skills.SearchOptions{Query: "documents files"}, []string{"data/csv@shared", "docs/docx@user", "docs/pdf@user"}},
		{"category", skills.SearchOptions{Query: "files documents", Category: "docs", FilterCategory: true}, []string{"docs/docx@user", "docs/pdf@user"}},
		{"flat only", skills.SearchOptions{Query: "code style lint", Category: "", FilterCategory: true}, []string{"lint@shared"}},
		{"category without a hit", skills.SearchOptions{Query: "pdf", Category: "data", FilterCategory: true}, nil},
		{"minimum cuts weak hits", skills.SearchOptions{Query: "pdf forms kubernetes helm terraform ansible", MinRelevance: 0.2}, nil},
		{"minimum keeps strong hits", skills.SearchOptions{Query: "pdf forms", MinRelevance: 0.2}, []string{"docs/pdf@user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := hitsOf(lib.Catalog.Search(ctx, aliceID, tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Dir+"@"+h.Layer)
				if h.Relevance < tc.opts.MinRelevance || h.Relevance > 1 {
					t.Errorf("%s relevance %v", h.Dir, h.Relevance)
				}
				if tc.opts.FilterCategory && h.Category != tc.opts.Category {
					t.Errorf("%s outside category %q", h.Dir, tc.opts.Category)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("hits = %q, want %q", got, tc.want)
			}
		})
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := lib.Catalog.Search(ctx, aliceID, skills.SearchOptions{Query: "pdf", MinRelevance: bad}); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("min relevance %v: %v, want InvalidArgument", bad, err)
		}
	}
}

// skillN returns a listed skill named name with description desc.
func skillN(name, desc string) skills.Skill {
	return skills.Skill{
		Path: "/skills/cat/" + name, Dir: "cat/" + name, Folder: name, Category: "cat",
		Frontmatter: skillmd.Frontmatter{Name: name, Description: desc},
	}
}

// hitsOf is the hits of a search.
func hitsOf(r skills.Results, err error) ([]skills.Scored, error) { return r.Hits, err }
