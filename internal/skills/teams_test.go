package skills_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
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
	list := func(c mounts.Caller) map[string]skillview.Skill {
		t.Helper()
		l, err := cat.Skills(t.Context(), c, skillview.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]skillview.Skill{}
		for _, s := range l {
			out[s.Dir+"@"+s.Layer] = s
		}
		return out
	}
	keys := func(m map[string]skillview.Skill) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	warned := func(s skillview.Skill, sub string) bool {
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

// TestProtected: a protected skill of the shared library or a team's is
// replaced by no lower layer's namesake, by name or at its path; the
// namesake is listed with a warning saying why, and reachable by its path.
func TestProtected(t *testing.T) {
	b := skillstest.New()
	b.Shared().Skill("contracts", "", "org contracts", "x").Skill("style", "", "org style", "x")
	b.Team("legal").Skill("nda", "", "legal nda", "x").Skill("legal-style", "style", "legal style", "x")
	b.User("alice").Skill("my-contracts", "contracts", "alice contracts", "x").Skill("contracts", "", "alice at the org path", "x").Skill("my-nda", "nda", "alice nda", "x")
	bucket := memory.New()
	b.Put(t, bucket)
	lib := skillstest.Library(t, bucket, nil)
	cat := lib.Catalog
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Teams: "legal"})
	layerOf := func(ref string) string {
		t.Helper()
		d, err := cat.Get(t.Context(), alice, ref)
		if err != nil {
			t.Fatalf("Get(%s): %v", ref, err)
		}
		return d.Layer + " " + d.Path
	}
	// Unprotected: alice's own win.
	if got := layerOf("contracts"); got != "user /skills/contracts" {
		t.Errorf("contracts before protection = %s", got)
	}
	if _, err := cat.SetProtected(t.Context(), layout.LibraryRef{User: "alice"}, "contracts", true); err == nil {
		t.Error("a user's skill was protected")
	}
	for _, p := range []struct {
		lib  layout.LibraryRef
		name string
	}{{layout.LibraryRef{Shared: true}, "contracts"}, {layout.LibraryRef{Shared: true}, "style"}, {layout.LibraryRef{Team: "legal"}, "nda"}} {
		if _, err := cat.SetProtected(t.Context(), p.lib, p.name, true); err != nil {
			t.Fatal(err)
		}
	}
	if names, err := cat.Protected(t.Context(), layout.LibraryRef{Shared: true}); err != nil || !slices.Equal(names, []string{"contracts", "style"}) {
		t.Errorf("Protected(shared) = %q, %v", names, err)
	}
	for ref, want := range map[string]string{
		"contracts":            "shared /skills/contracts", // by name and at its path
		"style":                "shared /skills/style",     // over legal's namesake
		"nda":                  "team:legal /skills/nda",
		"/skills/my-contracts": "user /skills/my-contracts", // the namesake, by its path
		"/skills/my-nda":       "user /skills/my-nda",
		"/skills/legal-style":  "team:legal /skills/legal-style",
	} {
		if got := layerOf(ref); got != want {
			t.Errorf("%s = %s, want %s", ref, got, want)
		}
	}
	l, err := cat.Skills(t.Context(), alice, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]skillview.Skill{}
	for _, s := range l {
		got[s.Dir] = s
	}
	for dir, warn := range map[string]string{
		"contracts":    "protected by an administrator",
		"my-contracts": `not serving the name "contracts": the shared skill at /skills/contracts is protected`,
		"my-nda":       `not serving the name "nda": the team:legal skill at /skills/nda is protected`,
		"legal-style":  `not serving the name "style": the shared skill at /skills/style is protected`,
	} {
		s, ok := got[dir]
		if !ok || !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, warn) }) {
			t.Errorf("%s listed %v with warnings %q; want %q", dir, ok, s.Warnings, warn)
		}
	}
	if d, err := cat.Get(t.Context(), alice, "contracts"); err != nil || !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "protected by an administrator") }) {
		t.Errorf("Get(contracts) warnings %q, %v; want it protected", d.Warnings, err)
	}
	// Unprotected again: alice's own contracts is back.
	if _, err := cat.SetProtected(t.Context(), layout.LibraryRef{Shared: true}, "contracts", false); err != nil {
		t.Fatal(err)
	}
	if got := layerOf("contracts"); got != "user /skills/contracts" {
		t.Errorf("contracts after unprotecting = %s", got)
	}
}

