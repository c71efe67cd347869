package scan

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Severity ranks a finding: a policy blocks on high and warns on the rest.
type Severity string

const (
	Low    Severity = "low"
	Medium Severity = "medium"
	High   Severity = "high"
	// Clean is a report's verdict when nothing was found.
	Clean Severity = "clean"
)

// Rank orders severities (Clean 0, Low 1, Medium 2, High 3; unknown -1).
func (s Severity) Rank() int {
	switch s {
	case Clean:
		return 0
	case Low:
		return 1
	case Medium:
		return 2
	case High:
		return 3
	}
	return -1
}

// ParseSeverity reads "low", "medium" or "high".
func ParseSeverity(s string) (Severity, error) {
	switch v := Severity(strings.ToLower(s)); v {
	case Low, Medium, High:
		return v, nil
	}
	return "", fmt.Errorf("unknown severity %q: want low, medium or high", s)
}

// Finding is one thing found in one file.
// Its JSON form (as stored beside a version and printed by skillctl scan
// --format json) uses the lower-case names.
type Finding struct {
	Rule     string   `json:"rule"` // stable id, e.g. "hidden-text/unicode-tags", "secret/aws-access-token"
	Severity Severity `json:"severity"`
	File     string   `json:"file"` // path relative to the skill folder
	Line     int      `json:"line"` // 1-based; 0 when not about a line
	Message  string   `json:"message"`
}

// File is one file of a skill as the caller holds it.
type File struct {
	Path       string // relative to the skill folder, slash-separated
	Data       []byte
	Executable bool
}

// Limits bound one Skill call. Zero fields take DefaultLimits'.
type Limits struct {
	MaxBytes int64
	MaxFiles int
	Timeout  time.Duration
}

// DefaultLimits are a skill folder's own limits (internal/skillmd's
// MaxSkillFiles and MaxSkillBytes) and a timeout no skill of that size
// comes near on one core.
var DefaultLimits = Limits{MaxBytes: 16 << 20, MaxFiles: 512, Timeout: 30 * time.Second}

// Report is what Skill found in one skill.
type Report struct {
	Findings []Finding `json:"findings"` // sorted by file, line, rule
	// Verdict is the highest severity found, or Clean.
	Verdict Severity `json:"verdict"`
	// RulesVersion names the rules that ran (ours and gitleaks'), so a
	// stored verdict can be recomputed when they change.
	RulesVersion string `json:"rulesVersion"`
	// Incomplete: a limit or the timeout stopped the scan before every
	// file was read (a "scan/incomplete" finding says which).
	Incomplete bool `json:"incomplete"`
}

// RulesVersion is Report.RulesVersion: bump rulesRevision whenever a rule
// of ours changes what it finds.
// It starts with our revision (SARIF consumers compare a driver's version
// by its leading number) and names the gitleaks rules, e.g.
// "1+gitleaks-v8.30.1".
var RulesVersion = fmt.Sprintf("%d+gitleaks-%s", rulesRevision, GitleaksVersion)

const rulesRevision = 1

// Bounds inside one file: text rules read at most maxLineBytes of a line,
// and each rule reports at most maxPerRule findings per file (a file of a
// thousand zero-width runs is one problem, not a thousand).
const (
	maxLineBytes = 16 << 10
	maxPerRule   = 20
	maxFindings  = 2000
)

