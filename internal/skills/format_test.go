package skills_test

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/skills"
)

// skillN returns a listed skill named name with description desc.
func skillN(name, desc string) skills.Skill {
	return skills.Skill{
		Path: "/skills/cat/" + name, Dir: "cat/" + name, Folder: name, Category: "cat",
		Frontmatter: skills.Frontmatter{Name: name, Description: desc},
	}
}

// manySkills returns n skills whose descriptions are descLen characters.
func manySkills(n, descLen int) []skills.Skill {
	out := make([]skills.Skill, n)
	for i := range out {
		name := fmt.Sprintf("skill-%03d", i)
		desc := fmt.Sprintf("Skill %d does things. ", i)
		desc = (desc + strings.Repeat("lorem ipsum ", descLen/12+1))[:descLen]
		out[i] = skillN(name, desc)
	}
	return out
}

// xmlBlock is the shape FormatXML promises.
type xmlBlock struct {
	XMLName xml.Name `xml:"available_skills"`
	Skills  []struct {
		Name        string `xml:"name"`
		Description string `xml:"description"`
		Location    string `xml:"location"`
	} `xml:"skill"`
}

func TestFormatBlockXML(t *testing.T) {
	list := []skills.Skill{
		skillN("pdf", `Extract <text> & "tables" from 'PDF' files.`),
		skillN("csv", "Read\n  comma-separated   files."),
	}
	b, err := skills.FormatBlock(list, skills.FormatOptions{Format: skills.FormatXML})
	if err != nil {
		t.Fatal(err)
	}
	var got xmlBlock
	if err := xml.Unmarshal([]byte(b.Text), &got); err != nil {
		t.Fatalf("block is not well-formed XML: %v\n%s", err, b.Text)
	}
	want := []struct{ name, desc, loc string }{
		{"pdf", `Extract <text> & "tables" from 'PDF' files.`, "/skills/cat/pdf/SKILL.md"},
		{"csv", "Read comma-separated files.", "/skills/cat/csv/SKILL.md"}, // whitespace folded
	}
	if len(got.Skills) != len(want) {
		t.Fatalf("got %d skills, want %d:\n%s", len(got.Skills), len(want), b.Text)
	}
	for i, w := range want {
		s := got.Skills[i]
		if s.Name != w.name || s.Description != w.desc || s.Location != w.loc {
			t.Errorf("skill %d = %+v, want %+v", i, s, w)
		}
	}
	for _, raw := range []string{"<text>", ` & `, `"tables"`} {
		if strings.Contains(b.Text, raw) {
			t.Errorf("block holds %q unescaped:\n%s", raw, b.Text)
		}
	}
	if !strings.HasPrefix(b.Text, "<available_skills>\n<skill>\n<name>pdf</name>") {
		t.Errorf("block starts %q", b.Text[:min(60, len(b.Text))])
	}
	if b.Included != 2 || b.Omitted != 0 || b.Shortened != 0 {
		t.Errorf("Included/Omitted/Shortened = %d/%d/%d, want 2/0/0", b.Included, b.Omitted, b.Shortened)
	}
	// The default format is XML.
	def, err := skills.FormatBlock(list, skills.FormatOptions{})
	if err != nil || def.Text != b.Text {
		t.Errorf("default format differs from xml: %v\n%s", err, def.Text)
	}
}

