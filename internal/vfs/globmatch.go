package vfs

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Hidden says whether Glob's wildcards match names that start with ".".
// Agent frameworks disagree: deepagentsjs matches them (micromatch's dot
// option), deepagents for Python does not (wcmatch without DOTMATCH, as
// ripgrep and shells), so the caller chooses.
type Hidden int

const (
	// HiddenInclude: dot-names match like any other ("*" matches ".env",
	// "**" walks into ".git/").
	HiddenInclude Hidden = iota
	// HiddenExplicit: a dot-name matches only a pattern segment that starts
	// with "." ("*" leaves ".env" out, "**" does not walk into ".git/",
	// ".*" and ".git/**" reach them).
	HiddenExplicit
)

// GlobOptions is one Glob query.
type GlobOptions struct {
	// Doublestar pattern, relative to the search base.
	Pattern string
	// 0 means MaxGlobResults; larger values are capped.
	MaxResults int
	Hidden     Hidden
	// Match Pattern against each file's base name at any depth instead of
	// its path relative to the base; Pattern must not contain "/".
	BaseName bool
}

// globMatcher decides which paths (relative to the search base) a Glob
// query matches.
type globMatcher struct {
	pattern  string
	baseName bool
	// With HiddenExplicit: the pattern's brace-free alternatives, split
	// into segments (globstar for a "**" segment), matched segment by
	// segment.
	alts [][]string
}

// compileGlob checks a query's pattern and options and prepares matching.
func (fs *FS) compileGlob(opts GlobOptions) (globMatcher, error) {
	if err := fs.checkGlob("glob pattern", opts.Pattern); err != nil {
		return globMatcher{}, err
	}
	if opts.BaseName && strings.Contains(opts.Pattern, "/") {
		return globMatcher{}, fmt.Errorf("%w: glob pattern %q contains \"/\", so it cannot match a base name", errkind.InvalidArgument, clip(opts.Pattern, 100))
	}
	m := globMatcher{pattern: opts.Pattern, baseName: opts.BaseName}
	switch opts.Hidden {
	case HiddenInclude:
	case HiddenExplicit:
		if strings.Contains(opts.Pattern, globstar) {
			return globMatcher{}, fmt.Errorf("%w: glob pattern %q contains a NUL byte", errkind.InvalidArgument, clip(opts.Pattern, 100))
		}
		// checkGlob bounded the alternatives, so expanding them is too.
		for _, alt := range expandBraces(markGlobstars(opts.Pattern)) {
			segs, ok := splitSegments(alt)
			if !ok {
				return globMatcher{}, fmt.Errorf("%w: glob pattern %q has a \"/\" escaped or inside [...]; with hidden names explicit a \"/\" may only separate segments", errkind.InvalidArgument, clip(opts.Pattern, 100))
			}
			m.alts = append(m.alts, collapseGlobstars(segs))
		}
	default:
		return globMatcher{}, fmt.Errorf("%w: unknown hidden-entry mode %d", errkind.InvalidArgument, opts.Hidden)
	}
	return m, nil
}

