package skillmd

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits from the Agent Skills specification, and our own parse bounds.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
	// MaxFrontmatterBytes caps what is read to find and parse frontmatter.
	MaxFrontmatterBytes = 64 << 10
	maxYAMLDepth        = 16
	maxYAMLNodes        = 4096
)

// Frontmatter is the parsed, normalized header of a SKILL.md.
type Frontmatter struct {
	// Name is what the skill is listed and addressed by: the frontmatter's
	// name, or the folder's when that name breaks the specification's
	// character rules (DisplayName then keeps it).
	Name string
	// DisplayName is a frontmatter name that is not a skill name
	// ("Escritura de Compraventa", as older agent backends wrote them).
	DisplayName   string
	Description   string
	License       string
	Version       string
	Compatibility string
	AllowedTools  []string
	Metadata      map[string]string
	// Extra holds fields the specification does not define, as decoded
	// (JSON-compatible values); other agent tools add their own.
	Extra map[string]any
	// Raw is every field as decoded, for callers that want it all.
	Raw map[string]any
	// JSON is the frontmatter exactly as written, as JSON text: read by the
	// YAML 1.2 core schema as hosts read it, numbers with every digit,
	// dates as strings. The skills extension serves it verbatim.
	JSON []byte
}

// Problems found while parsing: Errors make a skill invalid, Warnings are
// served alongside it. List holds the same problems structured (file,
// field, rule, value), in the order found; Errors and Warnings are their
// messages, which listings serve.
type Problems struct {
	Errors   []string
	Warnings []string
	List     []Problem
}

// Valid reports whether the skill may be served.
func (p Problems) Valid() bool { return len(p.Errors) == 0 }

// Errorf adds an error of no particular rule.
func (p *Problems) Errorf(format string, a ...any) {
	p.Add(Problem{Severity: SeverityError, File: SkillFile, Message: fmt.Sprintf(format, a...)})
}

// Warnf adds a warning of no particular rule.
func (p *Problems) Warnf(format string, a ...any) {
	p.Add(Problem{Severity: SeverityWarning, File: SkillFile, Message: fmt.Sprintf(format, a...)})
}

// Add adds pr, its message to Errors or Warnings by its severity.
func (p *Problems) Add(pr Problem) {
	p.List = append(p.List, pr)
	if pr.Severity == SeverityError {
		p.Errors = append(p.Errors, pr.Message)
	} else {
		p.Warnings = append(p.Warnings, pr.Message)
	}
}

// errorf and warnf add a problem of a rule about a field of SKILL.md.
func (p *Problems) errorf(field, rule, value, format string, a ...any) {
	p.Add(Problem{Severity: SeverityError, File: SkillFile, Field: field, Rule: rule, Value: clip(value, maxValueRunes), Message: fmt.Sprintf(format, a...)})
}

func (p *Problems) warnf(field, rule, value, format string, a ...any) {
	p.Add(Problem{Severity: SeverityWarning, File: SkillFile, Field: field, Rule: rule, Value: clip(value, maxValueRunes), Message: fmt.Sprintf(format, a...)})
}

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports whether name follows the specification's character
// rules for a skill name (its length is only warned about).
func ValidName(name string) bool { return nameRE.MatchString(name) }

// BOM is the byte order mark a SKILL.md may start with; it is ignored.
const BOM = "\ufeff"

// FrontmatterEnd returns the offset just past the closing "---" line of the
// frontmatter at the start of data (BOM already removed), or -1 when data
// holds no closing line (yet). opened reports whether data starts, after
// blank lines, with an opening "---" line.
func FrontmatterEnd(data []byte) (end int, opened bool) {
	_, _, end, opened = frontmatterBounds(data)
	return end, opened
}

// frontmatterBounds is FrontmatterEnd that also returns where the YAML
// lies: data[start:stop], the lines between the opening and closing lines.
// Lines are compared with their spaces trimmed.
func frontmatterBounds(data []byte) (start, stop, end int, opened bool) {
	off := 0
	for off < len(data) {
		line := data[off:]
		next := len(data)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], off+i+1
		}
		trimmed := bytes.TrimSpace(line)
		switch {
		case !opened && len(trimmed) == 0:
			// the parser skips leading blank lines too
		case !opened && string(trimmed) != "---":
			return 0, 0, -1, false
		case !opened:
			opened, start = true, next
		case string(trimmed) == "---":
			return start, off, next, true
		}
		off = next
	}
	return 0, 0, -1, opened
}

var errAlias = errors.New("YAML anchors and aliases are not allowed in frontmatter")

// decoded is what safeYAML makes of frontmatter: the fields as Go values,
// and the JSON text as written.
type decoded struct {
	fields map[string]any
	json   []byte
}

