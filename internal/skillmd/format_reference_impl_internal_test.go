package skillmd

// The prompt block as FormatBlock rendered it before it wrote entries
// straight into one sized builder (issue 22): every part of every entry a
// string of its own. TestFormatBlockMatchesReference holds the two to the
// same bytes. Kept as it was; only the names differ.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

type refBlockFormat struct {
	open, close string
	// An entry is before(s) + describe(desc) + after(s): sizing a block
	// counts the parts that do not depend on the description once.
	before, after func(s *Entry) string
	describe      func(desc string) string
	// describedLen is utf8.RuneCountInString(describe(desc)) without
	// making it; nil when only making it tells.
	describedLen func(desc string) int
	// groupOpen starts a category's skills; first says nothing precedes it.
	groupOpen  func(category string, first bool) string
	groupClose string
	note       func(omitted int, searchTool string) string
}

// refSearchHint tells the model how to find the skills left out of a block.
func refSearchHint(tool, quote string) string {
	if tool == "" {
		return "search the skill catalog to find them"
	}
	return "use " + quote + tool + quote + " to find them"
}

var refFormats = map[string]refBlockFormat{
	FormatXML: {
		open:  "<available_skills>\n",
		close: "</available_skills>\n",
		before: func(s *Entry) string {
			return "<skill>\n<name>" + refXMLEscape(s.Name, false) + "</name>\n<description>"
		},
		describe:     func(desc string) string { return refXMLEscape(desc, false) },
		describedLen: func(desc string) int { return refXMLEscapedLen(desc) },
		after: func(s *Entry) string {
			return "</description>\n<location>" + refXMLEscape(s.Location, false) + "</location>\n</skill>\n"
		},
		groupOpen:  func(c string, _ bool) string { return `<category name="` + refXMLEscape(c, true) + "\">\n" },
		groupClose: "</category>\n",
		note: func(n int, tool string) string {
			return fmt.Sprintf("<!-- %d more skills not shown; %s -->\n", n, refSearchHint(tool, ""))
		},
	},
	FormatMarkdown: {
		open:         "## Available skills\n\n",
		before:       func(s *Entry) string { return "- **" + s.Name + "** (" + s.Location + "): " },
		describe:     func(desc string) string { return desc },
		describedLen: utf8.RuneCountInString,
		after:        func(*Entry) string { return "\n" },
		groupOpen: func(c string, first bool) string {
			if first {
				return "### " + c + "\n\n"
			}
			return "\n### " + c + "\n\n"
		},
		note: func(n int, tool string) string {
			return fmt.Sprintf("\n_%d more skills not shown; %s._\n", n, refSearchHint(tool, "`"))
		},
	},
	FormatYAML: {
		before:    func(s *Entry) string { return "---\nname: " + refYAMLScalar(s.Name) + "\ndescription: " },
		describe:  refYAMLScalar,
		after:     func(s *Entry) string { return "\nlocation: " + refYAMLScalar(s.Location) + "\n" },
		groupOpen: func(c string, _ bool) string { return "# " + c + "\n" },
		note: func(n int, tool string) string {
			return fmt.Sprintf("# %d more skills not shown; %s\n", n, refSearchHint(tool, ""))
		},
	},
}

