package wellknown_test

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/wellknown"
)

func TestParse(t *testing.T) {
	for path, want := range map[string]wellknown.Target{
		"/.well-known/agent-skills/index.json":                             {Kind: wellknown.Index},
		"/.well-known/agent-skills/pdf/SKILL.md":                           {Kind: wellknown.SkillMD, Name: "pdf"},
		"/.well-known/agent-skills/pdf-2.tar.gz":                           {Kind: wellknown.Archive, Name: "pdf-2"},
		"/.well-known/agent-skills/":                                       {},
		"/.well-known/agent-skills/index.json/":                            {},
		"/.well-known/agent-skills/Pdf.tar.gz":                             {},
		"/.well-known/agent-skills/-pdf.tar.gz":                            {},
		"/.well-known/agent-skills/a--b/SKILL.md":                          {},
		"/.well-known/agent-skills/pdf/skill.md":                           {},
		"/.well-known/agent-skills/pdf/ref/SKILL.md":                       {},
		"/.well-known/agent-skills/../x.tar.gz":                            {},
		"/.well-known/agent-skills/.tar.gz":                                {},
		"/.well-known/skills/pdf.tar.gz":                                   {},
		"/.well-known/agent-skills/" + strings.Repeat("a", 65) + ".tar.gz": {},
		"/.well-known/agent-skills/" + strings.Repeat("a", 64) + ".tar.gz": {Kind: wellknown.Archive, Name: strings.Repeat("a", 64)},
	} {
		got, ok := wellknown.Parse(path)
		if got != want || ok != (want.Kind != 0) {
			t.Errorf("Parse(%q) = %+v, %t; want %+v", path, got, ok, want)
		}
	}
}

// FuzzParse: every accepted path names a skill the draft allows (or the
// index), and is exactly the path of what it parsed to, so one document
// has one URL.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/.well-known/agent-skills/index.json", "/.well-known/agent-skills/pdf/SKILL.md",
		"/.well-known/agent-skills/a-b.tar.gz", "/.well-known/agent-skills/a/SKILL.md.tar.gz", "/.well-known/agent-skills/x.tar.gz/SKILL.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, ok := wellknown.Parse(p)
		if !ok {
			return
		}
		if got.Path() != p {
			t.Fatalf("Parse(%q) = %+v, whose path is %q", p, got, got.Path())
		}
		if got.Kind != wellknown.Index && !wellknown.ValidName(got.Name) {
			t.Fatalf("Parse(%q) accepted the name %q", p, got.Name)
		}
		for _, c := range got.Name {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				t.Fatalf("Parse(%q): name %q has %q", p, got.Name, c)
			}
		}
		if again, ok := wellknown.Parse(got.Path()); !ok || again != got {
			t.Fatalf("Parse(Path(%+v)) = %+v, %t", got, again, ok)
		}
	})
}