// safeYAML decodes YAML into out after checking its shape on the node
// tree, so alias bombs and absurd nesting fail fast without expansion.
func safeYAML(data []byte, out *decoded) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	nodes := 0
	var walk func(n *yaml.Node, depth int) error
	walk = func(n *yaml.Node, depth int) error {
		if nodes++; nodes > maxYAMLNodes {
			return fmt.Errorf("frontmatter has more than %d YAML nodes", maxYAMLNodes)
		}
		if depth > maxYAMLDepth {
			return fmt.Errorf("frontmatter nests deeper than %d levels", maxYAMLDepth)
		}
		if n.Kind == yaml.AliasNode || n.Anchor != "" {
			return errAlias
		}
		for _, c := range n.Content {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(&doc, 0); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		out.json = []byte("{}")
		return nil // empty frontmatter
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		return errors.New("frontmatter is not a mapping of fields")
	}
	// Before keepNumbersAsText: the JSON keeps each value's own type.
	js, err := coreJSON(doc.Content[0])
	if err != nil {
		return err
	}
	keepNumbersAsText(doc.Content[0])
	if err := doc.Decode(&out.fields); err != nil {
		return err
	}
	out.json = js
	return nil
}

// textFields are the fields read as text.
var textFields = map[string]bool{"name": true, "description": true, "license": true, "version": true, "compatibility": true}

