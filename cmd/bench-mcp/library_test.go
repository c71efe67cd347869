package main

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// The generated library is what the brief asks for: categories × skills,
// each SKILL.md clean by the Agent Skills rules skillsvc applies (so none
// is left out of skills/list or served with warnings), with two or three
// more files under references/ and scripts/.
func TestNewLibrary(t *testing.T) {
	lib := newLibrary(50, 20)
	if len(lib) != 1000 {
		t.Fatalf("%d skills, want 1000", len(lib))
	}
	dirs := map[string]bool{}
	categories := map[string]int{}
	for _, s := range lib {
		if dirs[s.dir()] {
			t.Fatalf("%s generated twice", s.dir())
		}
		dirs[s.dir()] = true
		categories[s.category]++
		if s.files[0].rel != "SKILL.md" {
			t.Fatalf("%s: first file %s, want SKILL.md", s.dir(), s.files[0].rel)
		}
		fm, body, problems := skillmd.ParseSkillMD(s.files[0].body, s.name)
		if len(problems.Errors)+len(problems.Warnings) > 0 {
			t.Errorf("%s: SKILL.md problems %+v", s.dir(), problems)
		}
		if fm.Name != s.name || fm.DisplayName != "" || fm.License == "" || fm.Compatibility == "" ||
			len(fm.AllowedTools) == 0 || fm.Metadata["version"] == "" || !strings.Contains(body, "## Workflow") {
			t.Errorf("%s: frontmatter %+v lacks a field a real skill has", s.dir(), fm)
		}
		if n := len(s.files[0].body); n < 2<<10 || n > 8<<10 {
			t.Errorf("%s: SKILL.md is %d bytes, want a few KiB", s.dir(), n)
		}
		if extra := len(s.files) - 1; extra < 2 || extra > 3 {
			t.Errorf("%s: %d files besides SKILL.md, want 2 or 3", s.dir(), extra)
		}
		for _, f := range s.files[1:] {
			if !strings.HasPrefix(f.rel, "references/") && !strings.HasPrefix(f.rel, "scripts/") || len(f.body) == 0 {
				t.Errorf("%s: file %s (%d bytes), want a non-empty file under references/ or scripts/", s.dir(), f.rel, len(f.body))
			}
		}
	}
	if len(categories) != 50 {
		t.Errorf("%d categories, want 50", len(categories))
	}
	for c, n := range categories {
		if n != 20 {
			t.Errorf("category %s has %d skills, want 20", c, n)
		}
	}
	want := expected(lib)
	if len(want) != 1000 || len(want["skill://finance/finance-report/SKILL.md"]) != 4 {
		t.Errorf("expected: %d skills, finance-report with %d files", len(want), len(want["skill://finance/finance-report/SKILL.md"]))
	}
}

// Past the word lists, names stay unique and valid.
func TestNewLibraryBeyondWordLists(t *testing.T) {
	lib := newLibrary(len(categoryWords)+2, len(actionWords)+2)
	seen := map[string]bool{}
	for _, s := range lib {
		if seen[s.name] || !skillmd.ValidName(s.name) {
			t.Fatalf("name %q repeated or invalid", s.name)
		}
		seen[s.name] = true
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name    string
		n, size int
		want    []int
	}{
		{"fewer picks than items", 4, 10, []int{0, 2, 5, 7}},
		{"as many", 3, 3, []int{0, 1, 2}},
		{"more picks cycle", 5, 2, []int{0, 1, 0, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, w := range tt.want {
				if got := spread(i, tt.n, tt.size); got != w {
					t.Errorf("spread(%d, %d, %d) = %d, want %d", i, tt.n, tt.size, got, w)
				}
			}
		})
	}
}
