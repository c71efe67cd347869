package skillsearch

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// fakeLayer is a layer of folders, as the catalog hands one in.
type fakeLayer struct {
	gen uint64
	fs  []Folder
}

func (l fakeLayer) Gen() uint64         { return l.gen }
func (l fakeLayer) Len() int            { return len(l.fs) }
func (l fakeLayer) Folder(i int) Folder { return l.fs[i] }

// TestIndexReusesUnchangedSkills: a new generation of a layer with the
// same skill versions serves the index it had (none analyzed again); one
// with a changed skill rebuilds it, taking the others' documents from the
// index before and analyzing the changed one alone; a nested folder is an
// empty document, never read.
func TestIndexReusesUnchangedSkills(t *testing.T) {
	b := memory.New()
	const n = 6
	layer := func(gen uint64) fakeLayer {
		t.Helper()
		l := fakeLayer{gen: gen}
		for i := range n {
			key := fmt.Sprintf("lib/s%d/SKILL.md", i)
			rc, attrs, err := b.GetRange(t.Context(), key, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			rc.Close()
			l.fs = append(l.fs, Folder{
				Dir: fmt.Sprintf("s%d", i), Layer: "shared", Name: fmt.Sprintf("s%d", i), Key: key, ETag: attrs.ETag,
				Files: slices.Values([]string{fmt.Sprintf("s%d/SKILL.md", i)}),
			})
		}
		l.fs = append(l.fs, Folder{Nested: true, Dir: "a/b/c", Layer: "shared", Key: "lib/a/b/c/SKILL.md"})
		return l
	}
	write := func(i int, body string) {
		t.Helper()
		data := fmt.Sprintf("---\nname: s%d\ndescription: Skill %d.\n---\n%s\n", i, i, body)
		if _, err := b.Put(t.Context(), fmt.Sprintf("lib/s%d/SKILL.md", i), strings.NewReader(data), int64(len(data)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		write(i, "Reconcile the ledger.")
	}
	si := New(b, cache.NewHeld(64<<20, cache.NewHeldMetrics()), Config{BodyBytes: 64 << 10, BodyReads: 4}, slog.New(slog.DiscardHandler), nil)
	count := func(source string) float64 { return testutil.ToFloat64(si.metrics.analyses.WithLabelValues(source)) }

	first, err := si.Of(t.Context(), "shared", layer(1))
	if err != nil {
		t.Fatal(err)
	}
	if count(analysisAnalyzed) != n || first.x.Len() != n+1 {
		t.Fatalf("first build: %v analyzed, %d documents; want %d analyzed, %d documents", count(analysisAnalyzed), first.x.Len(), n, n+1)
	}
	second, err := si.Of(t.Context(), "shared", layer(2))
	if err != nil {
		t.Fatal(err)
	}
	if second.x != first.x || count(analysisKept) != n || count(analysisAnalyzed) != n {
		t.Errorf("same skills, new generation: index kept %v, %v kept, %v analyzed; want the same index, %d kept, %d analyzed",
			second.x == first.x, count(analysisKept), count(analysisAnalyzed), n, n)
	}
	write(3, "Close the month.")
	third, err := si.Of(t.Context(), "shared", layer(3))
	if err != nil {
		t.Fatal(err)
	}
	if third.x == second.x || count(analysisReused) != n-1 || count(analysisAnalyzed) != n+1 {
		t.Errorf("a changed skill: index rebuilt %v, %v reused, %v analyzed; want rebuilt, %d reused, %d analyzed",
			third.x != second.x, count(analysisReused), count(analysisAnalyzed), n-1, n+1)
	}
	if held, ok := si.Held("shared", layer(3)); !ok || held != third {
		t.Error("the third generation's index is not the one held")
	}
}
