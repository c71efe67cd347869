package skillmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

func skillMD(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nBody\n")
}

func rules(ps []skillmd.Problem, sev skillmd.Severity) []string {
	var out []string
	for _, p := range ps {
		if p.Severity == sev {
			out = append(out, p.Rule)
		}
	}
	return out
}

func TestCheckFolder(t *testing.T) {
	big := make([]skillmd.File, skillmd.MaxSkillFiles+1)
	for i := range big {
		big[i] = skillmd.File{Path: "f/" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)), Data: []byte("x")}
	}
	big[0] = skillmd.File{Path: "SKILL.md", Data: skillMD("pdf", "d")}
	tests := []struct {
		name       string
		folder     string
		files      []skillmd.File
		errs, warn []string
	}{
		{"valid", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("pdf", "Read PDFs.")}, {Path: "scripts/run.py", Data: []byte("print()")}}, nil, nil},
		{"no SKILL.md", "pdf", []skillmd.File{{Path: "run.py", Data: nil}}, []string{skillmd.RuleSkillMDRequired}, nil},
		{"name differs", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("docx", "d")}}, []string{skillmd.RuleNameMatchesFolder}, nil},
		{"display name", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("PDF Tools", "d")}}, []string{skillmd.RuleNameFormat}, nil},
		{"bad folder", "PDF", []skillmd.File{{Path: "SKILL.md", Data: skillMD("PDF", "d")}}, []string{skillmd.RuleFolderName, skillmd.RuleNameFormat}, nil},
		{"every problem at once", "pdf", []skillmd.File{
			{Path: "SKILL.md", Data: []byte("---\nname: docx\nmetadata: 3\n---\n")}, {Path: "../x", Data: nil}, {Path: "a//b", Data: nil}, {Path: "/abs", Data: nil},
			{Path: "sub/SKILL.md", Data: skillMD("sub", "d")}, {Path: "sub/SKILL.md", Data: nil},
		}, []string{skillmd.RulePathCanonical, skillmd.RulePathCanonical, skillmd.RulePathCanonical, skillmd.RuleNestedSkill, skillmd.RulePathDuplicate,
			skillmd.RuleNameMatchesFolder, skillmd.RuleDescriptionRequired}, []string{skillmd.RuleFieldType}},
		{"too many files", "pdf", big, []string{skillmd.RuleMaxFiles}, nil},
		{"too large", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("pdf", "d")}, {Path: "big.bin", Data: make([]byte, skillmd.MaxSkillBytes)}}, []string{skillmd.RuleMaxBytes}, nil},
		{"too large, unread", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("pdf", "d")}, {Path: "big.bin", Size: skillmd.MaxSkillBytes}}, []string{skillmd.RuleMaxBytes}, nil},
		{"a head of a file within the limit", "pdf", []skillmd.File{{Path: "SKILL.md", Data: skillMD("pdf", "d")}, {Path: "big.bin", Data: []byte("x"), Size: 2}}, nil, nil},
		{"not frontmatter", "pdf", []skillmd.File{{Path: "SKILL.md", Data: []byte("# hi")}}, []string{skillmd.RuleFrontmatter}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := skillmd.CheckFolder(tc.folder, tc.files)
			errs, warn := rules(got, skillmd.SeverityError), rules(got, skillmd.SeverityWarning)
			slices.Sort(errs)
			slices.Sort(tc.errs)
			if !slices.Equal(errs, tc.errs) || !slices.Equal(warn, tc.warn) {
				t.Fatalf("errors %q warnings %q, want %q %q\n%+v", errs, warn, tc.errs, tc.warn, got)
			}
			if skillmd.HasErrors(got) != (len(tc.errs) > 0) {
				t.Fatalf("HasErrors = %v", skillmd.HasErrors(got))
			}
			for _, p := range got {
				if p.Message == "" {
					t.Errorf("problem without a message: %+v", p)
				}
			}
		})
	}
}

// Structured problems keep the messages the catalog lists, in order.
func TestProblemsListMatchesStrings(t *testing.T) {
	_, _, p := skillmd.ParseSkillMD([]byte("---\nname: Bad Name\ncompatibility: "+strings.Repeat("c", 600)+"\nmetadata: [1]\n---\n"), "folder")
	var errs, warns []string
	for _, pr := range p.List {
		if pr.Severity == skillmd.SeverityError {
			errs = append(errs, pr.Message)
		} else {
			warns = append(warns, pr.Message)
		}
		if pr.Rule == "" || pr.File != skillmd.SkillFile {
			t.Errorf("problem %+v lacks a rule or file", pr)
		}
	}
	if !slices.Equal(errs, p.Errors) || !slices.Equal(warns, p.Warnings) || len(p.Errors) == 0 || len(p.Warnings) < 3 {
		t.Fatalf("List %+v does not match Errors %q Warnings %q", p.List, p.Errors, p.Warnings)
	}
}
