package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
)

// testdata/cisco-crafted.json is cisco-ai-skill-scanner 2.3.2's scan-all
// JSON report on internal/scan/testdata/malicious (paths rewritten, each
// finding cut to the fields read here and a few more).
func TestParseCisco(t *testing.T) {
	f, err := os.Open("testdata/cisco-crafted.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, analyzers, err := ParseCisco(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 15 {
		t.Fatalf("%d skills, want 15", len(res))
	}
	if want := []string{"behavioral_analyzer", "bytecode", "correlation", "pipeline", "static_analyzer"}; !slices.Equal(analyzers, want) {
		t.Errorf("analyzers %v, want %v", analyzers, want)
	}
	for _, c := range []struct {
		skill, verdict, family string
		flags                  bool
	}{
		{"injection-override", "high", "injection", true},      // PROMPT_INJECTION_IGNORE_INSTRUCTIONS, YARA_prompt_injection_generic (CRITICAL)
		{"hidden-unicode-tags", "high", "hidden-text", true},   // ASCII_SMUGGLING_TAG_BLOCK (category prompt_injection)
		{"hidden-bidi-control", "medium", "hidden-text", true}, // YARA_prompt_injection_unicode_steganography
		{"secret-aws-key", "high", "secret", true},
		{"script-encoded-exec", "high", "script", true},
		{"binary-executable", "high", "binary", true}, // FILE_MAGIC_MISMATCH, YARA_embedded_elf_binary
		// LOW_ANALYZABILITY (HIGH) makes the verdict, but it is about any
		// binary file, not one named as text.
		{"binary-disguised-text", "high", "binary", false},
		// MANIFEST_MISSING_LICENSE alone: INFO does not make a verdict.
		{"hidden-zero-width", "clean", "hidden-text", false},
		{"script-write-outside", "clean", "script", false},
	} {
		r, ok := res["/stage/crafted/"+c.skill]
		if !ok {
			t.Errorf("%s: missing", c.skill)
			continue
		}
		if r.Verdict != c.verdict || r.Flags(c.family, "medium") != c.flags {
			t.Errorf("%s: verdict %s, flags %s %v; want %s, %v (%+v)", c.skill, r.Verdict, c.family, r.Flags(c.family, "medium"), c.verdict, c.flags, r.Findings)
		}
	}
	// A null line_number reads as 0, a number as itself.
	r := res["/stage/crafted/injection-override"]
	i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Rule == "PROMPT_INJECTION_IGNORE_INSTRUCTIONS" })
	if i < 0 || r.Findings[i].Line != 10 || r.Findings[i].File != "SKILL.md" || r.Findings[i].Severity != "high" {
		t.Errorf("injection-override findings %+v", r.Findings)
	}
	for _, bad := range []string{"", "{", `{"summary": {}}`, `{"results": [{"findings": []}]}`} {
		if _, _, err := ParseCisco(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseCisco(%q): no error", bad)
		}
	}
}

// Every crafted skill is named for one of our families, and every rule of
// ours but scan/incomplete belongs to one.
func TestFamilies(t *testing.T) {
	entries, err := os.ReadDir("../../internal/scan/testdata/malicious")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(Families, CraftedFamily(e.Name())) {
			t.Errorf("crafted skill %s: family %q is none of ours", e.Name(), CraftedFamily(e.Name()))
		}
	}
	for _, r := range scan.Rules() {
		if fam := OurFamily(r.ID); fam == Other && r.ID != scan.RuleIncomplete {
			t.Errorf("rule %s: no family", r.ID)
		}
	}
	if OurFamily("secret/aws-access-token") != "secret" {
		t.Error("gitleaks rules are the secret family")
	}
}

func TestAgree(t *testing.T) {
	hi := func(fam string) Result {
		return Result{Verdict: "high", Findings: []Finding{{Rule: "x", Family: fam, Severity: "high"}}}
	}
	med := Result{Verdict: "medium", Findings: []Finding{{Rule: "y", Family: "script", Severity: "medium"}}}
	other := Result{Verdict: "high", Findings: []Finding{{Rule: "LOW_ANALYZABILITY", Family: Other, Severity: "high"}}}
	skills := []Skill{
		{Set: "public", Ours: hi("script"), Theirs: med},
		{Set: "public", Ours: Result{Verdict: "clean"}, Theirs: hi("script")},
		{Set: "public", Ours: med, Theirs: other},
		{Set: "corpus", Ours: hi("script"), Theirs: hi("script")},
	}
	if got, want := Agree(skills, "public", "script", "medium"), (Agreement{Both: 1, OnlyOurs: 1, OnlyTheirs: 1}); got != want {
		t.Errorf("medium: %+v, want %+v", got, want)
	}
	if got, want := Agree(skills, "public", "script", "high"), (Agreement{OnlyOurs: 1, OnlyTheirs: 1, Neither: 1}); got != want {
		t.Errorf("high: %+v, want %+v", got, want)
	}
	// Other is never one of our families, even for "any".
	if got, want := Agree(skills, "public", "", "high"), (Agreement{OnlyOurs: 1, OnlyTheirs: 1, Neither: 1}); got != want {
		t.Errorf("any: %+v, want %+v", got, want)
	}
	if got := Agree(skills, "", "script", "high"); got.Both != 1 {
		t.Errorf("all sets: %+v", got)
	}
}

func TestSample(t *testing.T) {
	var skills []corpus.Skill
	for i := range 10 {
		skills = append(skills, corpus.Skill{Dir: strconv.Itoa(i), Cut: i == 1})
	}
	var got []string
	for _, s := range sample(skills, 3) {
		got = append(got, s.Dir)
	}
	// Of the 9 whole skills (0, 2, 3, …, 9): the 0th, 3rd and 6th.
	if want := []string{"0", "4", "7"}; !slices.Equal(got, want) {
		t.Errorf("sample %v, want %v", got, want)
	}
	if len(sample(skills, 50)) != 9 {
		t.Error("a sample larger than the corpus is the corpus, less the cut skills")
	}
}
