package skills

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// TestSearchIndexKeptAcrossSameGenerations: a library's new generation
// with the same skills (a file outside every skill changed, as when a
// fresh replica's digests arrive) serves the index it had, rather than a
// rebuild that every search of a large library would wait for; a changed
// skill still rebuilds it.
func TestSearchIndexKeptAcrossSameGenerations(t *testing.T) {
	b := memory.New()
	const n = 12
	for i := range n {
		put(t, b, fmt.Sprintf("_shared/skills/s%02d/SKILL.md", i),
			fmt.Sprintf("---\nname: s%02d\ndescription: Skill %d of the organization.\n---\n# Steps\n\nReconcile the ledger.\n", i, i))
	}
	cfg := DefaultConfig()
	cfg.IndexRefresh = 0 // every call lists afresh: a change is a new generation at once
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	search := func() *layerIndex {
		t.Helper()
		if _, err := lib.Catalog.Search(t.Context(), alice, SearchOptions{Query: "reconcile the ledger"}); err != nil {
			t.Fatal(err)
		}
		li, ok := lib.Catalog.searchIx.shelf.Get(LayerShared)
		if !ok {
			t.Fatal("no search index held for the shared library")
		}
		return li
	}
	count := func(source string) float64 {
		return testutil.ToFloat64(lib.Catalog.searchIx.metrics.analyses.WithLabelValues(source))
	}
	first := search()
	put(t, b, "_shared/skills/README.md", "Our skills.\n") // outside every skill
	second := search()
	if second.gen == first.gen {
		t.Fatal("the library's generation did not change: the test changes nothing")
	}
	if second.x != first.x || count(analysisKept) != n || count(analysisReused) != 0 {
		t.Errorf("same skills, new generation: index kept %v, %v kept, %v reused; want the same index, %d kept",
			second.x == first.x, count(analysisKept), count(analysisReused), n)
	}
	put(t, b, "_shared/skills/s03/SKILL.md", "---\nname: s03\ndescription: Close the books.\n---\nClose the month.\n")
	if third := search(); third.x == second.x || count(analysisReused) != n-1 {
		t.Errorf("a changed skill: index rebuilt %v, %v reused, want rebuilt, %d reused", third.x != second.x, count(analysisReused), n-1)
	}
}
