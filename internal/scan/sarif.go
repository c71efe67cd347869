package scan

import (
	"encoding/json"
	"net/url"
	"path"
	"slices"
	"strings"
)

// SARIF 2.1.0 (OASIS), the parts code-scanning tools read.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	ShortDescription     sarifText         `json:"shortDescription"`
	DefaultConfiguration sarifConfig       `json:"defaultConfiguration"`
	Properties           sarifRuleProperty `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

// security-severity is how GitHub code scanning ranks security results.
type sarifRuleProperty struct {
	Tags             []string `json:"tags"`
	SecuritySeverity string   `json:"security-severity"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// Level maps a severity onto SARIF's result levels.
func (s Severity) Level() string {
	switch s {
	case High:
		return "error"
	case Medium:
		return "warning"
	}
	return "note"
}

func (s Severity) securitySeverity() string {
	switch s {
	case High:
		return "8.0"
	case Medium:
		return "5.0"
	}
	return "2.0"
}

// SARIF renders reports (skill path, relative to where the scan ran and
// slash-separated, → its report) as one SARIF 2.1.0 run: the driver lists
// our rules and the secret rules that matched; each result's location is
// the skill path joined with the file. Output is deterministic: skills in
// path order, findings in report order.
func SARIF(reports map[string]Report) ([]byte, error) {
	rules := slices.Clone(ownRules)
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
	}
	skills := make([]string, 0, len(reports))
	for p := range reports {
		skills = append(skills, p)
	}
	slices.Sort(skills)
	results := []sarifResult{}
	for _, skill := range skills {
		for _, f := range reports[skill].Findings {
			i, ok := index[f.Rule]
			if !ok {
				r, found := RuleByID(f.Rule)
				if !found {
					r = Rule{ID: f.Rule, Severity: f.Severity, Summary: f.Rule}
				}
				i = len(rules)
				index[f.Rule] = i
				rules = append(rules, r)
			}
			loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: uriOf(path.Join(skill, f.File))}}
			if f.Line > 0 {
				loc.Region = &sarifRegion{StartLine: f.Line}
			}
			results = append(results, sarifResult{RuleID: f.Rule, RuleIndex: i, Level: f.Severity.Level(),
				Message: sarifText{Text: f.Message}, Locations: []sarifLocation{{PhysicalLocation: loc}}})
		}
	}
	driver := sarifDriver{Name: "skillsvc-scan", Version: RulesVersion, InformationURI: "https://github.com/skillsvc/skillsvc/blob/main/docs/authors/scanning.md"}
	for _, r := range rules {
		family, _, _ := strings.Cut(r.ID, "/")
		driver.Rules = append(driver.Rules, sarifRule{ID: r.ID, ShortDescription: sarifText{Text: r.Summary},
			DefaultConfiguration: sarifConfig{Level: r.Severity.Level()},
			Properties:           sarifRuleProperty{Tags: []string{"security", family}, SecuritySeverity: r.Severity.securitySeverity()}})
	}
	return json.MarshalIndent(sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}},
	}, "", "  ")
}

// uriOf is a URI for a slash path: a file URI when absolute, else a
// relative reference (what code-scanning tools resolve against the
// repository), escaped, a first segment with a colon kept from reading as
// a scheme.
func uriOf(p string) string {
	if path.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}
