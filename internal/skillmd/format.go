package skillmd

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// Query is the task the block is for: the caller (the catalog) then
	// gives FormatBlock the skills most relevant to it, best first.
	// FormatBlock itself does not read it.
	Query string
	// Unlisted counts skills the caller left out of the list it gives
	// (those less relevant to Query): the note about skills left out
	// counts them too.
	Unlisted int
}

// Entry is what a prompt block says of one skill.
type Entry struct {
	Name        string
	Description string
	Category    string // "" for a flat skill
	Location    string // the virtual path of its SKILL.md
	// Layer and Version are not shown: they say which skill the block
	// offered (Block.Offered), for its usage record and trace.
	Layer, Version string
}

// Offered is a skill a block included.
type Offered struct{ Name, Layer, Version string }

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
	// entry is an entry's parts in order: a block is sized part by part
	// without being made, and written part by part into one builder.
	entry []part
	// esc is how the format writes a name, description and location.
	esc escaper
	// groupOpen starts a category's skills; first says nothing precedes it.
	groupOpen  func(category string, first bool) string
	groupClose string
	// The note about skills left out is noteBefore, their number, and
	// noteAfter(search tool).
	noteBefore string
	noteAfter  func(searchTool string) string
}

// part is a piece of an entry: text, or one of the skill's fields.
type part struct {
	text  string
	field field
}

type field uint8

const (
	text field = iota
	name
	description
	location
)

// searchHint tells the model how to find the skills left out of a block.
func searchHint(tool, quote string) string {
	if tool == "" {
		return "search the skill catalog to find them"
	}
	return "use " + quote + tool + quote + " to find them"
}

