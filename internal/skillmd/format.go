package skillmd

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Prompt block formats.
const (
	FormatXML      = "xml"
	FormatMarkdown = "markdown"
	// FormatYAML is one YAML document per skill (name, description,
	// location), as the older S3-backed agent backends concatenated the
	// frontmatter of their skills.
	FormatYAML = "yaml"
)

var formatNames = []string{FormatXML, FormatMarkdown, FormatYAML}

// FormatNames lists the formats, for messages that name them.
func FormatNames() []string { return slices.Clone(formatNames) }

// DefaultCharBudget is the prompt block budget when none is given.
const DefaultCharBudget = 12000

// minDescription is the shortest a description is cut to before skills
// are dropped instead.
const minDescription = 48

// FormatOptions shape a prompt block.
type FormatOptions struct {
	Format     string // FormatXML (default), FormatMarkdown or FormatYAML
	CharBudget int    // 0 means DefaultCharBudget
	MaxSkills  int    // 0 means no limit
	// GroupByCategory lists flat skills first, then each category's
	// skills under a heading.
	GroupByCategory bool
	// SearchTool is the caller's tool for searching skills, which the note
	// about skills left out names; "" words the note neutrally. Check it
	// with ValidToolName: it goes into the block as is.
	SearchTool string
}

// Entry is what a prompt block says of one skill.
type Entry struct {
	Name        string
	Description string
	Category    string // "" for a flat skill
	Location    string // the virtual path of its SKILL.md
}

// Block is a rendered prompt block.
type Block struct {
	Text         string
	Included     int
	Omitted      int // dropped to fit the budget or MaxSkills
	Shortened    int // descriptions cut to fit
	DescriptionN int // the longest description kept, in characters
}

type blockFormat struct {
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

// searchHint tells the model how to find the skills left out of a block.
func searchHint(tool, quote string) string {
	if tool == "" {
		return "search the skill catalog to find them"
	}
	return "use " + quote + tool + quote + " to find them"
}

var formats = map[string]blockFormat{
	FormatXML: {
		open:         "<available_skills>\n",
		close:        "</available_skills>\n",
		before:       func(s *Entry) string { return "<skill>\n<name>" + xmlEscape(s.Name, false) + "</name>\n<description>" },
		describe:     func(desc string) string { return xmlEscape(desc, false) },
		describedLen: func(desc string) int { return xmlEscapedLen(desc) },
		after: func(s *Entry) string {
			return "</description>\n<location>" + xmlEscape(s.Location, false) + "</location>\n</skill>\n"
		},
		groupOpen:  func(c string, _ bool) string { return `<category name="` + xmlEscape(c, true) + "\">\n" },
		groupClose: "</category>\n",
		note: func(n int, tool string) string {
			return fmt.Sprintf("<!-- %d more skills not shown; %s -->\n", n, searchHint(tool, ""))
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
			return fmt.Sprintf("\n_%d more skills not shown; %s._\n", n, searchHint(tool, "`"))
		},
	},
	FormatYAML: {
		before:    func(s *Entry) string { return "---\nname: " + yamlScalar(s.Name) + "\ndescription: " },
		describe:  yamlScalar,
		after:     func(s *Entry) string { return "\nlocation: " + yamlScalar(s.Location) + "\n" },
		groupOpen: func(c string, _ bool) string { return "# " + c + "\n" },
		note: func(n int, tool string) string {
			return fmt.Sprintf("# %d more skills not shown; %s\n", n, searchHint(tool, ""))
		},
	},
}

// ValidFormat reports whether f names a format ("" is the default).
func ValidFormat(f string) bool {
	_, ok := formats[f]
	return f == "" || ok
}

// FormatBlock renders skills into a system-prompt block within the budget:
// first descriptions are shortened (all to the same length, as little as
// needed), then skills are dropped from the end, and the block says how
// many are missing when the note fits. Descriptions over the
// specification's limit are shortened in any case; the skills themselves
// are never changed. The block is always well-formed; a budget below the
// empty block is InvalidArgument.
func FormatBlock(skills []Entry, opts FormatOptions) (Block, error) {
	if opts.Format == "" {
		opts.Format = FormatXML
	}
	f, ok := formats[opts.Format]
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
	sizes := make([]entrySize, len(list))
	desc := func(i int) string {
		if !sizes[i].known {
			e := &sizes[i]
			e.normalized = collapseSpace(list[i].Description)
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
			if kept, ok := clipped(d, limit); ok && f.describedLen != nil {
				// clip(d, limit) is kept + "…", which no format escapes.
				e.cut = f.describedLen(kept) + 1
			} else {
				e.cut = utf8.RuneCountInString(f.describe(clip(d, limit)))
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
			d := clip(desc(i), limit)
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

// collapseSpace is strings.Join(strings.Fields(s), " "), without a copy
// when s is so already (most descriptions are one line).
func collapseSpace(s string) string {
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

// entrySize is what sizing an entry of a block found out, once.
type entrySize struct {
	known      bool
	normalized string // the description, white space collapsed
	runes      int    // its characters
	fixed      int    // characters of the entry besides the description
	whole      int    // characters of the description as written
	cutAt, cut int    // the last limit it was cut to, and its characters then
}

// Shorten cuts s to at most n characters, marking the cut with "…".
func Shorten(s string, n int) string { return clip(s, n) }

// toolNameRE is a tool name as agent frameworks spell them (MCP's
// "search_skills", "mcp__skills__search", "skills.search"); single hyphens
// keep a name from ending the XML comment it is written into.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:/]+(-[A-Za-z0-9_.:/]+)*$`)

// MaxToolName bounds a tool name's length.
const MaxToolName = 128

// ValidToolName reports whether name can be written into a prompt block or
// a message as a tool name; "" (no tool) is valid.
func ValidToolName(name string) bool {
	return name == "" || len(name) <= MaxToolName && toolNameRE.MatchString(name)
}

// xmlEscape escapes what XML needs escaped and nothing else: & and <, > only
// where it would end a CDATA marker, " in attributes. Characters XML cannot
// hold at all (most control characters) are dropped.
func xmlEscape(s string, attr bool) string {
	if !needsXMLEscape(s, attr) {
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
		case !xmlChar(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlEscapedLen is utf8.RuneCountInString(xmlEscape(s, false)).
func xmlEscapedLen(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case r == '&':
			n += len("&amp;")
		case r == '<':
			n += len("&lt;")
		case r == '>' && strings.HasSuffix(s[:i], "]]"):
			n += len("&gt;")
		case !xmlChar(r):
		default:
			n++
		}
	}
	return n
}

// needsXMLEscape reports whether xmlEscape changes s: it holds &, <, >,
// a quote in an attribute, or a character XML does not allow. ASCII is
// checked a byte at a time: a block escapes every name, description and
// location it sizes.
func needsXMLEscape(s string, attr bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '&' || c == '<' || c == '>' || attr && c == '"' || !xmlChar(rune(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:]) // an invalid byte is U+FFFD, which XML allows
		if !xmlChar(r) {
			return true
		}
		i += size
	}
	return false
}

// xmlChar reports whether XML 1.0 allows r in a document.
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= unicode.MaxRune
}

// yamlScalar writes s as a YAML value: plain when that reads back as the
// same string, double-quoted (Go's escapes are YAML's) otherwise.
func yamlScalar(s string) string {
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
