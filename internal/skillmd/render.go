package skillmd

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Rendering a skill: the text handed to the model when the skill is
// invoked, its base directory, then its body with $ARGUMENTS replaced by
// the arguments (or the arguments appended when the body has no
// placeholder). The catalog and a versioned render (internal/library) use
// the same rule.

// maxBaseDirBytes bounds the base directory of a render (RenderSkill's
// base_dir).
const maxBaseDirBytes = 4096

// CheckBaseDir accepts a base directory that stays one line of the text.
func CheckBaseDir(dir string) error {
	if len(dir) > maxBaseDirBytes || strings.TrimSpace(dir) != dir || strings.ContainsFunc(dir, unicode.IsControl) {
		return fmt.Errorf("%w: base_dir must be one line of at most %d bytes without leading or trailing spaces", errkind.InvalidArgument, maxBaseDirBytes)
	}
	return nil
}

const (
	// ArgumentsPlaceholder in a body is replaced by a render's arguments.
	ArgumentsPlaceholder = "$ARGUMENTS"
	renderPrefix         = "Base directory for this skill: "
	argumentsSuffix      = "\n\nARGUMENTS: "
)

// RenderedSize is len(RenderBody(dir, body, arguments)), computed without
// building the text.
func RenderedSize(dir, body, arguments string) int64 {
	size := int64(len(renderPrefix) + len(dir) + 2)
	switch n := int64(strings.Count(body, ArgumentsPlaceholder)); {
	case strings.TrimSpace(arguments) == "":
		size += int64(len(body))
	case n > 0:
		size += int64(len(body)) + n*(int64(len(arguments))-int64(len(ArgumentsPlaceholder)))
	default:
		size += int64(len(strings.TrimRight(body, "\n")) + len(argumentsSuffix) + len(arguments) + 1)
	}
	return size
}

// RenderBody builds the invocation text of a skill at dir with body.
func RenderBody(dir, body, arguments string) string {
	switch {
	case strings.TrimSpace(arguments) == "":
	case strings.Contains(body, ArgumentsPlaceholder):
		body = strings.ReplaceAll(body, ArgumentsPlaceholder, arguments)
	default:
		body = strings.TrimRight(body, "\n") + argumentsSuffix + arguments + "\n"
	}
	return renderPrefix + dir + "\n\n" + body
}
