package doctest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Links checks the relative links of the Markdown page at root/page: each
// must name a file or directory of the repository and, with a #fragment
// into a Markdown page, one of that page's headings as GitHub spells its
// anchor. Links to other sites are not followed (CI reaches registries
// only). Code blocks and inline code are not links.
func Links(root, page string) []error {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, l := range links(string(src)) {
		target, frag, _ := strings.Cut(l.dest, "#")
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file := page
		if target != "" {
			file = path.Join(path.Dir(page), target)
			if strings.HasPrefix(file, "../") {
				errs = append(errs, fmt.Errorf("%s:%d: link %q leaves the repository", page, l.line, l.dest))
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: link %q: no such file %s", page, l.line, l.dest, file))
				continue
			}
		}
		if frag == "" || !strings.HasSuffix(file, ".md") {
			continue
		}
		anchors, err := Anchors(root, file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !anchors[frag] {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %s has no heading #%s", page, l.line, l.dest, file, frag))
		}
	}
	return errs
}

type link struct {
	dest string
	line int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+(?:\([^()\s]*\))?)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// links returns the destinations of a page's links outside code.
func links(src string) []link {
	var out []link
	fence := ""
	for i, line := range strings.Split(src, "\n") {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(strings.TrimSpace(line), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), string(fence[0]))) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], i + 1})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{m[1], i + 1})
		}
	}
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, any
// longer run), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// Anchors returns the anchors of a page's headings as GitHub makes them
// (lower case, punctuation dropped, spaces as hyphens, a repeated one
// suffixed -1, -2, ...), and any <a name=...> or id=... anchors.
func Anchors(root, page string) (map[string]bool, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(src), "\n") {
		if f := fenceOf(line); f != "" {
			if fence == "" {
				fence = f
			} else if strings.HasPrefix(strings.TrimSpace(line), fence) {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		t := strings.TrimLeft(line, "#")
		if len(t) == len(line) || len(line)-len(t) > 6 || !strings.HasPrefix(t, " ") {
			continue
		}
		slug := Slug(t)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors, nil
}

// Slug is GitHub's anchor of a heading's text.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
