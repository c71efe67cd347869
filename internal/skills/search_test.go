package skills_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

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
			hits, err := hitsOf(lib.Catalog.Search(t.Context(), tc.id, skillview.SearchOptions{Query: tc.query, Limit: tc.limit}))
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

// testSearchOptions: the category filter, the minimum relevance and their
// refusals, on a real library.
func testSearchOptions(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		opts skillview.SearchOptions
		want []string // Dir@Layer, sorted
	}{
		{"no filter", skillview.SearchOptions{Query: "documents files"}, []string{"data/csv@shared", "docs/docx@user", "docs/pdf@user"}},
		{"category", skillview.SearchOptions{Query: "files documents", Category: "docs", FilterCategory: true}, []string{"docs/docx@user", "docs/pdf@user"}},
		{"flat only", skillview.SearchOptions{Query: "code style lint", Category: "", FilterCategory: true}, []string{"lint@shared"}},
		{"category without a hit", skillview.SearchOptions{Query: "pdf", Category: "data", FilterCategory: true}, nil},
		{"minimum cuts weak hits", skillview.SearchOptions{Query: "pdf forms kubernetes helm terraform ansible", MinRelevance: 0.5}, nil},
		{"minimum keeps strong hits", skillview.SearchOptions{Query: "pdf forms", MinRelevance: 0.5}, []string{"docs/pdf@user"}},
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
		if _, err := lib.Catalog.Search(ctx, aliceID, skillview.SearchOptions{Query: "pdf", MinRelevance: bad}); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("min relevance %v: %v, want InvalidArgument", bad, err)
		}
	}
}

// skillN returns a listed skill named name with description desc.
func skillN(name, desc string) skillview.Skill {
	return skillview.Skill{
		Path: "/skills/cat/" + name, Dir: "cat/" + name, Folder: name, Category: "cat",
		Frontmatter: skillmd.Frontmatter{Name: name, Description: desc},
	}
}

// hitsOf is the hits of a search.
func hitsOf(r skillview.Results, err error) ([]skillview.Scored, error) { return r.Hits, err }