var formats = map[string]*blockFormat{
	FormatXML: {
		open:  "<available_skills>\n",
		close: "</available_skills>\n",
		entry: []part{
			{text: "<skill>\n<name>"}, {field: name}, {text: "</name>\n<description>"}, {field: description},
			{text: "</description>\n<location>"}, {field: location}, {text: "</location>\n</skill>\n"},
		},
		esc:        xmlText,
		groupOpen:  func(c string, _ bool) string { return `<category name="` + xmlEscape(c, true) + "\">\n" },
		groupClose: "</category>\n",
		noteBefore: "<!-- ",
		noteAfter:  func(tool string) string { return " more skills not shown; " + searchHint(tool, "") + " -->\n" },
	},
	FormatMarkdown: {
		open: "## Available skills\n\n",
		entry: []part{
			{text: "- **"}, {field: name}, {text: "** ("}, {field: location}, {text: "): "}, {field: description}, {text: "\n"},
		},
		esc: plainText,
		groupOpen: func(c string, first bool) string {
			if first {
				return "### " + c + "\n\n"
			}
			return "\n### " + c + "\n\n"
		},
		noteBefore: "\n_",
		noteAfter:  func(tool string) string { return " more skills not shown; " + searchHint(tool, "`") + "._\n" },
	},
	FormatYAML: {
		entry: []part{
			{text: "---\nname: "}, {field: name}, {text: "\ndescription: "}, {field: description},
			{text: "\nlocation: "}, {field: location}, {text: "\n"},
		},
		esc:        yamlText,
		groupOpen:  func(c string, _ bool) string { return "# " + c + "\n" },
		noteBefore: "# ",
		noteAfter:  func(tool string) string { return " more skills not shown; " + searchHint(tool, "") + "\n" },
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
	b, _, err := FormatBlockOffered(skills, opts)
	return b, err
}

// FormatBlockOffered is FormatBlock, and the skills the block included,
// in block order.
func FormatBlockOffered(skills []Entry, opts FormatOptions) (Block, []Offered, error) {
	if opts.Format == "" {
		opts.Format = FormatXML
	}
	f, ok := formats[opts.Format]
	if !ok {
		return Block{}, nil, fmt.Errorf("%w: unknown format %q: want %s", errkind.InvalidArgument, opts.Format, strings.Join(formatNames, ", "))
	}
	if !ValidToolName(opts.SearchTool) {
		return Block{}, nil, fmt.Errorf("%w: search tool %q is not a tool name", errkind.InvalidArgument, opts.SearchTool)
	}
	budget := opts.CharBudget
	if budget <= 0 {
		budget = DefaultCharBudget
	}
	frame := utf8.RuneCountInString(f.open) + utf8.RuneCountInString(f.close)
	if frame > budget {
		return Block{}, nil, fmt.Errorf("%w: char_budget %d is smaller than an empty %s block (%d characters)", errkind.InvalidArgument, budget, opts.Format, frame)
	}
	b := newBlock(f, skills, opts)
	defer b.free()
	omitted := max(opts.Unlisted, 0)
	if opts.MaxSkills > 0 && len(b.list) > opts.MaxSkills {
		omitted += len(b.list) - opts.MaxSkills
		b.list = b.list[:opts.MaxSkills]
	}
	// size is the length of the block's text, counted entry by entry and
	// given up once over budget, so each probe costs at most the budget,
	// however many skills there are.
	size := func(n, limit, omitted int) int {
		total := frame + b.noteLen(omitted)
		for i := 0; i < n && total <= budget; i++ {
			e := b.entry(i)
			total += e.heading + e.fixed.runes + b.described(i, limit).runes
		}
		return total
	}
	// Keep the most skills that fit with the shortest descriptions (the
	// size grows with n, so binary search finds it).
	all := len(b.list)
	n := sort.Search(all+1, func(k int) bool {
		return size(k, minDescription, omitted+all-k) > budget
	}) - 1
	n = max(n, 0)
	omitted += all - n
	noted := omitted
	if size(n, minDescription, noted) > budget {
		noted = 0 // not even the note fits beside the frame: the counts say it
	}
	// Then give descriptions the longest common limit that still fits.
	limit := sort.Search(MaxDescriptionLen+1, func(c int) bool {
		return c >= minDescription && size(n, c+1, noted) > budget
	})
	limit = min(max(limit, minDescription), MaxDescriptionLen)
	text, shortened := b.render(n, limit, noted)
	offered := make([]Offered, n)
	for i, e := range b.list[:n] {
		offered[i] = Offered{Name: e.Name, Layer: e.Layer, Version: e.Version}
	}
	return Block{Text: text, Included: n, Omitted: omitted, Shortened: shortened, DescriptionN: limit}, offered, nil
}

// block is one FormatBlock call's work, reused by the next call: the
// entries in block order, and what sizing each found out. What an entry's
// size needs is worked out when first needed: most of a large library
// never fits the budget. Each probe sizes every entry it reaches, and the
// probes differ only in the description limit, so an entry's fixed part is
// counted once, and its description once per limit it is cut to (its
// whole size serves every limit it is not cut at).
type block struct {
	f         *blockFormat
	group     bool
	list      []*Entry
	sizes     []entrySize
	noteAfter string
	quote     []byte // scratch for YAML's quoted values
}

// entrySize is what sizing an entry of a block found out, once.
type entrySize struct {
	known      bool
	normalized string // the description, white space collapsed
	runes      int    // its characters
	fixed      textLen
	whole      textLen // of the description as written
	// fastCut: normalized is ASCII and written as it is (writtenAsIs),
	// so its length cut to a limit takes no scan of it.
	fastCut bool
	cutAt   int     // the last limit it was cut to
	cut     textLen // its description's length then
	// opened is the category heading the entry opens, "" for none;
	// heading counts its characters and a group close's, which each
	// heading brings.
	opened  string
	heading int
}

// textLen is the length of written text in characters (what budgets
// count) and bytes (what the builder holds).
type textLen struct{ runes, bytes int }

func (a textLen) plus(b textLen) textLen { return textLen{a.runes + b.runes, a.bytes + b.bytes} }

func lenOf(s string) textLen { return textLen{utf8.RuneCountInString(s), len(s)} }

// blocks keeps blocks for reuse: a prompt block made on every call of a
// large library otherwise allocates its bookkeeping anew each time.
var blocks = sync.Pool{New: func() any { return new(block) }}

// maxPooledEntries bounds the bookkeeping a pooled block keeps.
const maxPooledEntries = 4096

func newBlock(f *blockFormat, skills []Entry, opts FormatOptions) *block {
	b := blocks.Get().(*block)
	b.f, b.group = f, opts.GroupByCategory
	b.list = slices.Grow(b.list[:0], len(skills))
	for i := range skills {
		b.list = append(b.list, &skills[i])
	}
	if b.group {
		// Flat skills first, then categories by name, each in the order given.
		slices.SortStableFunc(b.list, func(a, b *Entry) int {
			return strings.Compare(a.Category, b.Category)
		})
	}
	b.sizes = slices.Grow(b.sizes[:0], len(skills))[:len(skills)]
	clear(b.sizes)
	b.noteAfter = f.noteAfter(opts.SearchTool)
	return b
}

// free returns b to the pool without what it refers to.
func (b *block) free() {
	if cap(b.list) > maxPooledEntries || cap(b.quote) > 64<<10 {
		return
	}
	clear(b.list[:cap(b.list)])
	clear(b.sizes[:cap(b.sizes)])
	*b = block{list: b.list[:0], sizes: b.sizes[:0], quote: b.quote[:0]}
	blocks.Put(b)
}

// entry returns what sizing entry i needs, worked out on first use.
func (b *block) entry(i int) *entrySize {
	e := &b.sizes[i]
	if e.known {
		return e
	}
	s := b.list[i]
	e.normalized = collapseSpace(s.Description)
	e.runes = utf8.RuneCountInString(e.normalized)
	for _, p := range b.f.entry {
		switch p.field {
		case text:
			e.fixed = e.fixed.plus(lenOf(p.text))
		case name:
			e.fixed = e.fixed.plus(b.measure(s.Name, false))
		case location:
			e.fixed = e.fixed.plus(b.measure(s.Location, false))
		}
	}
	asIs := b.writtenAsIs(e.normalized)
	if asIs && b.f.esc != yamlText { // YAML quotes some whole values it leaves cut ones plain
		e.whole = textLen{e.runes, len(e.normalized)}
	} else {
		e.whole = b.measure(e.normalized, false)
	}
	e.fastCut = asIs && isASCII(e.normalized)
	e.cutAt, e.known = -1, true
	if c := s.Category; b.group && c != "" && (i == 0 || b.list[i-1].Category != c) {
		e.opened = b.f.groupOpen(c, i == 0)
		e.heading = utf8.RuneCountInString(e.opened) + utf8.RuneCountInString(b.f.groupClose)
	}
	return e
}

// described is the length of entry i's description cut to limit.
func (b *block) described(i, limit int) textLen {
	e := b.entry(i)
	switch {
	case e.runes <= limit:
		return e.whole
	case e.cutAt != limit:
		e.cutAt = limit
		if e.fastCut {
			// ASCII written as it is: a rune is a byte, and what clip
			// keeps of it is written as it is too (writtenAsIs).
			if kept := strings.TrimSpace(e.normalized[:max(limit-1, 0)]); kept != "" {
				e.cut = textLen{len(kept) + 1, len(kept) + len(ellipsis)}
				return e.cut
			}
		}
		if kept, ok := clipped(e.normalized, limit); ok {
			e.cut = b.measure(kept, true)
		} else {
			e.cut = b.measure(clip(e.normalized, limit), false)
		}
	}
	return e.cut
}

// writtenAsIs reports whether the format writes s, and every non-empty
// part of it that starts it, as they are, with an ellipsis after a cut
// one: then the length of a cut description is its own, found without
// looking at it (described). A description without XML's special
// characters, or one YAML takes unquoted, is so.
func (b *block) writtenAsIs(s string) bool {
	switch b.f.esc {
	case xmlText:
		return !needsXMLEscape(s, false)
	case yamlText:
		// Every character a part of s holds is one of s's, and it
		// starts with s's first.
		return yamlPlain(s, true)
	}
	return true
}

// isASCII reports whether s is ASCII: a rune a byte (an invalid byte
// counts as one rune but is written as U+FFFD, three).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// noteLen is the length of the note about omitted skills, 0 for none.
func (b *block) noteLen(omitted int) int {
	if omitted == 0 {
		return 0
	}
	return utf8.RuneCountInString(b.f.noteBefore) + digits(omitted) + utf8.RuneCountInString(b.noteAfter)
}

func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// bytes is the length in bytes of render's text.
func (b *block) bytes(n, limit, omitted int) int {
	f := b.f
	size := len(f.open) + len(f.close)
	if omitted > 0 {
		size += len(f.noteBefore) + digits(omitted) + len(b.noteAfter)
	}
	for i := range n {
		e := b.entry(i)
		if e.opened != "" {
			size += len(e.opened) + len(f.groupClose)
		}
		size += e.fixed.bytes + b.described(i, limit).bytes
	}
	return size
}

// render writes the block of the first n entries, descriptions cut to
// limit, noting omitted skills (0: no note), into a builder sized once.
func (b *block) render(n, limit, omitted int) (string, int) {
	f := b.f
	var w strings.Builder
	w.Grow(b.bytes(n, limit, omitted))
	w.WriteString(f.open)
	shortened := 0
	inGroup := false
	for i := range n {
		e, s := b.entry(i), b.list[i]
		if e.opened != "" {
			if inGroup {
				w.WriteString(f.groupClose)
			}
			w.WriteString(e.opened)
			inGroup = true
		}
		for _, p := range f.entry {
			switch p.field {
			case text:
				w.WriteString(p.text)
			case name:
				b.write(&w, s.Name, false)
			case location:
				b.write(&w, s.Location, false)
			case description:
				if e.runes <= limit {
					b.write(&w, e.normalized, false)
				} else if kept, ok := clipped(e.normalized, limit); ok {
					b.write(&w, kept, true)
				} else {
					b.write(&w, clip(e.normalized, limit), false) // not UTF-8
				}
			}
		}
		if e.runes > limit {
			shortened++
		}
	}
	if inGroup {
		w.WriteString(f.groupClose)
	}
	if omitted > 0 {
		w.WriteString(f.noteBefore)
		var d [20]byte
		w.Write(strconv.AppendInt(d[:0], int64(omitted), 10))
		w.WriteString(b.noteAfter)
	}
	w.WriteString(f.close)
	return w.String(), shortened
}

// escaper is how a format writes a skill's name, description and location.
type escaper uint8

const (
	plainText escaper = iota
	xmlText
	yamlText
)

// ellipsis marks a shortened description; no format escapes it, and it
// ends no YAML word.
const ellipsis = "…"

// measure is the length of what write(s, cut) writes, without writing it.
func (b *block) measure(s string, cut bool) textLen {
	var n textLen
	switch b.f.esc {
	case plainText:
		n = lenOf(s)
	case xmlText:
		n = xmlEscapedLen(s)
	case yamlText:
		if yamlPlain(s, cut) {
			n = lenOf(s)
		} else {
			b.quote = strconv.AppendQuote(b.quote[:0], s)
			n = textLen{utf8.RuneCount(b.quote), len(b.quote)}
		}
	}
	if cut {
		n = n.plus(textLen{1, len(ellipsis)})
	}
	return n
}

// write writes s as the format escapes it, or s + "…" when cut, which is
// s's text with the ellipsis after it (inside YAML's quotes).
func (b *block) write(w *strings.Builder, s string, cut bool) {
	switch b.f.esc {
	case plainText:
		w.WriteString(s)
	case xmlText:
		writeXML(w, s, false)
	case yamlText:
		if !yamlPlain(s, cut) {
			b.quote = strconv.AppendQuote(b.quote[:0], s)
			w.Write(b.quote[:len(b.quote)-1])
			if cut {
				w.WriteString(ellipsis)
			}
			w.WriteByte('"')
			return
		}
		w.WriteString(s)
	}
	if cut {
		w.WriteString(ellipsis)
	}
}

// collapseSpace is strings.Join(strings.Fields(s), " "), without a copy
// when s is so already (most descriptions are one line), and with one
// otherwise.
func collapseSpace(s string) string {
	prevSpace := true // a leading space is not kept
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return joinFields(s) // other white space is Unicode's
			}
			prevSpace = false
			i += size - 1
		case c == ' ' && !prevSpace:
			prevSpace = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return joinFields(s)
		default:
			prevSpace = false
		}
	}
	if prevSpace && s != "" {
		return joinFields(s) // a trailing space
	}
	return s
}

