package skills_test

import (
	"slices"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// countedLibrary is a library over alice's skill "one" and the shared skill
// "two", on a bucket that counts the calls made to it.
func countedLibrary(t *testing.T, newBucket newBucketFunc, tune func(*skills.Config)) (*skills.Library, *objstoretest.Faulty) {
	t.Helper()
	b := objstoretest.NewFaulty(newBucket(t))
	lb := skillstest.New()
	lb.User("alice").Skill("one", "", "First version.", "")
	lb.Shared().Skill("two", "", "Shared.", "")
	lb.Put(t, b)
	return skillstest.Library(t, b, tune), b
}

func testIndexRefresh(t *testing.T, newBucket newBucketFunc) {
	for _, tc := range []struct {
		name       string
		ttl        time.Duration
		cached     bool // the second listing reuses the first
		seesNewOne bool // a skill added after the first listing shows up
	}{
		{"refresh 0 lists every time", 0, false, true},
		{"an index is reused until its refresh", time.Hour, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib, b := countedLibrary(t, newBucket, skillstest.Indexed(tc.ttl))
			ctx := t.Context()
			if _, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			first := b.Calls(objstore.OpList)
			if first < 2 {
				t.Fatalf("first listing made %d List calls, want one per layer", first)
			}
			putAliceSkill(t, b, "three", "Third skill.", "")
			list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lib.Catalog.Categories(ctx, aliceID); err != nil {
				t.Fatal(err)
			}
			again := b.Calls(objstore.OpList) - first
			if tc.cached && again != 0 || !tc.cached && again < 2*first {
				t.Errorf("two more listings made %d List calls (first made %d); cached = %v", again, first, tc.cached)
			}
			if got := slices.Contains(dirs(list), "three@user"); got != tc.seesNewOne {
				t.Errorf("new skill listed = %v, want %v (%q)", got, tc.seesNewOne, dirs(list))
			}
		})
	}
}

// testParseCache: an unchanged SKILL.md is not fetched again, a changed one is.
func testParseCache(t *testing.T, newBucket newBucketFunc) {
	lib, b := countedLibrary(t, newBucket, nil)
	describe := func() map[string]string {
		t.Helper()
		return listedBy(t, lib, skillview.ListOptions{}, func(s skillview.Skill) string { return s.Description })
	}
	describe()
	before := b.Calls(objstore.OpGetRange)
	if got := describe(); got["one"] != "First version." {
		t.Fatalf("skills = %v", got)
	}
	if n := b.Calls(objstore.OpGetRange) - before; n != 0 {
		t.Errorf("unchanged library: %d SKILL.md reads, want 0", n)
	}
	putAliceSkill(t, b, "one", "Second version.", "")
	if got := describe(); got["one"] != "Second version." || got["two"] != "Shared." {
		t.Errorf("after the change: skills = %v", got)
	}
	if n := b.Calls(objstore.OpGetRange) - before; n != 1 {
		t.Errorf("one changed SKILL.md: %d reads, want 1", n)
	}
}