// keepNumbersAsText makes numbers in the text fields and metadata values
// decode as written: version: 1.0 is a float to YAML but "1.0" to its
// author, and decoding it as a number would turn it into "1".
func keepNumbersAsText(m *yaml.Node) {
	asText := func(n *yaml.Node) {
		if t := n.ShortTag(); n.Kind == yaml.ScalarNode && (t == "!!int" || t == "!!float") {
			n.Tag = "!!str"
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch {
		case textFields[k.Value]:
			asText(v)
		case k.Value == "metadata" && v.Kind == yaml.MappingNode:
			for j := 1; j < len(v.Content); j += 2 {
				asText(v.Content[j])
			}
		}
	}
}

// ParserVersion names the rules of ParseSkillMD. Replicas share what it
// returned for a version of a SKILL.md (EncodeParsed, in the shared cache,
// keyed by this version), so bump it with any change that can change its
// output for some input: a rule, a message's wording, a bound, the reading
// of YAML or JSON (a dependency's upgrade included). Unbumped, replicas
// serve the old rules' result until it expires (--skills.head-ttl).
const ParserVersion = 1

// ParseSkillMD parses a SKILL.md (or its head, as long as the head holds the
// whole frontmatter). It returns the frontmatter, the body after it, and the
// problems; folder is the name of the skill's folder, which name should equal.
// A name that breaks only the specification's character rules is a warning
// when folder is known: the skill is then named after its folder, and the
// frontmatter's name is kept as its DisplayName.
func ParseSkillMD(data []byte, folder string) (Frontmatter, string, Problems) {
	fm, body, p := ParseSkillMDBody(data, folder)
	return fm, string(data[body:]), p
}

// ParseSkillMDBody is ParseSkillMD returning where the body starts in data
// instead of a copy of it: a caller that keeps data as a string takes the
// body from that.
func ParseSkillMDBody(data []byte, folder string) (Frontmatter, int, Problems) {
	var fm Frontmatter
	var p Problems
	bom := 0
	if bytes.HasPrefix(data, []byte(BOM)) {
		bom = len(BOM)
	}
	text := data[bom:]
	if !utf8.Valid(text) {
		p.errorf("", RuleUTF8, "", "SKILL.md is not UTF-8 text")
		return fm, len(data), p
	}
	// The YAML is decoded where it lies; the adrg/frontmatter parser this
	// replaced found the same lines, but copied the file through a 4 KiB
	// reader per parse.
	start, stop, end, opened := frontmatterBounds(text)
	switch {
	case !opened:
		p.errorf("frontmatter", RuleFrontmatter, "", "SKILL.md has no YAML frontmatter (it must start with a --- line)")
		return fm, bom, p
	case end < 0 && len(text) >= MaxFrontmatterBytes:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is not closed within %d bytes", MaxFrontmatterBytes)
		return fm, len(data), p
	case end < 0:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is not closed: a --- line must end it")
		return fm, len(data), p
	case end > MaxFrontmatterBytes:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is larger than %d bytes", MaxFrontmatterBytes)
		return fm, len(data), p
	}
	var d decoded
	if err := safeYAML(text[start:stop], &d); err != nil {
		p.errorf("frontmatter", RuleYAML, "", "frontmatter is not valid YAML: %s", firstLine(err.Error()))
		return fm, len(data), p
	}
	if d.fields == nil {
		d.fields = map[string]any{}
	}
	if d.json == nil {
		d.json = []byte("{}")
	}
	fm.Raw = jsonable(d.fields).(map[string]any)
	fm.JSON = d.json
	fm.Extra = map[string]any{}
	for k, v := range fm.Raw {
		switch k {
		case "name":
			fm.Name = scalar(&p, k, v)
		case "description":
			fm.Description = scalar(&p, k, v)
		case "license":
			fm.License = scalar(&p, k, v)
		case "version":
			fm.Version = scalar(&p, k, v)
		case "compatibility":
			fm.Compatibility = scalar(&p, k, v)
		case "allowed-tools":
			fm.AllowedTools = tools(&p, v)
		case "metadata":
			fm.Metadata = stringMap(&p, v)
		default:
			fm.Extra[k] = v
		}
	}
	validate(&fm, &p, folder)
	return fm, bodyStart(data, bom+end), p
}

// bodyStart is where the body starts in data, whose frontmatter ends at
// end: after the blank lines that follow it.
func bodyStart(data []byte, end int) int {
	for end < len(data) && (data[end] == '\r' || data[end] == '\n') {
		end++
	}
	return end
}

// Split returns where a SKILL.md's frontmatter ends (data[:head], BOM and
// closing line included, is what an index holds of it: a parse of those
// bytes is a parse of data) and where its body starts, as ParseSkillMDBody
// finds them for a valid one (an invalid one has no body). ok is false
// where ParseSkillMDBody reports a problem of the whole file rather than
// of its frontmatter: text that is not UTF-8, a frontmatter not opened or
// not closed within MaxFrontmatterBytes.
func Split(data []byte) (head, body int, ok bool) {
	bom := 0
	if bytes.HasPrefix(data, []byte(BOM)) {
		bom = len(BOM)
	}
	text := data[bom:]
	_, _, end, opened := frontmatterBounds(text)
	if !opened || end < 0 || end > MaxFrontmatterBytes || !utf8.Valid(text) {
		return 0, 0, false
	}
	return bom + end, bodyStart(data, bom+end), true
}

func validate(fm *Frontmatter, p *Problems, folder string) {
	switch n := fm.Name; {
	case n == "":
		p.errorf("name", RuleNameRequired, "", "name is required")
	case !nameRE.MatchString(n) && folder == "":
		p.errorf("name", RuleNameFormat, n, "name %q must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen", clip(n, 80))
	case !nameRE.MatchString(n):
		// Libraries written for older agent backends use display names;
		// serving them under their folder's name keeps them reachable.
		p.warnf("name", RuleNameFormat, n, "name %q is not a skill name (lowercase letters, digits and single hyphens): the skill is named %q after its folder, and keeps the name as its display name", clip(n, 80), folder)
		fm.Name = folder
		if n != folder {
			fm.DisplayName = n
		}
	default:
		if c := utf8.RuneCountInString(n); c > MaxNameLen {
			p.warnf("name", RuleNameLength, n, "name is %d characters, the limit is %d", c, MaxNameLen)
		}
		if folder != "" && n != folder {
			p.warnf("name", RuleNameMatchesFolder, n, "name %q differs from its folder %q", clip(n, 80), folder)
		}
	}
	if strings.TrimSpace(fm.Description) == "" {
		p.errorf("description", RuleDescriptionRequired, "", "description is required")
	} else if n := utf8.RuneCountInString(fm.Description); n > MaxDescriptionLen {
		p.warnf("description", RuleDescriptionLength, fm.Description, "description is %d characters, the limit is %d; listings shorten it", n, MaxDescriptionLen)
	}
	if n := utf8.RuneCountInString(fm.Compatibility); n > MaxCompatibilityLen {
		p.warnf("compatibility", RuleCompatibilityLength, fm.Compatibility, "compatibility is %d characters, the limit is %d", n, MaxCompatibilityLen)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return clip(s, 200)
}

// clipped is what clip(s, n) keeps of s before the "…" it adds, as a part
// of s, when it cuts s and keeps valid UTF-8 (ok).
func clipped(s string, n int) (kept string, ok bool) {
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

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	if kept, ok := clipped(s, n); ok {
		return kept + "…"
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	// Not UTF-8: as a conversion to runes spells invalid bytes, U+FFFD each.
	r := []rune(s)
	return strings.TrimSpace(string(r[:max(n-1, 0)])) + "…"
}

// scalar renders a YAML scalar as text: version: 1.0 is a float to YAML but a
// version string to its author.
func scalar(p *Problems, key string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool, int, int64, float64:
		return fmt.Sprint(x)
	}
	p.warnf(key, RuleFieldType, fmt.Sprint(v), "%s should be a string", key)
	return ""
}

func tools(p *Problems, v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, t := range x {
			if s, ok := t.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			} else {
				p.warnf("allowed-tools", RuleFieldType, fmt.Sprint(t), "allowed-tools entries should be strings")
			}
		}
		return out
	}
	p.warnf("allowed-tools", RuleFieldType, fmt.Sprint(v), "allowed-tools should be a space-separated string or a list")
	return nil
}

func stringMap(p *Problems, v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			p.warnf("metadata", RuleFieldType, fmt.Sprint(v), "metadata should be a map of strings")
		}
		return nil
	}
	out := make(map[string]string, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch x := m[k].(type) {
		case string:
			out[k] = x
		case bool, int, int64, float64:
			out[k] = fmt.Sprint(x)
		default:
			p.warnf("metadata."+k, RuleFieldType, fmt.Sprint(m[k]), "metadata.%s should be a string", k)
		}
	}
	return out
}

// jsonable converts decoded YAML into values protobuf Struct and JSON accept.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64, string, bool, nil:
		return x
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}
