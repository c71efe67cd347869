package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skillsvc/skillsvc/internal/scan"
)

// Families are our rule families (internal/scan's rule ids up to the
// slash); every finding of either scanner maps to one of them or to
// "other".
var Families = []string{"injection", "hidden-text", "secret", "script", "binary"}

// Other is the family of findings no rule of ours is about (licences,
// undeclared tools, generic descriptions, a file unanalyzable as such).
const Other = "other"

// Finding is one finding of either scanner, severity normalized to ours:
// "high" (their CRITICAL and HIGH), "medium", "low" or "info" (theirs only).
type Finding struct {
	Rule     string `json:"rule"`
	Family   string `json:"family"`
	Severity string `json:"severity"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// Result is one scanner's scan of one skill.
type Result struct {
	Verdict  string    `json:"verdict"` // the highest severity, or "clean"
	Findings []Finding `json:"findings"`
}

var rank = map[string]int{"clean": 0, "info": 0, "low": 1, "medium": 2, "high": 3}

// Flags reports whether r has a finding of the family at sev or above
// (family "" = any family but Other).
func (r Result) Flags(family, sev string) bool {
	for _, f := range r.Findings {
		if (family == "" && f.Family != Other || f.Family == family) && rank[f.Severity] >= rank[sev] {
			return true
		}
	}
	return false
}

// Rules lists r's rule ids at sev or above, once each, sorted.
func (r Result) Rules(sev string) []string {
	var out []string
	for _, f := range r.Findings {
		if rank[f.Severity] >= rank[sev] && !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	sort.Strings(out)
	return out
}

// OurFamily is the family of one of our rule ids.
func OurFamily(rule string) string {
	fam, _, _ := strings.Cut(rule, "/")
	if slices.Contains(Families, fam) {
		return fam
	}
	return Other // scan/incomplete
}

func ours(rep scan.Report) Result {
	r := Result{Verdict: string(rep.Verdict)}
	for _, f := range rep.Findings {
		r.Findings = append(r.Findings, Finding{Rule: f.Rule, Family: OurFamily(f.Rule), Severity: string(f.Severity), File: f.File, Line: f.Line})
	}
	return r
}

// Cisco's rules that belong to a family other than their category's.
var ciscoRuleFamily = map[string]string{
	"FILE_MAGIC_MISMATCH":      "binary",
	"YARA_embedded_elf_binary": "binary",
	"BINARY_FILE_DETECTED":     Other, // info: any binary file
	"UNANALYZABLE_BINARY":      Other,
	"LOW_ANALYZABILITY":        Other,
	// category supply_chain_attack, about requirements.txt
	"SUPPLY_CHAIN_UNPINNED_DEPENDENCY": Other,
}

// Cisco's categories (its threat taxonomy) mapped to our families.
var ciscoCategoryFamily = map[string]string{
	"prompt_injection":      "injection",
	"data_exfiltration":     "injection", // ours: injection/exfiltrate
	"unicode_steganography": "hidden-text",
	"hardcoded_secrets":     "secret",
	"command_injection":     "script",
	"obfuscation":           "script",
	"supply_chain_attack":   "script",
}

// CiscoFamily maps one of cisco-ai-skill-scanner's findings to our family.
func CiscoFamily(rule, category string) string {
	if f, ok := ciscoRuleFamily[rule]; ok {
		return f
	}
	if strings.HasPrefix(rule, "ASCII_SMUGGLING") {
		return "hidden-text" // Unicode tag characters, category prompt_injection
	}
	if f, ok := ciscoCategoryFamily[category]; ok {
		return f
	}
	return Other
}

func ciscoSeverity(s string) string {
	switch strings.ToUpper(s) {
	case "CRITICAL", "HIGH":
		return "high"
	case "MEDIUM":
		return "medium"
	case "LOW":
		return "low"
	}
	return "info"
}

// ciscoReport is the part of `skill-scanner scan-all --format json` read here.
type ciscoReport struct {
	Results []struct {
		SkillPath   string   `json:"skill_path"`
		MaxSeverity string   `json:"max_severity"`
		Analyzers   []string `json:"analyzers_used"`
		Findings    []struct {
			RuleID   string `json:"rule_id"`
			Category string `json:"category"`
			Severity string `json:"severity"`
			File     string `json:"file_path"`
			Line     int    `json:"line_number"`
		} `json:"findings"`
	} `json:"results"`
}

// ParseCisco reads a scan-all JSON report: the results by skill folder
// (as the report names it, cleaned) and the analyzers that ran.
func ParseCisco(r io.Reader) (map[string]Result, []string, error) {
	var rep ciscoReport
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, nil, fmt.Errorf("cisco report: %w", err)
	}
	if rep.Results == nil {
		return nil, nil, fmt.Errorf("cisco report: no results")
	}
	out := map[string]Result{}
	var analyzers []string
	for _, s := range rep.Results {
		if s.SkillPath == "" {
			return nil, nil, fmt.Errorf("cisco report: a result without skill_path")
		}
		res := Result{Verdict: "clean"}
		for _, f := range s.Findings {
			sev := ciscoSeverity(f.Severity)
			res.Findings = append(res.Findings, Finding{Rule: f.RuleID, Family: CiscoFamily(f.RuleID, f.Category), Severity: sev, File: f.File, Line: f.Line})
			if sev != "info" && rank[sev] > rank[res.Verdict] {
				res.Verdict = sev
			}
		}
		out[filepath.Clean(s.SkillPath)] = res
		for _, a := range s.Analyzers {
			if !slices.Contains(analyzers, a) {
				analyzers = append(analyzers, a)
			}
		}
	}
	sort.Strings(analyzers)
	return out, analyzers, nil
}

// Skill is one skill both scanned.
type Skill struct {
	Set    string `json:"set"` // "crafted", "public", "corpus"
	Name   string `json:"name"`
	Family string `json:"family,omitempty"` // crafted: the family it was written for
	Ours   Result `json:"ours"`
	Theirs Result `json:"theirs"`
}

// Agreement counts skills by which scanner flags them.
type Agreement struct{ Both, OnlyOurs, OnlyTheirs, Neither int }

func (a *Agreement) add(o, t bool) {
	switch {
	case o && t:
		a.Both++
	case o:
		a.OnlyOurs++
	case t:
		a.OnlyTheirs++
	default:
		a.Neither++
	}
}

// Agree counts skills of set (all when "") by whether each scanner has a
// finding of family ("" = any of ours) at sev or above.
func Agree(skills []Skill, set, family, sev string) Agreement {
	var a Agreement
	for _, s := range skills {
		if set == "" || s.Set == set {
			a.add(s.Ours.Flags(family, sev), s.Theirs.Flags(family, sev))
		}
	}
	return a
}

// CraftedFamily is the family a crafted skill's folder name says it is
// written for (injection-override -> injection, hidden-zero-width ->
// hidden-text).
func CraftedFamily(name string) string {
	p, _, _ := strings.Cut(name, "-")
	if p == "hidden" {
		return "hidden-text"
	}
	return p
}

// Markdown writes the comparison's tables.
func Markdown(w io.Writer, skills []Skill) {
	fmt.Fprintf(w, "### Crafted malicious skills (one per rule)\n\n")
	fmt.Fprintf(w, "| skill | ours | theirs | ours flags its family | theirs flags its family | their rules (medium+) |\n|---|---|---|---|---|---|\n")
	for _, s := range skills {
		if s.Set != "crafted" {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", s.Name, s.Ours.Verdict, s.Theirs.Verdict,
			yes(s.Ours.Flags(s.Family, "medium")), yes(s.Theirs.Flags(s.Family, "medium")), strings.Join(s.Theirs.Rules("medium"), ", "))
	}
	for _, set := range []string{"crafted", "public", "corpus"} {
		n := 0
		for _, s := range skills {
			if s.Set == set {
				n++
			}
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s: %d skills, findings per family (medium and above; high in brackets)\n\n", set, n)
		fmt.Fprintf(w, "| family | both | only ours | only theirs | neither |\n|---|---|---|---|---|\n")
		for _, fam := range append(append([]string{}, Families...), "") {
			m, h := Agree(skills, set, fam, "medium"), Agree(skills, set, fam, "high")
			label := fam
			if fam == "" {
				label = "any of ours"
			}
			fmt.Fprintf(w, "| %s | %d (%d) | %d (%d) | %d (%d) | %d (%d) |\n", label, m.Both, h.Both, m.OnlyOurs, h.OnlyOurs, m.OnlyTheirs, h.OnlyTheirs, m.Neither, h.Neither)
		}
		verdicts := func(get func(Skill) Result) string {
			c := map[string]int{}
			for _, s := range skills {
				if s.Set == set {
					c[get(s).Verdict]++
				}
			}
			return fmt.Sprintf("%d high, %d medium, %d low, %d clean", c["high"], c["medium"], c["low"], c["clean"])
		}
		fmt.Fprintf(w, "\nVerdicts (all findings, theirs including rules outside our families): ours %s; theirs %s.\n",
			verdicts(func(s Skill) Result { return s.Ours }), verdicts(func(s Skill) Result { return s.Theirs }))
	}
	fmt.Fprintf(w, "\n### Public skills with a high verdict\n\n")
	for _, s := range skills {
		if s.Set == "public" && (s.Ours.Verdict == "high" || s.Theirs.Verdict == "high") {
			fmt.Fprintf(w, "- %s: ours %s %v; theirs %s %v\n", s.Name, s.Ours.Verdict, s.Ours.Rules("high"), s.Theirs.Verdict, s.Theirs.Rules("high"))
		}
	}
	counts := map[string]int{}
	for _, s := range skills {
		if s.Set == "corpus" {
			for _, r := range s.Theirs.Rules("high") {
				counts["theirs "+r]++
			}
			for _, r := range s.Ours.Rules("high") {
				counts["ours "+r]++
			}
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(w, "\n### Corpus sample: high rules by skills flagged\n\n")
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if counts[keys[i]] != counts[keys[j]] {
				return counts[keys[i]] > counts[keys[j]]
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Fprintf(w, "- %s: %d\n", k, counts[k])
		}
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
