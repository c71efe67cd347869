package scan

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

func isTag(r rune) bool  { return r >= 0xE0000 && r <= 0xE007F }
func isBidi(r rune) bool { return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) }
func isZeroWidth(r rune) bool {
	return (r >= 0x200B && r <= 0x200D) || r == 0x2060 || r == 0xFEFF
}

// hiddenText finds characters that render as nothing: tag characters
// (an invisible copy of ASCII that models read), bidirectional controls
// (Trojan Source: text that displays in another order than it is read) and
// zero-width characters.
func hiddenText(c *collector, t *text) {
	for i, l := range t.lines {
		if !hasHiddenRune(l) {
			continue
		}
		var tags strings.Builder
		ntags, nbidi := 0, 0
		run, longest, lone := 0, 0, 0
		var prev rune
		s := string(l)
		for j, r := range s {
			switch {
			case isTag(r):
				ntags++
				if a := r - 0xE0000; a >= 0x20 && a < 0x7f && tags.Len() < 80 {
					tags.WriteRune(a)
				}
			case isBidi(r):
				nbidi++
			case isZeroWidth(r) && !(r == 0xFEFF && i == 0 && j == 0):
				run++
				longest = max(longest, run)
				continue
			}
			if run == 1 && !joinsLetters(prev, s, j) {
				lone++
			}
			run = 0
			prev = r
		}
		if run == 1 {
			lone++ // a zero-width character ending the line joins nothing
		}
		line := i + 1
		if ntags > 0 {
			c.add(Finding{Rule: RuleTags, Severity: High, File: t.path, Line: line,
				Message: fmt.Sprintf("%d invisible Unicode tag characters, reading %q", ntags, tags.String())})
		}
		if nbidi > 0 {
			c.add(Finding{Rule: RuleBidi, Severity: High, File: t.path, Line: line,
				Message: fmt.Sprintf("%d bidirectional control characters: the text displays in another order than it reads", nbidi)})
		}
		switch {
		case longest >= 2:
			c.add(Finding{Rule: RuleZeroWidth, Severity: High, File: t.path, Line: line,
				Message: fmt.Sprintf("a run of %d zero-width characters: invisible, and able to encode hidden data", longest)})
		case lone > 0:
			c.add(Finding{Rule: RuleZeroWidth, Severity: Low, File: t.path, Line: line,
				Message: "a zero-width character outside a word or emoji sequence"})
		}
	}
}

// hasHiddenRune is a fast test: every hidden rune's UTF-8 form starts with
// 0xE2 (U+2000-2FFF), 0xEF (U+FEFF) or 0xF3 (plane 14).
func hasHiddenRune(l []byte) bool {
	for _, b := range l {
		if b == 0xE2 || b == 0xEF || b == 0xF3 {
			return true
		}
	}
	return false
}

// joinsLetters: a single ZWJ or ZWNJ between two non-ASCII characters is
// how emoji sequences and scripts such as Persian and Devanagari are
// written, not hiding.
func joinsLetters(prev rune, s string, next int) bool {
	r, _ := utf8.DecodeRuneInString(s[next:])
	return prev >= 0x80 && r >= 0x80
}

var (
	commentRE = compileLater(`(?s)<!--(.*?)-->`)
	// Instructions read as addressed to the agent: who, then what to do.
	addresseeRE  = compileLater(`(?i)\b(you|your|agent|assistant|claude|model|llm|ai)\b`)
	imperativeRE = compileLater(`(?i)\b(must|should|always|never|ignore|instead|do not|don't|execute|run|send|upload|read|delete|pretend|respond)\b`)
)

func instructive(s string) bool {
	return addresseeRE().MatchString(s) && imperativeRE().MatchString(s) && len(strings.Fields(s)) >= 5
}

// htmlComments finds HTML comments in Markdown that hold instructions: a
// rendered page hides them, the agent reading the file does not.
func htmlComments(c *collector, t *text) {
	data := t.data
	if len(data) > 1<<20 {
		data = data[:1<<20]
	}
	for _, m := range commentRE().FindAllSubmatchIndex(data, -1) {
		body := string(data[m[2]:m[3]])
		if !instructive(body) {
			continue
		}
		line := 1 + strings.Count(string(data[:m[0]]), "\n")
		c.add(Finding{Rule: RuleComment, Severity: Medium, File: t.path, Line: line,
			Message: fmt.Sprintf("an HTML comment (hidden when rendered) holds instructions: %q", clip(strings.TrimSpace(body), 100))})
	}
}

// shownFields are the frontmatter fields a prompt block shows
// (skillmd.FormatBlock: name and description); the body is shown when the
// skill is loaded.
var shownFields = map[string]bool{"name": true, "description": true}

// unrenderedFrontmatter finds instructions in SKILL.md frontmatter fields
// no prompt block shows: text an agent host may hand the model while a
// reviewer reading the listing never sees it.
func unrenderedFrontmatter(c *collector, t *text) {
	fm, _, _ := skillmd.ParseSkillMD(t.data, "")
	for key, v := range fm.Raw {
		if shownFields[key] {
			continue
		}
		var texts []string
		collectStrings(v, &texts, 0)
		for _, s := range texts {
			if !instructive(s) {
				continue
			}
			c.add(Finding{Rule: RuleUnshown, Severity: Medium, File: t.path, Line: fieldLine(t, key),
				Message: fmt.Sprintf("frontmatter field %q, which the prompt block does not show, holds instructions: %q", key, clip(s, 100))})
			break
		}
	}
}

func collectStrings(v any, out *[]string, depth int) {
	if depth > 8 || len(*out) > 100 {
		return
	}
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out, depth+1)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, out, depth+1)
		}
	}
}

// fieldLine is the line where a top-level frontmatter key is written, or 1.
func fieldLine(t *text, key string) int {
	for i := 1; i < len(t.lines) && i < 500; i++ {
		l := t.line(i)
		if strings.TrimSpace(l) == "---" {
			break
		}
		if k, _, ok := strings.Cut(l, ":"); ok && strings.Trim(k, `"' `) == key && !strings.HasPrefix(l, " ") {
			return i + 1
		}
	}
	return 1
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
