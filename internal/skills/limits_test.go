package skills_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestMaxObjects checks that a library larger than the listing cap is
// served truncated rather than failing every call.
func TestMaxObjects(t *testing.T) {
	lb := skillstest.New()
	for _, name := range []string{"a", "b", "c"} {
		lb.User("alice").Skill(name, "", "skill "+name, "")
	}
	lib := skillstest.Library(t, lb.Bucket(t), func(c *skills.Config) { c.MaxObjects = 2 })
	list, err := lib.Catalog.Skills(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"}), skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
		t.Errorf("listed %+v, want a and b", list)
	}
}