// TestProtectedFailsClosed: protection holds when its list cannot be
// had. A read of the protected names that fails fails the call (nothing
// is served unprotected, and the next call reads again); a list that is no
// list protects every skill of its library until SetSkillProtected
// rewrites it.
func TestProtectedFailsClosed(t *testing.T) {
	b := skillstest.New()
	b.Shared().Skill("contracts", "", "org contracts", "x").Skill("style", "", "org style", "x")
	b.User("alice").Skill("my-contracts", "contracts", "alice contracts", "x").Skill("my-style", "style", "alice style", "x")
	bucket := memory.New()
	b.Put(t, bucket)
	if _, err := skillstest.Library(t, bucket, nil).Catalog.SetProtected(t.Context(), layout.LibraryRef{Shared: true}, "contracts", true); err != nil {
		t.Fatal(err)
	}
	const protectedKey = "_shared/settings/protected.json"
	faulty := objstoretest.NewFaulty(bucket)
	failing := true
	faulty.Before("", func(_ context.Context, c objstoretest.Call) error {
		if failing && c.Key == protectedKey && (c.Op == objstore.OpGet || c.Op == objstore.OpGetRange) {
			return objstore.ErrUnavailable
		}
		return nil
	})
	cat := skillstest.Library(t, faulty, nil).Catalog // its caches empty: the list is read
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	layerOf := func(ref string) string {
		t.Helper()
		d, err := cat.Get(t.Context(), alice, ref)
		if err != nil {
			t.Fatalf("Get(%s): %v", ref, err)
		}
		return d.Layer + " " + d.Path
	}
	for range 2 {
		if d, err := cat.Get(t.Context(), alice, "contracts"); !errors.Is(err, objstore.ErrUnavailable) {
			t.Fatalf("Get(contracts) while the protected names cannot be read = %+v, %v; want the storage error", d, err)
		}
		if _, err := cat.Skills(t.Context(), alice, skillview.ListOptions{}); !errors.Is(err, objstore.ErrUnavailable) {
			t.Fatalf("Skills while the protected names cannot be read: %v; want the storage error", err)
		}
	}
	failing = false
	if got := layerOf("contracts"); got != "shared /skills/contracts" {
		t.Errorf("contracts once the list is read = %s, want the protected shared skill", got)
	}
	if got := layerOf("style"); got != "user /skills/my-style" {
		t.Errorf("style (not protected) = %s, want alice's", got)
	}

	objstoretest.Put(t, bucket, protectedKey, `{"names": "contracts"}`) // no list
	for _, ref := range []string{"contracts", "style"} {
		if got := layerOf(ref); got != "shared /skills/"+ref {
			t.Errorf("%s under a list that is no list = %s, want the shared skill (every one protected)", ref, got)
		}
	}
	if _, err := cat.SetProtected(t.Context(), layout.LibraryRef{Shared: true}, "contracts", true); err != nil {
		t.Fatal(err)
	}
	if got := layerOf("style"); got != "user /skills/my-style" {
		t.Errorf("style once the list is rewritten = %s, want alice's", got)
	}
}

// TestTeamChangeOf: keys of a team's library, index and protected object
// are the team's; a key that only looks like one is not.
func TestTeamChangeOf(t *testing.T) {
	lib := skillstest.Library(t, memory.New(), nil)
	for key, want := range map[string]layout.Change{
		"_teams/legal/skills/nda/SKILL.md":       {Kind: layout.LibraryFile, Library: layout.LibraryRef{Team: "legal"}},
		"_teams/legal/settings/skills.index":     {Kind: layout.PersistedIndex, Library: layout.LibraryRef{Team: "legal"}},
		"_teams/legal/settings/protected.json":   {Kind: layout.LibraryFile, Library: layout.LibraryRef{Team: "legal"}},
		"_shared/settings/protected.json":        {Kind: layout.LibraryFile, Library: layout.LibraryRef{Shared: true}},
		"_teams/legal/skills/":                   {},
		"_teams/_x/skills/a/SKILL.md":            {},
		"_teams/legal/other/a.md":                {},
		"_teams/legal/settings/skills.index.bak": {},
		"alice/skills/x/SKILL.md":                {Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "alice"}},
	} {
		if got := lib.Catalog.ChangeOf(key); got != want {
			t.Errorf("ChangeOf(%q) = %+v, want %+v", key, got, want)
		}
	}
}

