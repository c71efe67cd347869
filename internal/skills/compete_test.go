package skills_test

import (
	"slices"
	"testing"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
)

// TestCompete: a candidate layered over the shared library at rank 0
// competes with its skills per query, its own live copy left out; a copy of
// a shared skill under another folder is its near-duplicate.
func TestCompete(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket newBucketFunc) {
		lib, _ := fixtureLibrary(t, newBucket, nil)
		ctx := t.Context()
		shared := layout.LibraryRef{Shared: true}
		raw := "---\nname: csv\ndescription: Read and write comma-separated values files, quoting fields that hold commas.\n---\n# CSV\n\nQuote fields that hold commas.\n"
		cand := search.Analyze(skillsearch.SearchDoc([]byte(raw), "data/csv", []string{"references/format.md"}))
		got, err := lib.Catalog.Compete(ctx, shared, &cand, "data/csv", []string{"comma-separated values", "spreadsheets with formulas and charts"}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Rank != 1 || !got[0].Top[0].Candidate {
			t.Fatalf("competition = %+v, want the candidate first for its own topic", got)
		}
		for _, c := range got[0].Top {
			if c.Dir == "data/csv" {
				t.Errorf("the live copy of the candidate competes: %+v", got[0].Top)
			}
		}
		if got[1].Rank == 1 || len(got[1].Top) == 0 || got[1].Top[0].Dir != "docs/xlsx" {
			t.Errorf("spreadsheets: %+v, want docs/xlsx first", got[1])
		}
		// Without its dir, the live copy is the candidate's near-duplicate:
		// collapsed into the candidate's hit, and reported.
		got, err = lib.Catalog.Compete(ctx, shared, &cand, "", []string{"comma-separated values"}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if top := got[0].Top[0]; !top.Candidate || !slices.Equal(top.Alternates, []string{"data/csv"}) {
			t.Errorf("top = %+v, want the candidate with data/csv as its alternate", top)
		}
		dups, err := lib.Catalog.NearDuplicates(ctx, shared, cand, "elsewhere/csv")
		if err != nil {
			t.Fatal(err)
		}
		if len(dups) != 1 || dups[0].Dir != "data/csv" {
			t.Errorf("near-duplicates = %+v, want data/csv", dups)
		}
		if dups, _ := lib.Catalog.NearDuplicates(ctx, shared, cand, "data/csv"); len(dups) != 0 {
			t.Errorf("near-duplicates = %+v, want none but its own live copy", dups)
		}
		if _, err := lib.Catalog.Compete(ctx, shared, nil, "", []string{"x"}, 0); err == nil {
			t.Error("k 0 accepted")
		}
	})
}
