package skills

import (
	"fmt"
	"html"
	"sort"
	"strings"
	"unicode/utf8"
)

// Prompt block formats.
const (
	FormatXML      = "xml"
	FormatMarkdown = "markdown"
)

// DefaultCharBudget is the prompt block budget when none is given.
const DefaultCharBudget = 12000

// minDescription is the shortest a description is cut to before skills
// are dropped instead.
const minDescription = 48

// FormatOptions shape a prompt block.
type FormatOptions struct {
	Format     string // FormatXML (default) or FormatMarkdown
	CharBudget int    // 0 means DefaultCharBudget
	MaxSkills  int    // 0 means no limit
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
	entry       func(name, desc, location string) string
	note        func(omitted int) string
}

var formats = map[string]blockFormat{
	FormatXML: {
		open:  "<available_skills>\n",
		close: "</available_skills>\n",
		entry: func(name, desc, loc string) string {
			return "<skill>\n<name>" + html.EscapeString(name) + "</name>\n<description>" + html.EscapeString(desc) +
				"</description>\n<location>" + html.EscapeString(loc) + "</location>\n</skill>\n"
		},
		note: func(n int) string {
			return fmt.Sprintf("<!-- %d more skills not shown; use SearchSkills to find them -->\n", n)
		},
	},
	FormatMarkdown: {
		open:  "## Available skills\n\n",
		close: "",
		entry: func(name, desc, loc string) string {
			return "- **" + name + "** (" + loc + "): " + strings.ReplaceAll(desc, "\n", " ") + "\n"
		},
		note: func(n int) string {
			return fmt.Sprintf("\n_%d more skills not shown; use SearchSkills to find them._\n", n)
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
// many are missing. Descriptions over the specification's limit are
// shortened in any case; the skills themselves are never changed.
func FormatBlock(skills []Skill, opts FormatOptions) (Block, error) {
	if opts.Format == "" {
		opts.Format = FormatXML
	}
	f, ok := formats[opts.Format]
	if !ok {
		return Block{}, fmt.Errorf("unknown format %q: want %s or %s", opts.Format, FormatXML, FormatMarkdown)
	}
	budget := opts.CharBudget
	if budget <= 0 {
		budget = DefaultCharBudget
	}
	omitted := 0
	if opts.MaxSkills > 0 && len(skills) > opts.MaxSkills {
		omitted = len(skills) - opts.MaxSkills
		skills = skills[:opts.MaxSkills]
	}
	// Descriptions are normalized when first needed: most of a large
	// library never fits the budget.
	normalized := make([]string, len(skills))
	done := make([]bool, len(skills))
	desc := func(i int) string {
		if !done[i] {
			normalized[i], done[i] = strings.Join(strings.Fields(skills[i].Description), " "), true
		}
		return normalized[i]
	}
	render := func(n, limit, omitted int) (string, int) {
		var b strings.Builder
		b.WriteString(f.open)
		shortened := 0
		for i := range n {
			d := clip(desc(i), limit)
			if d != desc(i) {
				shortened++
			}
			b.WriteString(f.entry(skills[i].Name, d, skills[i].Location()))
		}
		if omitted > 0 {
			b.WriteString(f.note(omitted))
		}
		b.WriteString(f.close)
		return b.String(), shortened
	}
	// size is the length of render's text, counted entry by entry and
	// given up once over budget, so each probe costs at most the budget,
	// however many skills there are.
	size := func(n, limit, omitted int) int {
		total := utf8.RuneCountInString(f.open) + utf8.RuneCountInString(f.close)
		if omitted > 0 {
			total += utf8.RuneCountInString(f.note(omitted))
		}
		for i := 0; i < n && total <= budget; i++ {
			total += utf8.RuneCountInString(f.entry(skills[i].Name, clip(desc(i), limit), skills[i].Location()))
		}
		return total
	}
	// Keep the most skills that fit with the shortest descriptions (the
	// size grows with n, so binary search finds it).
	n := sort.Search(len(skills)+1, func(k int) bool {
		return size(k, minDescription, omitted+len(skills)-k) > budget
	}) - 1
	n = max(n, 0)
	omitted += len(skills) - n
	// Then give descriptions the longest common limit that still fits.
	limit := sort.Search(MaxDescriptionLen+1, func(c int) bool {
		return c >= minDescription && size(n, c+1, omitted) > budget
	})
	limit = min(max(limit, minDescription), MaxDescriptionLen)
	text, shortened := render(n, limit, omitted)
	if utf8.RuneCountInString(text) > budget {
		// Not even the frame and the note fit: say only what is missing.
		text = clip(f.note(omitted+n), budget)
		omitted += n
		n = 0
	}
	return Block{Text: text, Included: n, Omitted: omitted, Shortened: shortened, DescriptionN: limit}, nil
}

// Shorten cuts s to at most n characters, marking the cut with "…".
func Shorten(s string, n int) string { return clip(s, n) }
