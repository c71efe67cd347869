package vfs

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Patterns come from callers, and their cost does too: a regular
// expression's matching time grows with its compiled size, a glob's with the
// product of its {a,b} alternatives. Both are bounded before anything runs.

// checkGlob checks a Glob pattern (or Grep's file filter).
// Segments "." and ".." would never match a listed path but would reach the
// storage call through the pattern's static prefix, so they are refused.
func (fs *FS) checkGlob(field, pattern string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s %q %s (relative doublestar syntax, e.g. \"**/*.md\")", errkind.InvalidArgument, field, clip(pattern, 100), why)
	}
	switch {
	case pattern == "":
		return bad("is empty")
	case len(pattern) > fs.cfg.MaxPatternBytes:
		return bad(fmt.Sprintf("is %d bytes, at most %d are allowed", len(pattern), fs.cfg.MaxPatternBytes))
	case strings.HasPrefix(pattern, "/") || !doublestar.ValidatePattern(pattern):
		return bad("is not a valid relative pattern")
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == "." || seg == ".." || seg == "" {
			return bad(`has an empty, "." or ".." segment`)
		}
	}
	if n := globAlternatives(pattern); n > fs.cfg.MaxGlobAlternatives {
		return bad(fmt.Sprintf("expands to more than %d alternatives; use fewer {a,b} groups", fs.cfg.MaxGlobAlternatives))
	}
	return nil
}

// globAlternatives counts the brace-free patterns pattern expands to
// ("{a,b}{c,d}" is 4, "{a,{b,c}}" is 3), saturating at MaxInt32.
func globAlternatives(pattern string) int {
	n, _ := braceSeq(pattern, 0, false)
	return n
}

// braceSeq counts a sequence from i up to the end, or (nested) up to the
// "," or "}" that ends an alternative, and returns where it stopped.
func braceSeq(p string, i int, nested bool) (int, int) {
	count := 1
	for i < len(p) {
		switch p[i] {
		case '\\':
			i += 2
			continue
		case '[': // a class: braces and commas inside are literal
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 2
				continue
			}
		case ',', '}':
			if nested {
				return count, i
			}
		case '{':
			sum := 0
			i++
			for {
				alt, j := braceSeq(p, i, true)
				sum = satAdd(sum, alt)
				i = j
				if i >= len(p) || p[i] == '}' {
					break
				}
				i++ // past ","
			}
			count = satMul(count, sum)
		}
		i++
	}
	return count, i
}

func satAdd(a, b int) int { return min(a+b, math.MaxInt32) }

func satMul(a, b int) int {
	if a != 0 && b > math.MaxInt32/a {
		return math.MaxInt32
	}
	return a * b
}

// compileRegexp compiles a Grep pattern, literal unless regex, refusing one
// whose program exceeds MaxRegexInsts.
func (fs *FS) compileRegexp(pattern string, regex, caseInsensitive bool) (*regexp.Regexp, error) {
	switch {
	case pattern == "":
		return nil, fmt.Errorf("%w: empty pattern", errkind.InvalidArgument)
	case len(pattern) > fs.cfg.MaxPatternBytes:
		return nil, fmt.Errorf("%w: pattern is %d bytes, at most %d are allowed", errkind.InvalidArgument, len(pattern), fs.cfg.MaxPatternBytes)
	}
	expr := pattern
	if !regex {
		expr = regexp.QuoteMeta(expr)
	}
	if caseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: bad regular expression: %v", errkind.InvalidArgument, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%w: bad regular expression: %v", errkind.InvalidArgument, err)
	}
	if n := len(prog.Inst); n > fs.cfg.MaxRegexInsts {
		return nil, fmt.Errorf("%w: the regular expression compiles to %d instructions, at most %d are allowed; simplify it (fewer alternatives and counted repeats)", errkind.InvalidArgument, n, fs.cfg.MaxRegexInsts)
	}
	return regexp.Compile(expr)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
