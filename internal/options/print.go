package options

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Masked is what skillsvc config once printed for a set secret; a config
// file holding it as a secret's value is refused, as it is no secret.
const Masked = "********"

// group is one level of the option tree: the flags named prefix+leaf and
// the groups under it.
type group struct {
	prefix string // "" at the top, else "cache.redis."
	flags  []*flag.Flag
	groups []*group
}

// tree groups f's flags but skip at each ".": at every level the options
// come first, then the groups, each sorted by name.
func tree(f *flag.FlagSet, skip ...string) *group {
	root := &group{}
	f.VisitAll(func(fl *flag.Flag) { // sorted by name
		if slices.Contains(skip, fl.Name) {
			return
		}
		g := root
		segs := strings.Split(fl.Name, ".")
		for _, s := range segs[:len(segs)-1] {
			prefix := g.prefix + s + "."
			var sub *group
			for _, c := range g.groups {
				if c.prefix == prefix {
					sub = c
				}
			}
			if sub == nil {
				sub = &group{prefix: prefix}
				g.groups = append(g.groups, sub)
			}
			g = sub
		}
		g.flags = append(g.flags, fl)
	})
	var order func(g *group)
	order = func(g *group) {
		sort.Slice(g.groups, func(i, j int) bool { return g.groups[i].prefix < g.groups[j].prefix })
		for _, c := range g.groups {
			order(c)
		}
	}
	order(root)
	return root
}

// all lists g's flags depth first, in the tree's order.
func (g *group) all() []*flag.Flag {
	fls := append([]*flag.Flag(nil), g.flags...)
	for _, c := range g.groups {
		fls = append(fls, c.all()...)
	}
	return fls
}

// sections are the listings' and the reference's sections: the top-level
// options, then one per first prefix.
func sections(f *flag.FlagSet, keep func(*flag.Flag) bool) (names []string, flags [][]*flag.Flag) {
	root := tree(f)
	add := func(name string, fls []*flag.Flag) {
		var kept []*flag.Flag
		for _, fl := range fls {
			if keep(fl) {
				kept = append(kept, fl)
			}
		}
		if len(kept) > 0 {
			names, flags = append(names, name), append(flags, kept)
		}
	}
	add("", root.flags)
	for _, g := range root.groups {
		add(strings.TrimSuffix(g.prefix, "."), g.all())
	}
	return names, flags
}

// typeName is the word the listings show after a flag's name, from the
// type of its value (nothing for a boolean, which needs no value).
func typeName(fl *flag.Flag) string {
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return "value"
	}
	switch g.Get().(type) {
	case bool:
		return ""
	case time.Duration:
		return "duration"
	case int, int32, int64, uint, uint64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	}
	return "value"
}

// PrintUsage writes the listing of f's options grouped by first prefix:
// with all false the basic ones, one short line each; with all true every
// option with its category, default and whole help.
func PrintUsage(w io.Writer, f *flag.FlagSet, all bool) error {
	var b bytes.Buffer
	names, groups := sections(f, func(fl *flag.Flag) bool { return all || CategoryOf(fl) == Basic })
	// A group of one option needs no heading: it joins the first section.
	for i := len(names) - 1; i > 0; i-- {
		if len(groups[i]) == 1 {
			if names[0] != "" {
				names, groups = append([]string{""}, names...), append([][]*flag.Flag{nil}, groups...)
				i++
			}
			groups[0] = append(groups[0], groups[i]...)
			names, groups = slices.Delete(names, i, i+1), slices.Delete(groups, i, i+1)
		}
	}
	if len(groups) > 0 {
		sort.Slice(groups[0], func(i, j int) bool { return groups[0][i].Name < groups[0][j].Name })
	}
	const width, col = 100, 38
	for i, name := range names {
		if name != "" {
			fmt.Fprintf(&b, "%s:\n", name)
		}
		for _, fl := range groups[i] {
			head := "  --" + fl.Name
			if t := typeName(fl); t != "" {
				head += " " + t
			}
			if !all {
				line := fmt.Sprintf("%-*s", col-1, head) + " "
				note := defaultNote(fl)
				if len(note) > 32 { // a long default needs --help-all's room
					note = ""
				}
				help := cut(firstClause(fl.Usage), width-utf8.RuneCountInString(line+note))
				fmt.Fprintln(&b, strings.TrimRight(line+help+note, " "))
				continue
			}
			mark := CategoryOf(fl).String()
			if IsSecret(fl) {
				mark += ", secret"
			}
			fmt.Fprintf(&b, "%s  [%s]\n", head, mark)
			for _, l := range wrap(fl.Usage+defaultNote(fl), width-8) {
				fmt.Fprintf(&b, "        %s\n", l)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func defaultNote(fl *flag.Flag) string {
	if fl.DefValue == "" || (isBool(fl) && fl.DefValue == "false") || fl.DefValue == "0" {
		return ""
	}
	return fmt.Sprintf(" (default %s)", fl.DefValue)
}

// firstClause is s up to its first ". ", "; " or ": " outside parentheses
// (the listing's short help), unless that leaves too little to say
// anything ("e.g. " ends nothing).
func firstClause(s string) string {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case '.', ';', ':':
			if depth == 0 && s[i+1] == ' ' && i >= 12 && !strings.HasSuffix(s[:i], "e.g") && !strings.HasSuffix(s[:i], "i.e") {
				return s[:i]
			}
		}
	}
	return strings.TrimSuffix(s, ".")
}

// cut shortens s to n runes at a word, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 2 {
		return "…"
	}
	r := []rune(s)[:n-1]
	if i := strings.LastIndexByte(string(r), ' '); i > n/2 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}

