// Package wellknown serves the Agent Skills discovery draft (v0.2.0) at
// /.well-known/agent-skills/: index.json lists the caller's skills, each
// with the URL of its artifact (its SKILL.md, or a root-layout tar.gz) and
// that artifact's sha256. Every request is authenticated as the JSON API's
// are, and answered by calling SkillsService over the in-process channel
// (ListSkills with include_artifacts, GetSkill, ExportSkill with
// ARCHIVE_LAYOUT_ROOT), so limits, audit and the error table apply as for
// any call, and the index is the caller's own view.
package wellknown

import "strings"

// Prefix is where the draft's documents live.
const Prefix = "/.well-known/agent-skills/"

// Kind is what a well-known path names.
type Kind int

const (
	// Index is index.json.
	Index Kind = iota + 1
	// SkillMD is <name>/SKILL.md, the artifact of a skill of SKILL.md
	// alone.
	SkillMD
	// Archive is <name>.tar.gz, the artifact of any other skill.
	Archive
)

// Target is a parsed well-known path: its kind and, but for Index, the
// skill's name.
type Target struct {
	Kind Kind
	Name string
}

// Parse reads a request path under Prefix. Only the three shapes are
// accepted, with a name the draft allows; anything else is not found.
func Parse(p string) (Target, bool) {
	rest, ok := strings.CutPrefix(p, Prefix)
	if !ok {
		return Target{}, false
	}
	if rest == "index.json" {
		return Target{Kind: Index}, true
	}
	if name, ok := strings.CutSuffix(rest, "/SKILL.md"); ok && ValidName(name) {
		return Target{Kind: SkillMD, Name: name}, true
	}
	if name, ok := strings.CutSuffix(rest, ".tar.gz"); ok && ValidName(name) {
		return Target{Kind: Archive, Name: name}, true
	}
	return Target{}, false
}

// Path is the path of t, which Parse reads back as t.
func (t Target) Path() string {
	switch t.Kind {
	case SkillMD:
		return Prefix + t.Name + "/SKILL.md"
	case Archive:
		return Prefix + t.Name + ".tar.gz"
	}
	return Prefix + "index.json"
}

// ValidName reports whether name is a skill name the draft allows: 1 to 64
// lowercase letters, digits and hyphens, without a hyphen first, last or
// next to another.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