// match reports whether rel, a file's path relative to the search base,
// matches.
func (m globMatcher) match(rel string) bool {
	if m.baseName {
		rel = path.Base(rel)
	}
	if m.alts == nil {
		ok, _ := doublestar.Match(m.pattern, rel)
		return ok
	}
	segs := strings.Split(rel, "/")
	for _, alt := range m.alts {
		if matchSegments(alt, segs) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments against brace-free pattern segments,
// where a dot-name needs a pattern segment starting with "." and "**"
// spans only names that are not hidden. ok[i][j] says pat[i:] matches
// segs[j:]; filled from the end, so the cost is at most len(pat) *
// len(segs) segment matches, whatever the number of "**".
func matchSegments(pat, segs []string) bool {
	n := len(segs) + 1
	ok := make([]bool, (len(pat)+1)*n)
	ok[len(pat)*n+len(segs)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		for j := len(segs); j >= 0; j-- {
			var v bool
			if pat[i] == globstar {
				v = ok[(i+1)*n+j] || (j < len(segs) && !hidden(segs[j]) && ok[i*n+j+1])
			} else {
				v = j < len(segs) && ok[(i+1)*n+j+1] && matchName(pat[i], segs[j])
			}
			ok[i*n+j] = v
		}
	}
	return ok[0]
}

// matchName matches one path segment against one pattern segment; a
// dot-name needs a pattern that starts with a literal "." (escaped or not).
func matchName(pat, name string) bool {
	if hidden(name) && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
		return false
	}
	// A globstar that braces joined to other text matches as "*" does.
	ok, _ := doublestar.Match(strings.ReplaceAll(pat, globstar, "*"), name)
	return ok
}

// globstar stands for a "**" that spans directories, marked before braces
// are expanded: "**" does so only as a whole segment of its alternative
// (doublestar's rule), and expanding "**{}" or "*{,x}*" must not make one.
const globstar = "\x00"

// markGlobstars replaces each "**" that is a whole segment of its
// alternative (between "/", "{", "," or the start, and "/", "}", "," or the
// end) by globstar, and shortens every other run of "*" to one, which
// matches the same.
func markGlobstars(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			b.WriteString(p[i:min(i+2, len(p))])
			i++
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(p[i : i+j+2])
			i += j + 1
		case '*':
			n := i
			for n < len(p) && p[n] == '*' {
				n++
			}
			left := i == 0 || strings.IndexByte("/{,", p[i-1]) >= 0
			right := n == len(p) || strings.IndexByte("/},", p[n]) >= 0
			if n-i == 2 && left && right {
				b.WriteString(globstar)
			} else {
				b.WriteByte('*')
			}
			i = n - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// splitSegments splits a brace-free pattern at each "/", or reports false
// when a "/" is escaped or inside a character class, where it would not
// separate segments.
func splitSegments(p string) ([]string, bool) {
	var segs []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && p[i+1] == '/' {
				return nil, false
			}
			i++
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				if strings.Contains(p[i+1:i+1+j], "/") {
					return nil, false
				}
				i += j + 1
			}
		case '/':
			segs = append(segs, p[start:i])
			start = i + 1
		}
	}
	return append(segs, p[start:]), true
}

// collapseGlobstars merges runs of globstar segments, which match the same.
func collapseGlobstars(segs []string) []string {
	out := segs[:0:0]
	for _, s := range segs {
		if s == globstar && len(out) > 0 && out[len(out)-1] == globstar {
			continue
		}
		out = append(out, s)
	}
	return out
}

// expandBraces returns the brace-free patterns p stands for: "{a,b}/c"
// gives "a/c" and "b/c". Escapes and character classes are kept as they
// are, as in braceSeq. p must be a valid doublestar pattern, whose
// alternatives checkGlob has counted.
func expandBraces(p string) []string {
	open := -1
	for i := 0; i < len(p) && open < 0; i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		case '{':
			open = i
		}
	}
	if open < 0 {
		return []string{p}
	}
	alts, end := braceAlternatives(p, open)
	var out []string
	for _, rest := range expandBraces(p[end+1:]) {
		for _, a := range alts {
			for _, ea := range expandBraces(a) {
				out = append(out, p[:open]+ea+rest)
			}
		}
	}
	return out
}

// braceAlternatives splits the group opening at p[open] into its
// alternatives (nested groups kept whole) and returns where it closes.
func braceAlternatives(p string, open int) (alts []string, end int) {
	depth, start := 0, open+1
	for i := open + 1; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		case '{':
			depth++
		case ',':
			if depth == 0 {
				alts = append(alts, p[start:i])
				start = i + 1
			}
		case '}':
			if depth == 0 {
				return append(alts, p[start:i]), i
			}
			depth--
		}
	}
	// Unclosed: checkGlob refuses such a pattern, so this is not reached;
	// treat the brace as literal rather than fail.
	return []string{p[open+1:]}, len(p) - 1
}
