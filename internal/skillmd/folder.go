package skillmd

import (
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Severity says whether a problem refuses a skill.
type Severity uint8

// Severities; the values are the proto's SkillProblem.Severity.
const (
	SeverityError   Severity = 1 // the skill is refused (or not served)
	SeverityWarning Severity = 2 // served, with the warning listed
)

// Problem is one reason a skill breaks (or strains) the rules.
type Problem struct {
	Severity Severity
	// File is relative to the skill folder ("SKILL.md"); "" for the
	// folder as a whole.
	File string
	// Field is the frontmatter field ("name", "metadata.owner") or other
	// part ("frontmatter", "path", "size"); "" for the file as a whole.
	Field string
	// Rule is a stable identifier (the Rule* constants); "" for a
	// problem no rule names.
	Rule  string
	Value string // the offending value, shortened
	// Message is the problem in a sentence, as listings word it.
	Message string
}

// SkillFile is the file every skill folder has.
const SkillFile = "SKILL.md"

// Rules, stable identifiers clients may match on.
const (
	RuleUTF8                = "utf8"
	RuleFrontmatter         = "frontmatter"
	RuleYAML                = "yaml"
	RuleNameRequired        = "name-required"
	RuleNameFormat          = "name-format"
	RuleNameLength          = "name-length"
	RuleNameMatchesFolder   = "name-matches-folder"
	RuleDescriptionRequired = "description-required"
	RuleDescriptionLength   = "description-length"
	RuleCompatibilityLength = "compatibility-length"
	RuleFieldType           = "field-type"
	RuleFolderName          = "folder-name"
	RuleSkillMDRequired     = "skill-md-required"
	RulePathCanonical       = "path-canonical"
	RulePathDuplicate       = "path-duplicate"
	RuleNestedSkill         = "nested-skill"
	RuleMaxFiles            = "max-files"
	RuleMaxBytes            = "max-bytes"
)

// maxValueRunes bounds Problem.Value.
const maxValueRunes = 80

// File is one file of a skill folder to check.
type File struct {
	Path string // relative to the folder, e.g. "scripts/run.py"
	Data []byte
	// Size, when larger than Data, is the file's length and Data only
	// its head (or nothing): no rule reads a file other than SKILL.md,
	// so a client checking a folder on disk need not read the others.
	Size int64
	// Mode is the file's permission bits as its author gave them (0: not
	// given); see filemode.Of for the mode it is served with.
	Mode fs.FileMode
}

// size is the file's length.
func (f File) size() int64 { return max(int64(len(f.Data)), f.Size) }

// CheckFolder checks a skill folder named name as publishing one requires:
// the catalog's rules for its SKILL.md (ParseSkillMD with the folder's
// name), and stricter ones for what the catalog only warns about in a
// bucket: the frontmatter name must be the folder's (a valid skill name);
// every path is in the canonical spelling of virtual paths, once, and no
// other SKILL.md is nested in the folder; the MCP extension's file-count
// and size limits hold; an eval_queries.json it holds (with its Data) is
// in the Agent Skills format, else a warning (ParseEvalQueries). It does no
// I/O, so a client checks a folder offline exactly as the server does; the
// problems are in a stable order (folder, paths, SKILL.md, evals).
func CheckFolder(name string, files []File) []Problem {
	var p Problems
	if !ValidName(name) || utf8.RuneCountInString(name) > MaxNameLen {
		p.Add(Problem{Severity: SeverityError, Field: "name", Rule: RuleFolderName, Value: clip(name, maxValueRunes),
			Message: fmt.Sprintf("folder name %q must be a skill name: at most %d lowercase letters, digits and single hyphens", clip(name, maxValueRunes), MaxNameLen)})
	}
	var total int64
	for _, f := range files {
		total += f.size()
	}
	if len(files) > MaxSkillFiles {
		p.Add(Problem{Severity: SeverityError, Field: "files", Rule: RuleMaxFiles, Value: fmt.Sprint(len(files)),
			Message: fmt.Sprintf("the folder has %d files, at most %d are allowed", len(files), MaxSkillFiles)})
	}
	if total > MaxSkillBytes {
		p.Add(Problem{Severity: SeverityError, Field: "size", Rule: RuleMaxBytes, Value: fmt.Sprint(total),
			Message: fmt.Sprintf("the folder holds %d bytes, at most %d are allowed", total, MaxSkillBytes)})
	}
	seen := make(map[string]bool, len(files))
	var skillMD, evals []byte
	found, hasEvals, badPaths := false, false, 0
	for _, f := range files {
		switch {
		case !mounts.Addressable(f.Path):
			// A folder of thousands of bad paths is refused with a few.
			if badPaths++; badPaths <= maxPathProblems {
				p.Add(Problem{Severity: SeverityError, File: clip(f.Path, maxValueRunes), Field: "path", Rule: RulePathCanonical, Value: clip(f.Path, maxValueRunes),
					Message: fmt.Sprintf("path %q must be relative to the folder in the canonical spelling (no leading or trailing \"/\", \"//\", \".\" or \"..\", control characters or backslashes; NFC)", clip(f.Path, maxValueRunes))})
			}
			continue
		case seen[f.Path]:
			p.Add(Problem{Severity: SeverityError, File: f.Path, Field: "path", Rule: RulePathDuplicate, Value: f.Path,
				Message: fmt.Sprintf("path %q is given twice", f.Path)})
			continue
		}
		seen[f.Path] = true
		if f.Path == SkillFile {
			skillMD, found = f.Data, true
		} else if f.Path == EvalQueriesFile && f.size() == int64(len(f.Data)) {
			evals, hasEvals = f.Data, true
		} else if strings.HasSuffix(f.Path, "/"+SkillFile) {
			p.Add(Problem{Severity: SeverityError, File: f.Path, Field: "path", Rule: RuleNestedSkill, Value: f.Path,
				Message: fmt.Sprintf("%s: a skill folder holds no other SKILL.md (libraries read it as another skill)", f.Path)})
		}
	}
	if badPaths > maxPathProblems {
		p.Add(Problem{Severity: SeverityError, Field: "path", Rule: RulePathCanonical, Value: fmt.Sprint(badPaths),
			Message: fmt.Sprintf("%d more paths are not canonical", badPaths-maxPathProblems)})
	}
	if !found {
		p.Add(Problem{Severity: SeverityError, File: SkillFile, Rule: RuleSkillMDRequired,
			Message: "the folder has no SKILL.md"})
		return p.List
	}
	_, _, parsed := ParseSkillMDBody(skillMD, name)
	for _, pr := range parsed.List {
		// The catalog serves a bucket's skill whose name is not its
		// folder's under the folder's name; a publish names it right.
		if pr.Rule == RuleNameMatchesFolder || (pr.Rule == RuleNameFormat && pr.Field == "name") {
			pr.Severity = SeverityError
			if pr.Rule == RuleNameFormat {
				pr.Message = fmt.Sprintf("name %q must be a skill name equal to the folder's, %q", pr.Value, name)
			} else {
				pr.Message = fmt.Sprintf("name %q must equal the folder's name %q", pr.Value, name)
			}
		}
		p.Add(pr)
	}
	if hasEvals {
		_, ps := ParseEvalQueries(evals)
		for _, pr := range ps {
			p.Add(pr)
		}
	}
	return p.List
}

// maxPathProblems bounds the path problems CheckFolder lists one by one.
const maxPathProblems = 20

// HasErrors reports whether problems holds an error.
func HasErrors(problems []Problem) bool {
	for _, p := range problems {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}