// wrap splits s into lines of at most n runes, at spaces.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > n {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// scalar is the YAML node of a flag value's text: typed (bool, int,
// float) where the flag's Get is, else a string.
func scalar(fl *flag.Flag, text string) *yaml.Node {
	tag := "!!str"
	if g, ok := fl.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case bool:
			tag = "!!bool"
		case int, int32, int64, uint, uint64:
			tag = "!!int"
		case float64:
			// Untagged: a whole number reads back as an int (and Set
			// parses it as the float it is) instead of printing !!float.
			tag = ""
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text}
}

// document builds the YAML mapping of g, each option's value given by val
// and the comment above its key by comment (nil for none).
func document(g *group, val func(*flag.Flag) *yaml.Node, comment func(*flag.Flag) string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, fl := range g.flags {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimPrefix(fl.Name, g.prefix)}
		if comment != nil {
			k.HeadComment = comment(fl)
		}
		m.Content = append(m.Content, k, val(fl))
	}
	for _, c := range g.groups {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSuffix(strings.TrimPrefix(c.prefix, g.prefix), ".")}
		m.Content = append(m.Content, k, document(c, val, comment))
	}
	return m
}

func encode(w io.Writer, head string, n *yaml.Node) error {
	var b bytes.Buffer
	b.WriteString(head)
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(n); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteEffective writes f's values but skip's as a config file, nested. A
// secret that is set is left empty, with a comment naming its environment
// variable and flag: the file loads as it is, and a secret kept in the
// environment (which overrides the file) still applies.
func WriteEffective(w io.Writer, f *flag.FlagSet, skip ...string) error {
	return encode(w, "", document(tree(f, skip...), func(fl *flag.Flag) *yaml.Node {
		v := fl.Value.String()
		if IsSecret(fl) && v != "" {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "",
				LineComment: fmt.Sprintf("secret, set but not printed: give it with %s or --%s", EnvName(fl.Name), fl.Name)}
		}
		return scalar(fl, v)
	}, nil))
}

// WriteDefaults writes a config file of the defaults of f's options but
// skip's, each under its help, category and environment variable as
// comments; head goes first (comment lines).
func WriteDefaults(w io.Writer, f *flag.FlagSet, head string, skip ...string) error {
	return encode(w, head, document(tree(f, skip...), func(fl *flag.Flag) *yaml.Node {
		return scalar(fl, fl.DefValue)
	}, func(fl *flag.Flag) string {
		lines := wrap(fl.Usage, 76)
		mark := CategoryOf(fl).String()
		if IsSecret(fl) {
			mark += ", secret"
		}
		lines = append(lines, fmt.Sprintf("[%s] --%s, %s", mark, fl.Name, EnvName(fl.Name)))
		return strings.Join(lines, "\n")
	}))
}

// WriteReference writes the markdown reference of f's options: a section
// per first prefix, a table row per option with its category, default,
// environment variable and help.
func WriteReference(w io.Writer, f *flag.FlagSet) error {
	var b bytes.Buffer
	names, groups := sections(f, func(*flag.Flag) bool { return true })
	for i, name := range names {
		title := "General"
		if name != "" {
			title = "`" + name + ".*`"
		}
		fmt.Fprintf(&b, "\n## %s\n\n| Option | Category | Default | Environment variable | Description |\n|---|---|---|---|---|\n", title)
		for _, fl := range groups[i] {
			cat := CategoryOf(fl).String()
			if IsSecret(fl) {
				cat += ", secret"
			}
			def := "`" + fl.DefValue + "`"
			if fl.DefValue == "" {
				def = "(empty)"
			}
			fmt.Fprintf(&b, "| `--%s` | %s | %s | `%s` | %s |\n", fl.Name, cat, cell(def), EnvName(fl.Name), cell(mdEscape(fl.Usage)))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdEscape keeps help text literal in markdown: no HTML tags, emphasis.
func mdEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`).Replace(s)
}

// cell keeps s within one table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
