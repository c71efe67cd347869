package skills

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillview"
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
	reg := prometheus.NewRegistry()
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler), WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	type held struct {
		gen uint64
		x   *search.Index
	}
	search := func() held {
		t.Helper()
		if _, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "reconcile the ledger"}); err != nil {
			t.Fatal(err)
		}
		l, ok := lib.Catalog.views.Shared.Get(cfg.SharedPrefix)
		if !ok {
			t.Fatal("no layer held for the shared library")
		}
		li, ok := lib.Catalog.searchIx.Held(skillview.LayerShared, l)
		if !ok {
			t.Fatal("no search index held for the shared library")
		}
		return held{l.Generation, li.Lexical()}
	}
	count := func(source string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "skillsvc_search_analyses_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "source" && lp.GetValue() == source {
						return m.GetCounter().GetValue()
					}
				}
			}
		}
		t.Fatalf("no skillsvc_search_analyses_total{source=%q}", source)
		return 0
	}
	const analysisKept, analysisReused = "kept", "reused" // skillsearch's sources
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
