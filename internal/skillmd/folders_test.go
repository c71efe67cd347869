package skillmd

import (
	"fmt"
	"slices"
	"testing"
)

func TestFindFolders(t *testing.T) {
	paths := []string{
		"a/SKILL.md", "a/scripts/run.py", "a/x/SKILL.md", // flat skill a; a/x is its file
		"docs/pdf/SKILL.md", "docs/pdf/ref.md", // categorized
		"docs/xlsx/SKILL.md",
		"loose.md",
		"tools/deep/er/SKILL.md", // nested in no skill
	}
	got, nested := FindFolders(len(paths), func(i int) string { return paths[i] }, 10)
	var names []string
	for _, f := range got {
		names = append(names, fmt.Sprintf("%s:%s:%v", f.Dir, f.Name, paths[f.Lo:f.Hi]))
		if paths[f.SkillMD] != f.Dir+"/SKILL.md" {
			t.Errorf("%s: SkillMD is %q", f.Dir, paths[f.SkillMD])
		}
	}
	want := []string{
		"a:a:[a/SKILL.md a/scripts/run.py a/x/SKILL.md]",
		"docs/pdf:pdf:[docs/pdf/SKILL.md docs/pdf/ref.md]",
		"docs/xlsx:xlsx:[docs/xlsx/SKILL.md]",
	}
	if !slices.Equal(names, want) {
		t.Errorf("skills %q, want %q", names, want)
	}
	if len(nested) != 1 || nested[0].Dir != "tools/deep/er" {
		t.Errorf("nested %+v, want tools/deep/er", nested)
	}
	if cut, _ := FindFolders(len(paths), func(i int) string { return paths[i] }, 2); len(cut) != 2 || cut[1].Dir != "docs/pdf" {
		t.Errorf("max 2: %+v", cut)
	}
}
