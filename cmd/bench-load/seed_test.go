package main

import (
	"strings"
	"testing"
)

// The seeded SKILL.md must look like a real one: about 3 KiB, with the
// frontmatter fields the harness promises and a name equal to its folder.
func TestSkillMD(t *testing.T) {
	for _, i := range []int{0, 42, 999} {
		md := string(skillMD(i, 1000))
		if n := len(md); n < skillMDSize-300 || n > skillMDSize+300 {
			t.Errorf("skill %d: SKILL.md is %d bytes, want about %d", i, n, skillMDSize)
		}
		for _, field := range []string{"\nname: " + skillName(i) + "\n", "\ndescription: ", "\nlicense: ", "\nmetadata:\n"} {
			if !strings.Contains(md, field) {
				t.Errorf("skill %d: SKILL.md lacks %q", i, field)
			}
		}
		if folder := skillFolder(i, 1000); !strings.HasSuffix(folder, "/"+skillName(i)) {
			t.Errorf("skill %d: folder %q does not end in its name", i, folder)
		}
	}
}