// joinFields is strings.Join(strings.Fields(s), " ") written into one
// buffer: fields are separated by unicode.IsSpace, and bytes that are not
// UTF-8 are kept as they are.
func joinFields(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
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
	writeXML(&b, s, attr)
	return b.String()
}

// writeXML writes xmlEscape(s, attr) to w.
func writeXML(w *strings.Builder, s string, attr bool) {
	if !needsXMLEscape(s, attr) {
		w.WriteString(s)
		return
	}
	for i, r := range s {
		switch {
		case r == '&':
			w.WriteString("&amp;")
		case r == '<':
			w.WriteString("&lt;")
		case r == '>' && strings.HasSuffix(s[:i], "]]"):
			w.WriteString("&gt;")
		case attr && r == '"':
			w.WriteString("&quot;")
		case !xmlChar(r):
		default:
			w.WriteRune(r)
		}
	}
}

// xmlEscapedLen is the length of xmlEscape(s, false). Escaping spells an
// invalid byte as U+FFFD; s written as is keeps it.
func xmlEscapedLen(s string) textLen {
	if !needsXMLEscape(s, false) {
		return lenOf(s)
	}
	var n textLen
	for i, r := range s {
		switch {
		case r == '&':
			n = n.plus(lenOf("&amp;"))
		case r == '<':
			n = n.plus(lenOf("&lt;"))
		case r == '>' && strings.HasSuffix(s[:i], "]]"):
			n = n.plus(lenOf("&gt;"))
		case !xmlChar(r):
		default:
			n = n.plus(textLen{1, utf8.RuneLen(r)})
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

// yamlPlain reports whether s (s + "…" when cut) is written as a plain
// YAML value: when that reads back as the same string. Otherwise it is
// double-quoted (Go's escapes are YAML's).
func yamlPlain(s string, cut bool) bool {
	first, _ := utf8.DecodeRuneInString(s)
	if s == "" || !unicode.IsLetter(first) && first != '/' || strings.ContainsAny(s, ":#") ||
		strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return false // with the ellipsis after it too: its first rune is no letter
	}
	if cut {
		return true // the ellipsis ends it: no trailing space, no YAML word
	}
	if s != strings.TrimSpace(s) {
		return false
	}
	// Only a string of at most 5 bytes lowers to one of these (no rune
	// of more than one byte lowers to their letters): the test spares
	// the copy ToLower makes of most descriptions.
	if len(s) <= len("false") {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}
