package skillmd

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The MCP skills extension (io.modelcontextprotocol/skills) serves a skill
// only when hosts accept its entry: a host rejects a whole listing over one
// entry that breaks the Agent Skills rules or the extension's limits, while
// the catalog serves such skills with warnings. What hosts check is the
// frontmatter as written (its JSON text), so the part of the check that
// reads it is done once per parse (WrittenOf) and kept with the parse;
// ExtensionProblem then decides per listing without parsing anything.

// Written is what the extension checks of a frontmatter as written. The
// zero Written is unchecked: ExtensionProblem then reads the JSON itself.
type Written uint8

const (
	writtenChecked Written = 1 << iota
	writtenUnreadable
	writtenDescriptionNotText
	writtenDescriptionTooLong
	writtenCompatibilityBad
	writtenMetadataBad
)

// WrittenOf checks the frontmatter's JSON text (Frontmatter.JSON): the
// description is text that fits, compatibility, if any, is text of 1 to
// MaxCompatibilityLen characters, metadata, if any, maps strings to strings.
func WrittenOf(js []byte) Written {
	w := writtenChecked
	var fm struct {
		Description   any
		Compatibility any
		Metadata      any
	}
	if err := json.Unmarshal(js, &fm); err != nil {
		return w | writtenUnreadable
	}
	description, _ := fm.Description.(string)
	switch {
	case description == "":
		w |= writtenDescriptionNotText
	case utf8.RuneCountInString(description) > MaxDescriptionLen:
		w |= writtenDescriptionTooLong
	}
	if fm.Compatibility != nil && !textWithin(fm.Compatibility, MaxCompatibilityLen) {
		w |= writtenCompatibilityBad
	}
	if fm.Metadata != nil && !stringsOnly(fm.Metadata) {
		w |= writtenMetadataBad
	}
	return w
}

// ExtensionProblem says why the extension does not serve a skill, or ""
// when it does: name is what the skill is listed by, fm its frontmatter
// with w what WrittenOf found of it, folder the skill folder's own name,
// and overLimits whether its files are over MaxSkillFiles or MaxSkillBytes
// (or were not counted). The skill's name must be its folder's and a valid
// skill name, as hosts check.
func ExtensionProblem(name string, fm Frontmatter, w Written, folder string, overLimits bool) string {
	if w&writtenChecked == 0 {
		w = WrittenOf(fm.JSON)
	}
	switch {
	case w&writtenUnreadable != 0:
		return "its frontmatter is not available as written"
	case fm.DisplayName != "":
		return fmt.Sprintf("its name %.80q is not a skill name (lowercase letters, digits and single hyphens)", fm.DisplayName)
	case name != folder:
		return fmt.Sprintf("its name %.80q differs from its folder %.80q", name, folder)
	case utf8.RuneCountInString(name) > MaxNameLen:
		return fmt.Sprintf("its name is longer than %d characters", MaxNameLen)
	case w&writtenDescriptionNotText != 0:
		return "its description is not text"
	case w&writtenDescriptionTooLong != 0:
		return fmt.Sprintf("its description is longer than %d characters", MaxDescriptionLen)
	case w&writtenCompatibilityBad != 0:
		return fmt.Sprintf("its compatibility is not text of 1 to %d characters", MaxCompatibilityLen)
	case w&writtenMetadataBad != 0:
		return "its metadata does not map strings to strings (quote numbers and booleans)"
	case overLimits:
		return fmt.Sprintf("it is over the extension's limits of %d files and %d bytes a skill", MaxSkillFiles, MaxSkillBytes)
	}
	return ""
}

func textWithin(v any, n int) bool {
	s, ok := v.(string)
	return ok && s != "" && utf8.RuneCountInString(s) <= n
}

func stringsOnly(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, e := range m {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}