// refFormatBlock renders skills into a system-prompt block within the budget:
// first descriptions are shortened (all to the same length, as little as
// needed), then skills are dropped from the end, and the block says how
// many are missing when the note fits. Descriptions over the
// specification's limit are shortened in any case; the skills themselves
// are never changed. The block is always well-formed; a budget below the
// empty block is InvalidArgument.
func refFormatBlock(skills []Entry, opts FormatOptions) (Block, error) {
	if opts.Format == "" {
		opts.Format = FormatXML
	}
	f, ok := refFormats[opts.Format]
	if !ok {
		return Block{}, fmt.Errorf("%w: unknown format %q: want %s", errkind.InvalidArgument, opts.Format, strings.Join(formatNames, ", "))
	}
	if !ValidToolName(opts.SearchTool) {
		return Block{}, fmt.Errorf("%w: search tool %q is not a tool name", errkind.InvalidArgument, opts.SearchTool)
	}
	budget := opts.CharBudget
	if budget <= 0 {
		budget = DefaultCharBudget
	}
	frame := utf8.RuneCountInString(f.open) + utf8.RuneCountInString(f.close)
	if frame > budget {
		return Block{}, fmt.Errorf("%w: char_budget %d is smaller than an empty %s block (%d characters)", errkind.InvalidArgument, budget, opts.Format, frame)
	}
	list := make([]*Entry, len(skills))
	for i := range skills {
		list[i] = &skills[i]
	}
	if opts.GroupByCategory {
		// Flat skills first, then categories by name, each in the order given.
		slices.SortStableFunc(list, func(a, b *Entry) int {
			return strings.Compare(a.Category, b.Category)
		})
	}
	omitted := 0
	if opts.MaxSkills > 0 && len(list) > opts.MaxSkills {
		omitted = len(list) - opts.MaxSkills
		list = list[:opts.MaxSkills]
	}
	// What each entry's size needs is worked out when first needed: most
	// of a large library never fits the budget. Each probe below sizes
	// every entry it reaches, and the probes differ only in the
	// description limit, so an entry's fixed part is counted once, and its
	// description once per limit it is cut to (its whole size serves every
	// limit it is not cut at).
	sizes := make([]refEntrySize, len(list))
	desc := func(i int) string {
		if !sizes[i].known {
			e := &sizes[i]
			e.normalized = refCollapseSpace(list[i].Description)
			e.runes = utf8.RuneCountInString(e.normalized)
			e.fixed = utf8.RuneCountInString(f.before(list[i])) + utf8.RuneCountInString(f.after(list[i]))
			e.whole = utf8.RuneCountInString(f.describe(e.normalized))
			e.cutAt, e.known = -1, true
		}
		return sizes[i].normalized
	}
	// entryLen is the length of entry i with its description cut to limit.
	entryLen := func(i, limit int) int {
		d := desc(i)
		e := &sizes[i]
		switch {
		case e.runes <= limit:
			return e.fixed + e.whole
		case e.cutAt != limit:
			e.cutAt = limit
			if kept, ok := refClipped(d, limit); ok && f.describedLen != nil {
				// refClip(d, limit) is kept + "…", which no format escapes.
				e.cut = f.describedLen(kept) + 1
			} else {
				e.cut = utf8.RuneCountInString(f.describe(refClip(d, limit)))
			}
		}
		return e.fixed + e.cut
	}
	// opensGroup returns the heading skill i starts, if any.
	opensGroup := func(i int) (string, bool) {
		c := list[i].Category
		if !opts.GroupByCategory || c == "" || (i > 0 && list[i-1].Category == c) {
			return "", false
		}
		return f.groupOpen(c, i == 0), true
	}
	note := func(omitted int) string {
		if omitted == 0 {
			return ""
		}
		return f.note(omitted, opts.SearchTool)
	}
	// size is the length of render's text, counted entry by entry and
	// given up once over budget, so each probe costs at most the budget,
	// however many skills there are.
	size := func(n, limit int, note string) int {
		total := frame + utf8.RuneCountInString(note)
		for i := 0; i < n && total <= budget; i++ {
			if h, ok := opensGroup(i); ok {
				total += utf8.RuneCountInString(h) + utf8.RuneCountInString(f.groupClose)
			}
			total += entryLen(i, limit)
		}
		return total
	}
	render := func(n, limit int, note string) (string, int) {
		var b strings.Builder
		b.WriteString(f.open)
		shortened := 0
		inGroup := false
		for i := range n {
			if h, ok := opensGroup(i); ok {
				if inGroup {
					b.WriteString(f.groupClose)
				}
				b.WriteString(h)
				inGroup = true
			}
			d := refClip(desc(i), limit)
			if d != desc(i) {
				shortened++
			}
			b.WriteString(f.before(list[i]))
			b.WriteString(f.describe(d))
			b.WriteString(f.after(list[i]))
		}
		if inGroup {
			b.WriteString(f.groupClose)
		}
		b.WriteString(note)
		b.WriteString(f.close)
		return b.String(), shortened
	}
	// Keep the most skills that fit with the shortest descriptions (the
	// size grows with n, so binary search finds it).
	n := sort.Search(len(list)+1, func(k int) bool {
		return size(k, minDescription, note(omitted+len(list)-k)) > budget
	}) - 1
	n = max(n, 0)
	omitted += len(list) - n
	shown := note(omitted)
	if size(n, minDescription, shown) > budget {
		shown = "" // not even the note fits beside the frame: the counts say it
	}
	// Then give descriptions the longest common limit that still fits.
	limit := sort.Search(MaxDescriptionLen+1, func(c int) bool {
		return c >= minDescription && size(n, c+1, shown) > budget
	})
	limit = min(max(limit, minDescription), MaxDescriptionLen)
	text, shortened := render(n, limit, shown)
	return Block{Text: text, Included: n, Omitted: omitted, Shortened: shortened, DescriptionN: limit}, nil
}

