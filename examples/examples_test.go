package examples_test

import (
	"io/fs"
	"os"
	"testing"

	"github.com/skillsvc/skillsvc/examples"
)

// TestSkillsMatchFolder: the built-in library is the skills folder, file
// for file, so what the binary serves is what the repository shows.
func TestSkillsMatchFolder(t *testing.T) {
	want := map[string]string{}
	if err := fs.WalkDir(os.DirFS("skills"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile("skills/" + p)
		want[p] = string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := fs.WalkDir(examples.Skills(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(examples.Skills(), p)
		got[p] = string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("embedded %d files, the folder has %d", len(got), len(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: embedded content differs from the folder's", p)
		}
	}
	if _, ok := got["writing/release-notes/SKILL.md"]; !ok {
		t.Errorf("no writing/release-notes/SKILL.md among %v", got)
	}
}