func TestFormatBlockMarkdown(t *testing.T) {
	list := []skills.Skill{skillN("pdf", "Extract text\nfrom PDFs."), skillN("csv", "Read CSV.")}
	b, err := skills.FormatBlock(list, skills.FormatOptions{Format: skills.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	want := "## Available skills\n\n" +
		"- **pdf** (/skills/cat/pdf/SKILL.md): Extract text from PDFs.\n" +
		"- **csv** (/skills/cat/csv/SKILL.md): Read CSV.\n"
	if b.Text != want {
		t.Errorf("text =\n%s\nwant\n%s", b.Text, want)
	}
}

func TestFormatBlockUnknownFormat(t *testing.T) {
	if _, err := skills.FormatBlock(nil, skills.FormatOptions{Format: "json"}); err == nil {
		t.Error("FormatBlock accepted format json")
	}
	for _, tc := range []struct {
		format string
		want   bool
	}{{"", true}, {"xml", true}, {"markdown", true}, {"json", false}, {"XML", false}} {
		if got := skills.ValidFormat(tc.format); got != tc.want {
			t.Errorf("ValidFormat(%q) = %v, want %v", tc.format, got, tc.want)
		}
	}
}

// entries counts the skills rendered in a block.
func entries(format, text string) int {
	if format == skills.FormatMarkdown {
		return strings.Count(text, "\n- **")
	}
	return strings.Count(text, "<skill>")
}

var omittedRE = regexp.MustCompile(`(\d+) more skills not shown`)

func TestFormatBlockBudget(t *testing.T) {
	list := manySkills(200, 300)
	for _, format := range []string{skills.FormatXML, skills.FormatMarkdown} {
		for _, budget := range []int{1, 10, 60, 200, 500, 1000, 5000, 12000, 50000} {
			t.Run(fmt.Sprintf("%s/%d", format, budget), func(t *testing.T) {
				b, err := skills.FormatBlock(list, skills.FormatOptions{Format: format, CharBudget: budget})
				if err != nil {
					t.Fatal(err)
				}
				if n := utf8.RuneCountInString(b.Text); n > budget {
					t.Fatalf("block is %d characters, budget %d", n, budget)
				}
				if b.Included+b.Omitted != len(list) {
					t.Errorf("Included %d + Omitted %d != %d", b.Included, b.Omitted, len(list))
				}
				if got := entries(format, b.Text); got != b.Included {
					t.Errorf("block shows %d skills, Included = %d", got, b.Included)
				}
				if b.Omitted > 0 && b.Included > 0 {
					m := omittedRE.FindStringSubmatch(b.Text)
					if m == nil || m[1] != strconv.Itoa(b.Omitted) {
						t.Errorf("note = %q, want it to say %d more skills", m, b.Omitted)
					}
					// Skills are dropped only once every description is shortened.
					if b.Shortened != b.Included || b.DescriptionN >= 300 {
						t.Errorf("dropped %d skills but shortened only %d of %d descriptions (to %d characters)",
							b.Omitted, b.Shortened, b.Included, b.DescriptionN)
					}
				}
			})
		}
	}
}

func TestFormatBlockDefaultBudget(t *testing.T) {
	b, err := skills.FormatBlock(manySkills(200, 300), skills.FormatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(b.Text); n > skills.DefaultCharBudget || n < skills.DefaultCharBudget*9/10 {
		t.Errorf("block is %d characters, want close to the default budget %d", n, skills.DefaultCharBudget)
	}
	if b.Omitted == 0 {
		t.Error("200 skills fit the default budget; the test needs more")
	}
}

func TestFormatBlockShortensBeforeDropping(t *testing.T) {
	list := manySkills(10, 400)
	full, err := skills.FormatBlock(list, skills.FormatOptions{CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if full.Shortened != 0 || full.Omitted != 0 {
		t.Fatalf("huge budget: Shortened %d, Omitted %d", full.Shortened, full.Omitted)
	}
	fullLen := utf8.RuneCountInString(full.Text)
	// Cutting 100 characters from each description still fits all ten.
	budget := fullLen - 10*100
	b, err := skills.FormatBlock(list, skills.FormatOptions{CharBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if b.Omitted != 0 || b.Included != 10 {
		t.Errorf("Included %d, Omitted %d: a skill was dropped although shortening was enough", b.Included, b.Omitted)
	}
	if b.Shortened != 10 {
		t.Errorf("Shortened = %d, want 10", b.Shortened)
	}
	if n := utf8.RuneCountInString(b.Text); n > budget || n < budget-20 {
		t.Errorf("block is %d characters, want just under %d (descriptions cut as little as needed)", n, budget)
	}
	if !strings.Contains(b.Text, "…</description>") {
		t.Error("shortened descriptions are not marked with …")
	}
	// Shortening must not change the skills themselves.
	for _, s := range list {
		if len(s.Description) != 400 {
			t.Fatalf("skill %s description changed to %d bytes", s.Name, len(s.Description))
		}
	}
}

func TestFormatBlockDropsFromTheEnd(t *testing.T) {
	list := manySkills(50, 60)
	b, err := skills.FormatBlock(list, skills.FormatOptions{CharBudget: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if b.Omitted == 0 || b.Included == 0 {
		t.Fatalf("Included %d, Omitted %d: want some of each", b.Included, b.Omitted)
	}
	var got xmlBlock
	if err := xml.Unmarshal([]byte(b.Text), &got); err != nil {
		t.Fatalf("block is not well-formed XML: %v\n%s", err, b.Text)
	}
	for i, s := range got.Skills {
		if s.Name != list[i].Name {
			t.Fatalf("skill %d is %s, want %s (the first skills kept)", i, s.Name, list[i].Name)
		}
	}
	if want := fmt.Sprintf("<!-- %d more skills not shown", b.Omitted); !strings.Contains(b.Text, want) {
		t.Errorf("block lacks %q:\n%s", want, b.Text)
	}
}

func TestFormatBlockMaxSkills(t *testing.T) {
	list := manySkills(20, 40)
	for _, tc := range []struct {
		name     string
		max      int
		included int
	}{
		{"limit below count", 5, 5},
		{"limit equal to count", 20, 20},
		{"limit above count", 50, 20},
		{"no limit", 0, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := skills.FormatBlock(list, skills.FormatOptions{MaxSkills: tc.max, CharBudget: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			omitted := len(list) - tc.included
			if b.Included != tc.included || b.Omitted != omitted {
				t.Errorf("Included %d, Omitted %d, want %d, %d", b.Included, b.Omitted, tc.included, omitted)
			}
			if got := entries(skills.FormatXML, b.Text); got != tc.included {
				t.Errorf("block shows %d skills", got)
			}
			hasNote := strings.Contains(b.Text, fmt.Sprintf("%d more skills not shown", omitted))
			if hasNote != (omitted > 0) {
				t.Errorf("note present = %v with %d omitted:\n%s", hasNote, omitted, b.Text)
			}
		})
	}
}

func TestFormatBlockClipsOverlongDescriptions(t *testing.T) {
	long := strings.Repeat("x", 3000)
	list := []skills.Skill{skillN("big", long), skillN("small", "short")}
	b, err := skills.FormatBlock(list, skills.FormatOptions{CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var got xmlBlock
	if err := xml.Unmarshal([]byte(b.Text), &got); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got.Skills[0].Description); n != skills.MaxDescriptionLen {
		t.Errorf("long description rendered with %d characters, want %d", n, skills.MaxDescriptionLen)
	}
	if got.Skills[1].Description != "short" {
		t.Errorf("short description = %q", got.Skills[1].Description)
	}
	if b.Shortened != 1 || b.Omitted != 0 {
		t.Errorf("Shortened %d, Omitted %d, want 1, 0", b.Shortened, b.Omitted)
	}
	if list[0].Description != long {
		t.Error("FormatBlock changed the skill")
	}
}

func TestFormatBlockTinyBudget(t *testing.T) {
	list := manySkills(3, 100)
	for _, tc := range []struct {
		name   string
		skills []skills.Skill
		budget int
	}{
		{"one character", list, 1},
		{"smaller than the frame", list, 20},
		{"frame but no skill", list, 80},
		{"no skills at all", nil, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := skills.FormatBlock(tc.skills, skills.FormatOptions{CharBudget: tc.budget})
			if err != nil {
				t.Fatal(err)
			}
			if n := utf8.RuneCountInString(b.Text); n > tc.budget {
				t.Errorf("block is %d characters, budget %d", n, tc.budget)
			}
			if b.Included+b.Omitted != len(tc.skills) {
				t.Errorf("Included %d + Omitted %d != %d", b.Included, b.Omitted, len(tc.skills))
			}
			if b.Included != 0 && tc.skills != nil {
				t.Errorf("Included %d skills in %d characters", b.Included, tc.budget)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello world", 6, "hello…"},
		{"héllo wörld", 3, "hé…"},
	} {
		if got := skills.Shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
