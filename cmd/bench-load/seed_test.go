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

// Each tenant sees every shared skill's name once (one of them served by
// its own skill) and its own skills: tenantSkill names each exactly once.
func TestTenantSkills(t *testing.T) {
	for _, u := range []int{0, 1, 42, 1999} {
		seen := map[string]bool{}
		for i := range tenantSkills {
			seen[tenantSkill(u, i)] = true
		}
		want := []string{skillName(0), skillName(tenantShared - 1), skillName(overridden(u)), ownSkill(u, 1), ownSkill(u, tenantPersonal-1)}
		for _, name := range want {
			if !seen[name] {
				t.Errorf("tenant %d: %s is not among its skills", u, name)
			}
		}
		if len(seen) != tenantSkills {
			t.Errorf("tenant %d: %d distinct skills, want %d", u, len(seen), tenantSkills)
		}
	}
}
