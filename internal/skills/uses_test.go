package skills_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// fixedUses are recent uses as a test sets them, per layer.
type fixedUses map[string]map[string]int64

func (u fixedUses) Recent(_ mounts.Caller, layer string) (map[string]int64, string) {
	return u[layer], fmt.Sprint(u[layer])
}

// TestUsesNeutralWithoutUse: with usage on and nothing used (what the
// selection benchmark measures: it activates nothing), every prompt block
// and search answers exactly as without usage; uses never reorder a
// query-aware block, nor search hits of distinct scores.
func TestUsesNeutralWithoutUse(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")
	lb := skillstest.New()
	for i := range 12 {
		lb.User("alice").Skill(fmt.Sprintf("own-%02d", i), "", fmt.Sprintf("Converts report %s into a chart.", words[i%4]), "body\n")
		lb.Shared().Skill(fmt.Sprintf("sh-%02d", i), "", fmt.Sprintf("Reads spreadsheet %s and report tables of %s.", words[i%3], words[(i+5)%12]), "body\n")
	}
	bucket := lb.Bucket(t)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	answers := func(u skillview.Uses) []string {
		lib := skillstest.Library(t, bucket, nil)
		t.Cleanup(lib.Close)
		if u != nil {
			lib.Catalog.UseUsage(u)
		}
		var out []string
		for _, f := range []skillmd.FormatOptions{{}, {GroupByCategory: true}, {MaxSkills: 5}, {Query: "report chart"}, {Query: "spreadsheet tables", MaxSkills: 3}} {
			b, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b.Text)
		}
		for _, q := range []string{"report", "chart", "spreadsheet report tables", "converts"} {
			res, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: q, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				out = append(out, fmt.Sprint(q, h.Skill.Path, h.Score, h.Relevance, h.Alternates))
			}
		}
		return out
	}
	want := answers(nil)
	if got := answers(fixedUses{}); !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("usage on, nothing used: answer %d\n%s\nwant (usage off)\n%s", i, got[i], want[i])
			}
		}
	}
	used := answers(fixedUses{skillview.LayerUser: {"own-11": 9}, skillview.LayerShared: {"sh-07": 4}})
	for i, k := range []int{3, 4} { // the query-aware blocks
		if used[k] != want[k] {
			t.Errorf("query-aware block %d reordered by use:\n%s\nwant\n%s", i, used[k], want[k])
		}
	}
	if used[0] == want[0] {
		t.Error("the block without a query ignored use")
	}
}