// TestShadowedByPath: a skill hidden by a namesake of a higher layer is
// not listed, but GetSkill and ReadSkillFile reach it by its path, as the
// hiding entry's warning names it.
func TestShadowedByPath(t *testing.T) {
	b := skillstest.New()
	b.Shared().Skill("lint", "", "org lint", "x").File("lint/ref.md", "org ref\n")
	b.Team("eng").Skill("eng-lint", "lint", "eng lint", "x").Skill("review", "", "eng review", "x").File("review/ref.md", "eng ref\n")
	b.User("alice").Skill("my-review", "review", "alice review", "x")
	bucket := memory.New()
	b.Put(t, bucket)
	cat := skillstest.Library(t, bucket, nil).Catalog
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Teams: "eng"})
	for ref, want := range map[string]string{
		"lint":            "team:eng eng lint",
		"/skills/lint":    "shared org lint", // hidden by eng's lint, in the base
		"review":          "user alice review",
		"/skills/review":  "team:eng eng review", // hidden by alice's review
		"review/SKILL.md": "team:eng eng review",
	} {
		d, err := cat.Get(t.Context(), alice, ref)
		if err != nil || d.Layer+" "+d.Description != want {
			t.Errorf("Get(%s) = %s %s, %v; want %s", ref, d.Layer, d.Description, err, want)
		}
	}
	if d, err := cat.Get(t.Context(), alice, "/skills/review"); err != nil || !slices.ContainsFunc(d.Warnings, func(w string) bool {
		return strings.Contains(w, `not served under its name "review", which the user skill at /skills/my-review takes`)
	}) {
		t.Errorf("Get(/skills/review) warnings %q, %v; want what takes its name", d.Warnings, err)
	}
	for ref, want := range map[string]string{"/skills/review": "eng ref\n", "/skills/lint": "org ref\n"} {
		text, _, err := cat.ReadFile(t.Context(), alice, ref, "ref.md", skillview.ReadOptions{})
		if err != nil || text != want {
			t.Errorf("ReadFile(%s, ref.md) = %q, %v; want %q", ref, text, err, want)
		}
	}
	l, err := cat.Skills(t.Context(), alice, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dirs(l); !slices.Equal(got, []string{"eng-lint@team:eng", "my-review@user"}) {
		t.Errorf("listed %q", got)
	}
}

// BenchmarkTeamView lists a library of 300 shared skills, two teams' of 50
// each and the user's 5, warm (indexes served from memory): "no-teams" is
// the user over the shared library; "two-teams" reads the base layer
// composed once for the pair of teams, so a call costs about what the
// listing itself costs; "new-user" adds building the user's overlay on
// that base (a member seen for the first time).
func BenchmarkTeamView(b *testing.B) {
	lb := skillstest.New()
	for i := range 300 {
		lb.Shared().Skill(fmt.Sprintf("cat-%d/shared-%03d", i%10, i), "", "A shared skill.", "x")
	}
	for _, team := range []string{"eng", "legal"} {
		for i := range 50 {
			lb.Team(team).Skill(fmt.Sprintf("%s-%02d", team, i), "", "A team skill.", "x")
		}
	}
	for i := range 5 {
		lb.User("alice").Skill(fmt.Sprintf("mine-%d", i), "", "Mine.", "x")
	}
	bucket := memory.New()
	lb.Put(b, bucket)
	cat := skillstest.Library(b, bucket, skillstest.Indexed(time.Hour)).Catalog
	ctx := context.Background()
	as := func(user, teams string) mounts.Caller {
		return mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t", Teams: teams})
	}
	list := func(b *testing.B, id mounts.Caller, want int) {
		l, err := cat.Skills(ctx, id, skillview.ListOptions{})
		if err != nil || len(l) != want {
			b.Fatalf("listed %d, %v; want %d", len(l), err, want)
		}
	}
	b.Run("no-teams", func(b *testing.B) {
		for b.Loop() {
			list(b, as("alice", ""), 305)
		}
	})
	b.Run("two-teams", func(b *testing.B) {
		for b.Loop() {
			list(b, as("alice", "eng,legal"), 405)
		}
	})
	b.Run("new-user", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			list(b, as(fmt.Sprintf("u%d", n), "eng,legal"), 400)
		}
	})
}
