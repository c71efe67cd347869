package scanpolicy

import (
	"fmt"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// maxNoted bounds the findings one skill's listing notes, so a skill of a
// thousand findings costs a listing a few lines.
const maxNoted = 10

// where is a finding's place: "file:line", "file" or "the skill".
func where(f scan.Finding) string {
	switch {
	case f.File == "":
		return "the skill"
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

// Line is one finding as a warning or error line: "scan: high
// script/download-exec at scripts/setup.sh:3: pipes a download ...".
func Line(f scan.Finding) string {
	return fmt.Sprintf("scan: %s %s at %s: %s", f.Severity, f.Rule, where(f), f.Message)
}

// Problems are the report's findings as a publish's problems: high ones
// errors when block refuses them, the rest warnings.
func Problems(r scan.Report, block bool) []skillmd.Problem {
	out := make([]skillmd.Problem, 0, len(r.Findings))
	for _, f := range r.Findings {
		sev := skillmd.SeverityWarning
		if block && f.Severity == scan.High {
			sev = skillmd.SeverityError
		}
		p := skillmd.Problem{Severity: sev, File: f.File, Rule: f.Rule, Message: Line(f)}
		if f.Line > 0 {
			p.Field = fmt.Sprintf("line %d", f.Line)
		}
		out = append(out, p)
	}
	return out
}

// Blocks reports whether block mode refuses a report: a high finding.
func Blocks(r scan.Report) bool { return r.Verdict == scan.High }

// BlockedError is a publish the library's scan policy refused: a
// FAILED_PRECONDITION whose status carries every finding (rule, file,
// line, message) as a SkillProblems detail.
type BlockedError struct {
	Problems []skillmd.Problem
}

func (e *BlockedError) Error() string {
	var msgs []string
	for _, p := range e.Problems {
		if p.Severity == skillmd.SeverityError && len(msgs) < maxNoted {
			msgs = append(msgs, strings.TrimPrefix(p.Message, "scan: "))
		}
	}
	return "failed precondition: the library's scan policy (--library.scan=block) refuses a skill with high-severity findings: " + strings.Join(msgs, "; ")
}

// Unwrap gives the error its kind.
func (e *BlockedError) Unwrap() error { return errkind.FailedPrecondition }

// SkillProblems lets the error table attach the findings to the status.
func (e *BlockedError) SkillProblems() []skillmd.Problem { return e.Problems }

// notes are what a listing shows of a report under mode: warnings, and
// under block the errors that withhold the skill.
func notes(r scan.Report, mode Mode) (warnings, errs []string) {
	block := mode == Block && Blocks(r)
	for _, f := range r.Findings {
		switch {
		case block && f.Severity == scan.High:
			if len(errs) < maxNoted {
				errs = append(errs, BlockedPrefix+Line(f))
			}
		case len(warnings) < maxNoted:
			warnings = append(warnings, Line(f))
		}
	}
	if n := len(r.Findings) - len(warnings) - len(errs); n > 0 {
		warnings = append(warnings, fmt.Sprintf("scan: %d more findings (skillctl scan shows them all)", n))
	}
	return warnings, errs
}

// Pending is the error a skill carries under block until its scan is
// done: withheld, not yet judged.
const Pending = BlockedPrefix + "not scanned yet (scanning in the background)"

// BlockedPrefix starts every error the policy withholds a skill with.
const BlockedPrefix = "blocked by the library's scan policy: "

// Withheld reports whether a listed skill of layer (skillview's layer
// name), invalid with errs, is one the scan policy withholds from a
// library it does not belong to the caller: the organization's or a
// team's. A caller who is neither its owner nor an admin is not told it
// exists (a user's own library is the user's: they see why).
func Withheld(layer string, errs []string) bool {
	if layer == skillview.LayerUser {
		return false
	}
	for _, e := range errs {
		if strings.HasPrefix(e, BlockedPrefix) {
			return true
		}
	}
	return false
}
