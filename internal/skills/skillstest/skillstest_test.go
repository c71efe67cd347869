package skillstest_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

func TestBuilder(t *testing.T) {
	b := skillstest.New()
	b.User("alice").Skill("docs/pdf", "", "Read PDFs.", "# PDF\n").File("docs/pdf/scripts/run.sh", "echo\n")
	b.Shared().Skill("lint", "lint", "Lint code.", "# Lint\n")
	files := b.Files()
	for _, k := range []string{"alice/skills/docs/pdf/SKILL.md", "alice/skills/docs/pdf/scripts/run.sh", "_shared/skills/lint/SKILL.md"} {
		if _, ok := files[k]; !ok {
			t.Errorf("no object %s in %v", k, files)
		}
	}
	lib := skillstest.Library(t, b.Bucket(t), nil)
	list, _, err := lib.Catalog.State(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "pdf" || list[1].Name != "lint" || list[1].Layer != skillview.LayerShared {
		t.Errorf("listed %+v, want alice's pdf and the shared lint", list)
	}
}
