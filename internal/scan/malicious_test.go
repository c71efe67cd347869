package scan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/scan"
)

// maliciousDir holds the crafted malicious skills: one per rule, written
// for these tests (fake secrets, unreachable hosts), also the corpus a
// published scanner is measured on.
const maliciousDir = "testdata/malicious"

// TestCraftedMaliciousSkills: each crafted skill is flagged by its rule, at
// its file and line, with the rule's severity.
func TestCraftedMaliciousSkills(t *testing.T) {
	cases := []struct {
		skill, rule, file string
		line              int
	}{
		{"injection-override", scan.RuleOverride, "SKILL.md", 10},
		{"injection-conceal", scan.RuleConceal, "SKILL.md", 10},
		{"injection-exfiltrate", scan.RuleExfil, "SKILL.md", 8},
		{"injection-exfiltrate", scan.RuleExfil, "scripts/check.sh", 3},
		{"hidden-unicode-tags", scan.RuleTags, "SKILL.md", 8},
		{"hidden-bidi-control", scan.RuleBidi, "scripts/access.py", 5},
		{"hidden-zero-width", scan.RuleZeroWidth, "SKILL.md", 8},
		{"hidden-html-comment", scan.RuleComment, "SKILL.md", 10},
		{"hidden-frontmatter", scan.RuleUnshown, "SKILL.md", 4},
		{"secret-aws-key", "secret/aws-access-token", "config.env", 3},
		{"script-download-exec", scan.RuleDownload, "scripts/install.sh", 4},
		{"script-encoded-exec", scan.RuleEncoded, "scripts/run.py", 4},
		{"script-write-outside", scan.RuleWrite, "scripts/setup.sh", 3},
		{"script-raw-ip", scan.RuleRawIP, "scripts/report.py", 5},
		{"binary-disguised-text", scan.RuleFakeText, "reference.md", 0},
		{"binary-executable", scan.RuleExec, "scripts/helper.txt", 0},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.skill+"/"+c.rule, func(t *testing.T) {
			rep, err := scan.Skill(t.Context(), readFolder(t, filepath.Join(maliciousDir, c.skill)), scan.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			r, ok := scan.RuleByID(c.rule)
			if !ok {
				t.Fatalf("rule %s is not in the catalog", c.rule)
			}
			found := false
			for _, f := range rep.Findings {
				if f.Rule == c.rule && f.File == c.file && f.Line == c.line {
					found = true
					if f.Severity.Rank() < scan.Medium.Rank() {
						t.Errorf("%s: severity %s", c.rule, f.Severity)
					}
				}
			}
			if !found {
				t.Errorf("no %s at %s:%d; findings:\n%s", c.rule, c.file, c.line, dump(rep))
			}
			if rep.Verdict.Rank() < r.Severity.Rank() {
				t.Errorf("verdict %s, below the rule's %s", rep.Verdict, r.Severity)
			}
		})
		covered[strings.SplitN(c.rule, "/", 2)[0]+"/"] = true
		covered[c.rule] = true
	}
	// Every rule of ours but the limits' and the low blob rule has a skill.
	for _, r := range scan.Rules() {
		if strings.HasPrefix(r.ID, "secret/") || r.ID == scan.RuleIncomplete || r.ID == scan.RuleBlob {
			continue
		}
		if !covered[r.ID] {
			t.Errorf("rule %s has no crafted skill", r.ID)
		}
	}
	// And every folder is a case.
	entries, err := os.ReadDir(maliciousDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		seen := false
		for _, c := range cases {
			seen = seen || c.skill == e.Name()
		}
		if !seen {
			t.Errorf("%s/%s is no case", maliciousDir, e.Name())
		}
	}
}

func dump(r scan.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s:%d %s (%s) %s\n", f.File, f.Line, f.Rule, f.Severity, f.Message)
	}
	return b.String()
}
