package skillmd

import (
	"path"
	"slices"
	"strings"
)

// Folder is one skill folder among a library's paths (FindFolders).
type Folder struct {
	Dir  string // the folder, relative to the library: <skill> or <category>/<skill>
	Name string // its last segment, the name a SKILL.md must carry
	// SkillMD is the index of the folder's SKILL.md among the paths.
	SkillMD int
	// Files are the indexes [Lo, Hi) of the paths inside the folder,
	// SKILL.md included: a folder's paths are contiguous in path order.
	Lo, Hi int
}

// FindFolders is the one rule of which folders of a library are skills,
// over its n relative paths, sorted (rel(i) is the i-th): <skill>/SKILL.md,
// or <category>/<skill>/SKILL.md when <category> is not itself a skill; at
// most max of them, sorted by Dir, each with the paths it serves. Second,
// it returns the folders of SKILL.md files that lie deeper and inside no
// skill (Lo and Hi unset), so they can be reported (NestedProblem) instead
// of silently ignored. The library index (which heads and digests it
// holds) and the catalog's views (which skills they serve) both apply it.
func FindFolders(n int, rel func(i int) string, max int) (skills, nested []Folder) {
	flat := map[string]bool{}
	for i := range n {
		if d, f := path.Split(rel(i)); f == "SKILL.md" && d != "" && !strings.Contains(strings.TrimSuffix(d, "/"), "/") {
			flat[strings.TrimSuffix(d, "/")] = true
		}
	}
	categorized := map[string]bool{}
	for i := range n {
		dir, file := path.Split(rel(i))
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || dir == "" {
			continue
		}
		cat, rest, isCategorized := strings.Cut(dir, "/")
		switch {
		case !isCategorized:
			skills = append(skills, Folder{Dir: dir, Name: dir, SkillMD: i})
		case flat[cat]:
			// a file of the flat skill cat
		case !strings.Contains(rest, "/"):
			categorized[dir] = true
			skills = append(skills, Folder{Dir: dir, Name: rest, SkillMD: i})
		}
	}
	for i := range n {
		dir, file := path.Split(rel(i))
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || strings.Count(dir, "/") < 2 {
			continue
		}
		cat, rest, _ := strings.Cut(dir, "/")
		second, _, _ := strings.Cut(rest, "/")
		if flat[cat] || categorized[cat+"/"+second] {
			continue // a file of a skill
		}
		nested = append(nested, Folder{Dir: dir, Name: path.Base(dir), SkillMD: i})
	}
	byDir := func(a, b Folder) int { return strings.Compare(a.Dir, b.Dir) }
	slices.SortFunc(skills, byDir)
	slices.SortFunc(nested, byDir)
	skills, nested = skills[:min(len(skills), max)], nested[:min(len(nested), max)]
	for k := range skills {
		prefix := skills[k].Dir + "/"
		lo := firstAtOrAfter(n, rel, prefix)
		hi := lo
		for hi < n && strings.HasPrefix(rel(hi), prefix) {
			hi++
		}
		skills[k].Lo, skills[k].Hi = lo, hi
	}
	return skills, nested
}

// firstAtOrAfter is the first i whose rel(i) is not below key (paths sorted).
func firstAtOrAfter(n int, rel func(int) string, key string) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rel(m) < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// NestedProblem explains why a SKILL.md deeper than <category>/<skill> is
// not served.
const NestedProblem = "SKILL.md is nested deeper than <category>/<skill>: only <skill>/SKILL.md and <category>/<skill>/SKILL.md are skills; move the folder up to serve it"