// refCollapseSpace is strings.Join(strings.Fields(s), " "), without a copy
// when s is so already (most descriptions are one line).
func refCollapseSpace(s string) string {
	prevSpace := true // a leading space is not kept
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return strings.Join(strings.Fields(s), " ") // other white space is Unicode's
		case c == ' ' && !prevSpace:
			prevSpace = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return strings.Join(strings.Fields(s), " ")
		default:
			prevSpace = false
		}
	}
	if prevSpace && s != "" {
		return strings.Join(strings.Fields(s), " ") // a trailing space
	}
	return s
}

// refEntrySize is what sizing an entry of a block found out, once.
type refEntrySize struct {
	known      bool
	normalized string // the description, white space collapsed
	runes      int    // its characters
	fixed      int    // characters of the entry besides the description
	whole      int    // characters of the description as written
	cutAt, cut int    // the last limit it was cut to, and its characters then
}

// refXMLEscape escapes what XML needs escaped and nothing else: & and <, > only
// where it would end a CDATA marker, " in attributes. Characters XML cannot
// hold at all (most control characters) are dropped.
func refXMLEscape(s string, attr bool) string {
	if !refNeedsXMLEscape(s, attr) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>' && strings.HasSuffix(s[:i], "]]"):
			b.WriteString("&gt;")
		case attr && r == '"':
			b.WriteString("&quot;")
		case !refXMLChar(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// refXMLEscapedLen is utf8.RuneCountInString(refXMLEscape(s, false)).
func refXMLEscapedLen(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case r == '&':
			n += len("&amp;")
		case r == '<':
			n += len("&lt;")
		case r == '>' && strings.HasSuffix(s[:i], "]]"):
			n += len("&gt;")
		case !refXMLChar(r):
		default:
			n++
		}
	}
	return n
}

// refNeedsXMLEscape reports whether refXMLEscape changes s: it holds &, <, >,
// a quote in an attribute, or a character XML does not allow. ASCII is
// checked a byte at a time: a block escapes every name, description and
// location it sizes.
func refNeedsXMLEscape(s string, attr bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '&' || c == '<' || c == '>' || attr && c == '"' || !refXMLChar(rune(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:]) // an invalid byte is U+FFFD, which XML allows
		if !refXMLChar(r) {
			return true
		}
		i += size
	}
	return false
}

// refXMLChar reports whether XML 1.0 allows r in a document.
func refXMLChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= unicode.MaxRune
}

// refYAMLScalar writes s as a YAML value: plain when that reads back as the
// same string, double-quoted (Go's escapes are YAML's) otherwise.
func refYAMLScalar(s string) string {
	first, _ := utf8.DecodeRuneInString(s)
	plain := s != "" && s == strings.TrimSpace(s) && (unicode.IsLetter(first) || first == '/') &&
		!strings.ContainsAny(s, ":#") && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		plain = false
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// refClipped is what refClip(s, n) keeps of s before the "…" it adds, as a part
// of s, when it cuts s and keeps valid UTF-8 (ok).
func refClipped(s string, n int) (kept string, ok bool) {
	if utf8.RuneCountInString(s) <= n {
		return "", false
	}
	end := 0
	for range max(n-1, 0) {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	if !utf8.ValidString(s[:end]) {
		return "", false
	}
	return strings.TrimSpace(s[:end]), true
}

// refClip shortens s to at most n runes, marking the cut with "…".
func refClip(s string, n int) string {
	if kept, ok := refClipped(s, n); ok {
		return kept + "…"
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	// Not UTF-8: as a conversion to runes spells invalid bytes, U+FFFD each.
	r := []rune(s)
	return strings.TrimSpace(string(r[:max(n-1, 0)])) + "…"
}