// Skill scans one skill's files. It returns an error only when ctx ends
// (the caller's cancellation or deadline); its own limits end the scan with
// a report marked Incomplete.
func Skill(ctx context.Context, files []File, lim Limits) (Report, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	if lim.MaxFiles <= 0 {
		lim.MaxFiles = DefaultLimits.MaxFiles
	}
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultLimits.Timeout
	}
	sctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	c := &collector{count: map[[2]string]int{}}
	var total int64
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		if sctx.Err() != nil {
			c.incomplete(fmt.Sprintf("the scan took longer than %s: %d of %d files scanned", lim.Timeout, i, len(files)))
			break
		}
		if i >= lim.MaxFiles {
			c.incomplete(fmt.Sprintf("more than %d files: the first %d scanned", lim.MaxFiles, lim.MaxFiles))
			break
		}
		if total += int64(len(f.Data)); total > lim.MaxBytes {
			c.incomplete(fmt.Sprintf("more than %d bytes: %d of %d files scanned", lim.MaxBytes, i, len(files)))
			break
		}
		scanFile(sctx, c, f)
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		if sctx.Err() != nil && !c.done {
			c.incomplete(fmt.Sprintf("the scan took longer than %s: stopped in %s", lim.Timeout, f.Path))
			break
		}
	}
	return c.report(), nil
}

type collector struct {
	findings []Finding
	count    map[[2]string]int // (rule, file) → findings kept
	done     bool              // marked incomplete
}

func (c *collector) add(f Finding) {
	k := [2]string{f.Rule, f.File}
	if c.count[k] >= maxPerRule || len(c.findings) >= maxFindings {
		return
	}
	c.count[k]++
	c.findings = append(c.findings, f)
}

func (c *collector) incomplete(msg string) {
	c.done = true
	c.findings = append(c.findings, Finding{Rule: RuleIncomplete, Severity: Medium, Message: msg})
}

func (c *collector) report() Report {
	fs := c.findings
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if x := strings.Compare(a.File, b.File); x != 0 {
			return x
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	fs = slices.CompactFunc(fs, func(a, b Finding) bool { return a.Rule == b.Rule && a.File == b.File && a.Line == b.Line })
	r := Report{Findings: fs, Verdict: Clean, RulesVersion: RulesVersion, Incomplete: c.done}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range fs {
		if f.Severity.Rank() > r.Verdict.Rank() {
			r.Verdict = f.Severity
		}
	}
	return r
}

// scanFile runs every rule family over one file.
func scanFile(ctx context.Context, c *collector, f File) {
	if isBinaryFile(f, c) {
		return
	}
	t := newText(f)
	hiddenText(c, t)
	instructions(c, t)
	scripts(c, t)
	if isMarkdown(f.Path) {
		htmlComments(c, t)
	}
	if f.Path == "SKILL.md" {
		unrenderedFrontmatter(c, t)
	}
	secrets(ctx, c, t)
}

// text is a text file split into lines.
type text struct {
	path   string
	data   []byte
	lines  [][]byte // without their "\n"
	script bool     // a program (by extension, shebang or executable bit)
	prose  bool     // Markdown or plain text
}

func newText(f File) *text {
	t := &text{path: f.Path, data: f.Data, lines: bytes.Split(f.Data, []byte("\n"))}
	t.script = isScript(f.Path) || bytes.HasPrefix(f.Data, []byte("#!")) || f.Executable
	t.prose = isMarkdown(f.Path) || ext(f.Path) == "txt" || ext(f.Path) == "rst"
	return t
}

// line is the i-th line (0-based), cut to maxLineBytes for the regular
// expressions (linear in Go, but a megabyte line times forty patterns is
// still not worth reading past the point any pattern needs).
func (t *text) line(i int) string {
	l := t.lines[i]
	if len(l) > maxLineBytes {
		l = l[:maxLineBytes]
	}
	return string(bytes.TrimSuffix(l, []byte("\r")))
}

func ext(p string) string {
	i := strings.LastIndexByte(p, '.')
	if i < 0 || strings.Contains(p[i:], "/") {
		return ""
	}
	return strings.ToLower(p[i+1:])
}

func isMarkdown(p string) bool {
	switch ext(p) {
	case "md", "markdown", "mdx":
		return true
	}
	return false
}

func isScript(p string) bool {
	switch ext(p) {
	case "py", "sh", "bash", "zsh", "ksh", "fish", "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx",
		"rb", "pl", "pm", "php", "ps1", "psm1", "bat", "cmd", "lua", "r", "go", "java", "kt", "swift", "cs":
		return true
	}
	return false
}
