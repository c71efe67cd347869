package skills_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// TestTeamLayers: a caller reads the libraries of its teams, and no
// others, between the shared library and its own, with precedence user >
// team > organization by name; two teams serving one name are both
// listed, the name referring to the team first by ID; every entry that
// hides another says which and where.
func TestTeamLayers(t *testing.T) {
	b := skillstest.New()
	b.Shared().Skill("contracts", "", "org contracts", "x").Skill("lint", "", "org lint", "x").Skill("style", "", "org style", "x")
	b.Team("legal").Skill("nda", "", "legal nda", "x").Skill("legal-contracts", "contracts", "legal contracts", "x").Skill("review", "", "legal review", "x")
	b.Team("eng").Skill("deploy", "", "eng deploy", "x").Skill("eng-review", "review", "eng review", "x").Skill("lint", "", "eng lint", "x")
	b.User("alice").Skill("my-nda", "nda", "alice nda", "x")
	bucket := memory.New()
	b.Put(t, bucket)
	lib := skillstest.Library(t, bucket, nil)
	cat := lib.Catalog
	table := mounts.Default()
	as := func(user, teams string) mounts.Caller {
		return table.MustIdentify(mounts.Identity{User: user, Thread: "t1", Teams: teams})
	}
	list := func(c mounts.Caller) map[string]skills.Skill {
		t.Helper()
		l, err := cat.Skills(t.Context(), c, skills.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]skills.Skill{}
		for _, s := range l {
			out[s.Dir+"@"+s.Layer] = s
		}
		return out
	}
	keys := func(m map[string]skills.Skill) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	warned := func(s skills.Skill, sub string) bool {
		return slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, sub) })
	}

	// No teams: the shared library under the user's, as before.
	if got, want := keys(list(as("bob", ""))), []string{"contracts@shared", "lint@shared", "style@shared"}; !slices.Equal(got, want) {
		t.Errorf("bob without teams lists %q, want %q", got, want)
	}
	// bob in legal: legal's contracts hides the shared one, and says so.
	bob := list(as("bob", "legal"))
	if got, want := keys(bob), []string{"legal-contracts@team:legal", "lint@shared", "nda@team:legal", "review@team:legal", "style@shared"}; !slices.Equal(got, want) {
		t.Errorf("bob in legal lists %q, want %q", got, want)
	}
	if s := bob["legal-contracts@team:legal"]; !warned(s, `hides the shared skill "contracts" at /skills/contracts`) {
		t.Errorf("legal's contracts does not say what it hides: %q", s.Warnings)
	}
	// carol in eng sees none of legal's.
	carol := list(as("carol", "eng"))
	if got, want := keys(carol), []string{"contracts@shared", "deploy@team:eng", "eng-review@team:eng", "lint@team:eng", "style@shared"}; !slices.Equal(got, want) {
		t.Errorf("carol in eng lists %q, want %q", got, want)
	}
	if _, err := cat.Get(t.Context(), as("carol", "eng"), "nda"); err == nil {
		t.Error("carol in eng reads legal's nda by name")
	}
	// alice in both: her own nda hides legal's; review is served by both
	// teams, the name referring to eng's (first by ID).
	alice := list(as("alice", "legal,eng"))
	if got, want := keys(alice), []string{"deploy@team:eng", "eng-review@team:eng", "legal-contracts@team:legal", "lint@team:eng", "my-nda@user", "review@team:legal", "style@shared"}; !slices.Equal(got, want) {
		t.Errorf("alice in legal and eng lists %q, want %q", got, want)
	}
	if s := alice["my-nda@user"]; !warned(s, `hides the team:legal skill "nda" at /skills/nda`) {
		t.Errorf("alice's nda does not say what it hides: %q", s.Warnings)
	}
	if s := alice["eng-review@team:eng"]; !warned(s, "also served by the team:legal skill at /skills/review; the name refers to this skill") {
		t.Errorf("eng's review does not say legal's is served too: %q", s.Warnings)
	}
	if s := alice["review@team:legal"]; !warned(s, "which the name refers to") {
		t.Errorf("legal's review does not say the name refers to eng's: %q", s.Warnings)
	}
	if d, err := cat.Get(t.Context(), as("alice", "legal,eng"), "review"); err != nil || d.Layer != "team:eng" {
		t.Errorf("review resolves to %+v, %v; want eng's", d.Skill, err)
	}
	if d, err := cat.Get(t.Context(), as("alice", "legal,eng"), "/skills/review"); err != nil || d.Layer != "team:legal" {
		t.Errorf("/skills/review resolves to %+v, %v; want legal's, by its path", d.Skill, err)
	}
}
