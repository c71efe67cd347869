package skillmd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
)

// refYAMLFormat and refParseSkillMD are how ParseSkillMD found and split
// the frontmatter before it decoded the YAML where frontmatterBounds finds
// it (issue 22): through adrg/frontmatter, which copies the file through a
// 4 KiB reader per parse. Kept as it was; only the names differ.
var refYAMLFormat = frontmatter.NewFormat("---", "---", func(data []byte, v any) error { return safeYAML(data, v.(*decoded)) })

func refParseSkillMD(data []byte, folder string) (Frontmatter, string, Problems) {
	var fm Frontmatter
	var p Problems
	data = bytes.TrimPrefix(data, []byte(BOM))
	if !utf8.Valid(data) {
		p.errorf("", RuleUTF8, "", "SKILL.md is not UTF-8 text")
		return fm, "", p
	}
	end, opened := FrontmatterEnd(data)
	switch {
	case !opened:
		p.errorf("frontmatter", RuleFrontmatter, "", "SKILL.md has no YAML frontmatter (it must start with a --- line)")
		return fm, string(data), p
	case end < 0 && len(data) >= MaxFrontmatterBytes:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is not closed within %d bytes", MaxFrontmatterBytes)
		return fm, "", p
	case end < 0:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is not closed: a --- line must end it")
		return fm, "", p
	case end > MaxFrontmatterBytes:
		p.errorf("frontmatter", RuleFrontmatter, "", "frontmatter is larger than %d bytes", MaxFrontmatterBytes)
		return fm, "", p
	}
	var d decoded
	body, err := frontmatter.MustParse(bytes.NewReader(data), &d, refYAMLFormat)
	if err != nil {
		p.errorf("frontmatter", RuleYAML, "", "frontmatter is not valid YAML: %s", firstLine(err.Error()))
		return fm, "", p
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
	return fm, strings.TrimLeft(string(body), "\r\n"), p
}

// sameParse fails t when ParseSkillMD and refParseSkillMD disagree on data,
// or ParseSkillMDBody's offset is not where ParseSkillMD's body starts.
func sameParse(t *testing.T, data []byte, folder string) {
	t.Helper()
	fm, body, p := ParseSkillMD(data, folder)
	wfm, wbody, wp := refParseSkillMD(data, folder)
	// Printed, as NaN is not DeepEqual to itself.
	if got, want := fmt.Sprintf("%#v %q %#v", fm, body, p), fmt.Sprintf("%#v %q %#v", wfm, wbody, wp); got != want {
		t.Fatalf("ParseSkillMD(%q):\ngot  %s\nwant %s", data, got, want)
	}
	if _, off, _ := ParseSkillMDBody(data, folder); string(data[off:]) != body {
		t.Fatalf("ParseSkillMDBody(%q): body at %d is %q, want %q", data, off, data[off:], body)
	}
}

// TestParseSkillMDMatchesReference: the frontmatter found where it lies
// parses as adrg/frontmatter split it, whatever the lines around it.
func TestParseSkillMDMatchesReference(t *testing.T) {
	lines := []string{
		"---", " --- ", "---\t", "\t---", "----", "--- x", "---yaml", "", " ", "\t", "\r", "\u00a0", "\u00a0---\u0085",
		"name: a", "name: pdf-tools", "description: Extract text.", "description: >", "  folded", "  text", "description: |",
		"metadata:", "  k: 1.0", "x: .nan", "version: 1.0", "- x", "x: &a [*a]", ": bad", "\t tab", "# comment",
		"\ufeff---", "body", "# Body", "\xff",
	}
	seps := []string{"\n", "\r\n", "\n\n", "\r"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var b strings.Builder
		if rng.IntN(4) == 0 {
			b.WriteString(BOM)
		}
		if rng.IntN(4) > 0 {
			b.WriteString("---\n")
		}
		for range rng.IntN(10) {
			b.WriteString(lines[rng.IntN(len(lines))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		if rng.IntN(3) > 0 {
			b.WriteString(lines[rng.IntN(len(lines))]) // no newline at the end
		}
		sameParse(t, []byte(b.String()), "a")
	}
	// A line longer than adrg/frontmatter's reader buffer.
	long := strings.Repeat("word ", 2000)
	for _, s := range []string{
		"---\nname: a\ndescription: " + long + "\n---\n" + long,
		"---\nname: a\ndescription: d\n" + strings.Repeat(" ", 5000) + "---\n\n\r\nbody",
		"\n\n---\nname: a\ndescription: d\n---",
		"---\n---\n",
	} {
		sameParse(t, []byte(s), "a")
	}
}

// FuzzParseSkillMDMatchesReference: for any input, what TestParseSkillMD
// MatchesReference checks on its generated ones.
func FuzzParseSkillMDMatchesReference(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\n# Body\n"), "a")
	f.Add([]byte("\ufeff\r\n---\r\nname: a\r\n --- \r\n\r\nx"), "a")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		if !utf8.ValidString(folder) {
			return // no object key is
		}
		sameParse(t, data, folder)
	})
}
