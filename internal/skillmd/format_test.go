package skillmd_test

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// skillN returns a listed skill named name with description desc.
func skillN(name, desc string) skillmd.Entry {
	return skillmd.Entry{Name: name, Description: desc, Category: "cat", Location: "/skills/cat/" + name + "/SKILL.md"}
}

// manySkills returns n skills whose descriptions are descLen characters.
func manySkills(n, descLen int) []skillmd.Entry {
	out := make([]skillmd.Entry, n)
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
	list := []skillmd.Entry{
		skillN("pdf", `Extract <text> & "tables" from 'PDF' files.`),
		skillN("csv", "Read\n  comma-separated   files."),
	}
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: skillmd.FormatXML})
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
	for _, raw := range []string{"<text>", ` & `} {
		if strings.Contains(b.Text, raw) {
			t.Errorf("block holds %q unescaped:\n%s", raw, b.Text)
		}
	}
	// Only what XML needs is escaped: quotes in text cost tokens for nothing.
	if !strings.Contains(b.Text, `&lt;text> &amp; "tables" from 'PDF' files.`) {
		t.Errorf("description escaped beyond what XML needs:\n%s", b.Text)
	}
	if !strings.HasPrefix(b.Text, "<available_skills>\n<skill>\n<name>pdf</name>") {
		t.Errorf("block starts %q", b.Text[:min(60, len(b.Text))])
	}
	if b.Included != 2 || b.Omitted != 0 || b.Shortened != 0 {
		t.Errorf("Included/Omitted/Shortened = %d/%d/%d, want 2/0/0", b.Included, b.Omitted, b.Shortened)
	}
	// The default format is XML.
	def, err := skillmd.FormatBlock(list, skillmd.FormatOptions{})
	if err != nil || def.Text != b.Text {
		t.Errorf("default format differs from xml: %v\n%s", err, def.Text)
	}
}

func TestFormatBlockMarkdown(t *testing.T) {
	list := []skillmd.Entry{skillN("pdf", "Extract text\nfrom PDFs."), skillN("csv", "Read CSV.")}
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: skillmd.FormatMarkdown})
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
	if _, err := skillmd.FormatBlock(nil, skillmd.FormatOptions{Format: "json"}); err == nil {
		t.Error("FormatBlock accepted format json")
	}
	for _, tc := range []struct {
		format string
		want   bool
	}{{"", true}, {"xml", true}, {"markdown", true}, {"json", false}, {"XML", false}} {
		if got := skillmd.ValidFormat(tc.format); got != tc.want {
			t.Errorf("ValidFormat(%q) = %v, want %v", tc.format, got, tc.want)
		}
	}
}

// entries counts the skills rendered in a block.
func entries(format, text string) int {
	switch format {
	case skillmd.FormatMarkdown:
		return strings.Count(text, "\n- **")
	case skillmd.FormatYAML:
		return strings.Count(text, "---\n")
	}
	return strings.Count(text, "<skill>")
}

var omittedRE = regexp.MustCompile(`(\d+) more skills not shown`)

func TestFormatBlockBudget(t *testing.T) {
	list := manySkills(200, 300)
	for _, format := range []string{skillmd.FormatXML, skillmd.FormatMarkdown, skillmd.FormatYAML} {
		for _, budget := range []int{40, 60, 200, 500, 1000, 5000, 12000, 50000} {
			t.Run(fmt.Sprintf("%s/%d", format, budget), func(t *testing.T) {
				b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: format, CharBudget: budget})
				if err != nil {
					t.Fatal(err)
				}
				wellFormed(t, format, b.Text)
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
	b, err := skillmd.FormatBlock(manySkills(200, 300), skillmd.FormatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(b.Text); n > skillmd.DefaultCharBudget || n < skillmd.DefaultCharBudget*9/10 {
		t.Errorf("block is %d characters, want close to the default budget %d", n, skillmd.DefaultCharBudget)
	}
	if b.Omitted == 0 {
		t.Error("200 skills fit the default budget; the test needs more")
	}
}

func TestFormatBlockShortensBeforeDropping(t *testing.T) {
	list := manySkills(10, 400)
	full, err := skillmd.FormatBlock(list, skillmd.FormatOptions{CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if full.Shortened != 0 || full.Omitted != 0 {
		t.Fatalf("huge budget: Shortened %d, Omitted %d", full.Shortened, full.Omitted)
	}
	fullLen := utf8.RuneCountInString(full.Text)
	// Cutting 100 characters from each description still fits all ten.
	budget := fullLen - 10*100
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{CharBudget: budget})
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
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{CharBudget: 1500})
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
			b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{MaxSkills: tc.max, CharBudget: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			omitted := len(list) - tc.included
			if b.Included != tc.included || b.Omitted != omitted {
				t.Errorf("Included %d, Omitted %d, want %d, %d", b.Included, b.Omitted, tc.included, omitted)
			}
			if got := entries(skillmd.FormatXML, b.Text); got != tc.included {
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
	list := []skillmd.Entry{skillN("big", long), skillN("small", "short")}
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var got xmlBlock
	if err := xml.Unmarshal([]byte(b.Text), &got); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got.Skills[0].Description); n != skillmd.MaxDescriptionLen {
		t.Errorf("long description rendered with %d characters, want %d", n, skillmd.MaxDescriptionLen)
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

// wellFormed checks that a block parses as its format promises.
func wellFormed(t *testing.T, format, text string) {
	t.Helper()
	switch format {
	case skillmd.FormatXML, "":
		var got xmlBlock
		if err := xml.Unmarshal([]byte(text), &got); err != nil {
			t.Errorf("block is not well-formed XML: %v\n%s", err, text)
		}
	case skillmd.FormatYAML:
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc map[string]string
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Errorf("block is not a YAML stream: %v\n%s", err, text)
				return
			}
		}
	}
}

// TestFormatBlockTinyBudget: a budget too small for the empty block is
// refused; one that holds the frame but no skill gives a well-formed empty
// block, with the note about the missing skills when it fits.
func TestFormatBlockTinyBudget(t *testing.T) {
	list := manySkills(3, 100)
	empty := "<available_skills>\n</available_skills>\n"
	withNote := "<available_skills>\n<!-- 3 more skills not shown; search the skill catalog to find them -->\n</available_skills>\n"
	for _, tc := range []struct {
		name   string
		format string
		skills []skillmd.Entry
		budget int
		want   string // "" means InvalidArgument
	}{
		{"one character", skillmd.FormatXML, list, 1, ""},
		{"one short of the frame", skillmd.FormatXML, list, len(empty) - 1, ""},
		{"markdown below its frame", skillmd.FormatMarkdown, list, 10, ""},
		{"exactly the frame", skillmd.FormatXML, list, len(empty), empty},
		{"frame but not the note", skillmd.FormatXML, list, len(withNote) - 1, empty},
		{"frame and note but no skill", skillmd.FormatXML, list, len(withNote), withNote},
		{"no skills at all", skillmd.FormatXML, nil, 100, empty},
		{"yaml has no frame", skillmd.FormatYAML, list, 1, ""},
		{"yaml note", skillmd.FormatYAML, list, 70, "# 3 more skills not shown; search the skill catalog to find them\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := skillmd.FormatBlock(tc.skills, skillmd.FormatOptions{Format: tc.format, CharBudget: tc.budget})
			if tc.want == "" && tc.format != skillmd.FormatYAML {
				if !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "char_budget") {
					t.Errorf("FormatBlock = %q, %v; want InvalidArgument about char_budget", b.Text, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := utf8.RuneCountInString(b.Text); n > tc.budget {
				t.Errorf("block is %d characters, budget %d", n, tc.budget)
			}
			if tc.want != "" && b.Text != tc.want {
				t.Errorf("block = %q, want %q", b.Text, tc.want)
			}
			wellFormed(t, tc.format, b.Text)
			if b.Included != 0 || b.Omitted != len(tc.skills) {
				t.Errorf("Included %d Omitted %d, want 0 and %d", b.Included, b.Omitted, len(tc.skills))
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
		if got := skillmd.Shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// grouped is a library of flat and categorized skills, in path order.
func grouped() []skillmd.Entry {
	mk := func(cat, name string) skillmd.Entry {
		s := skillN(name, "Does "+name+" things.")
		s.Category, s.Location = cat, "/skills/"+strings.TrimPrefix(cat+"/"+name, "/")+"/SKILL.md"
		return s
	}
	return []skillmd.Entry{mk("data", "csv"), mk("docs", "docx"), mk("docs", "pdf"), mk("", "lint"), mk("", "notes"), mk("web", "html")}
}

func TestFormatBlockGroupByCategory(t *testing.T) {
	list := grouped()
	for _, tc := range []struct {
		format string
		want   string
	}{
		{skillmd.FormatXML, "<available_skills>\n" +
			"<skill>\n<name>lint</name>\n<description>Does lint things.</description>\n<location>/skills/lint/SKILL.md</location>\n</skill>\n" +
			"<skill>\n<name>notes</name>\n<description>Does notes things.</description>\n<location>/skills/notes/SKILL.md</location>\n</skill>\n" +
			"<category name=\"data\">\n" +
			"<skill>\n<name>csv</name>\n<description>Does csv things.</description>\n<location>/skills/data/csv/SKILL.md</location>\n</skill>\n" +
			"</category>\n<category name=\"docs\">\n" +
			"<skill>\n<name>docx</name>\n<description>Does docx things.</description>\n<location>/skills/docs/docx/SKILL.md</location>\n</skill>\n" +
			"<skill>\n<name>pdf</name>\n<description>Does pdf things.</description>\n<location>/skills/docs/pdf/SKILL.md</location>\n</skill>\n" +
			"</category>\n<category name=\"web\">\n" +
			"<skill>\n<name>html</name>\n<description>Does html things.</description>\n<location>/skills/web/html/SKILL.md</location>\n</skill>\n" +
			"</category>\n</available_skills>\n"},
		{skillmd.FormatMarkdown, "## Available skills\n\n" +
			"- **lint** (/skills/lint/SKILL.md): Does lint things.\n" +
			"- **notes** (/skills/notes/SKILL.md): Does notes things.\n" +
			"\n### data\n\n" +
			"- **csv** (/skills/data/csv/SKILL.md): Does csv things.\n" +
			"\n### docs\n\n" +
			"- **docx** (/skills/docs/docx/SKILL.md): Does docx things.\n" +
			"- **pdf** (/skills/docs/pdf/SKILL.md): Does pdf things.\n" +
			"\n### web\n\n" +
			"- **html** (/skills/web/html/SKILL.md): Does html things.\n"},
		{skillmd.FormatYAML, "---\nname: lint\ndescription: Does lint things.\nlocation: /skills/lint/SKILL.md\n" +
			"---\nname: notes\ndescription: Does notes things.\nlocation: /skills/notes/SKILL.md\n" +
			"# data\n---\nname: csv\ndescription: Does csv things.\nlocation: /skills/data/csv/SKILL.md\n" +
			"# docs\n---\nname: docx\ndescription: Does docx things.\nlocation: /skills/docs/docx/SKILL.md\n" +
			"---\nname: pdf\ndescription: Does pdf things.\nlocation: /skills/docs/pdf/SKILL.md\n" +
			"# web\n---\nname: html\ndescription: Does html things.\nlocation: /skills/web/html/SKILL.md\n"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: tc.format, GroupByCategory: true})
			if err != nil {
				t.Fatal(err)
			}
			if b.Text != tc.want {
				t.Errorf("block =\n%s\nwant\n%s", b.Text, tc.want)
			}
			wellFormed(t, tc.format, b.Text)
			// Every budget from the empty block to the whole one gives a
			// well-formed block within it, headings counted: the size
			// probes and the rendering agree.
			for budget := 40; budget <= utf8.RuneCountInString(tc.want); budget++ {
				b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: tc.format, GroupByCategory: true, CharBudget: budget})
				if err != nil {
					t.Fatalf("budget %d: %v", budget, err)
				}
				if n := utf8.RuneCountInString(b.Text); n > budget {
					t.Fatalf("budget %d: block of %d characters:\n%s", budget, n, b.Text)
				}
				if got := entries(tc.format, b.Text); got != b.Included || b.Included+b.Omitted != len(list) {
					t.Fatalf("budget %d: %d entries, Included %d, Omitted %d", budget, got, b.Included, b.Omitted)
				}
				wellFormed(t, tc.format, b.Text)
			}
		})
	}
	// Without grouping the order is as given, and no headings appear.
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: skillmd.FormatMarkdown})
	if err != nil || strings.Contains(b.Text, "###") || strings.Index(b.Text, "**csv**") > strings.Index(b.Text, "**lint**") {
		t.Errorf("ungrouped block = %v\n%s", err, b.Text)
	}
	// max_skills cuts the grouped order.
	b, err = skillmd.FormatBlock(list, skillmd.FormatOptions{GroupByCategory: true, MaxSkills: 3})
	if err != nil || !strings.Contains(b.Text, "<name>csv</name>") || strings.Contains(b.Text, "<name>docx</name>") {
		t.Errorf("grouped, max 3 = %v\n%s", err, b.Text)
	}
}

func TestFormatBlockYAMLValues(t *testing.T) {
	descs := []string{
		"Plain words, with commas and (parentheses).",
		"Use when: the task says so",
		"Handles C# and # comments",
		`Quotes "double" and 'single'`,
		"123 starts with a digit",
		"yes",
		"- starts like a list",
		"Ünïcödé text — with dashes",
		"tab\tand control \x01 characters",
		"[flow] {like} text",
	}
	var list []skillmd.Entry
	for i, d := range descs {
		list = append(list, skillN(fmt.Sprintf("s%d", i), d))
	}
	list = append(list, skillmd.Entry{Location: "/skills/a: b #c/SKILL.md", Name: "Odd Folder", Description: "x"})
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: skillmd.FormatYAML, CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(b.Text))
	for i, s := range list {
		var doc map[string]string
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, b.Text)
		}
		wantDesc := strings.Join(strings.Fields(s.Description), " ")
		if doc["name"] != s.Name || doc["description"] != wantDesc || doc["location"] != s.Location || len(doc) != 3 {
			t.Errorf("document %d = %q, want name %q description %q location %q", i, doc, s.Name, wantDesc, s.Location)
		}
	}
	if !strings.Contains(b.Text, "description: Plain words, with commas and (parentheses).\n") {
		t.Errorf("a plain description is quoted:\n%s", b.Text)
	}
}

func TestFormatBlockXMLOddText(t *testing.T) {
	flat := skillN("ctl", "Bell \x07 and escape \x1b characters, ]]> and a > b.")
	flat.Category, flat.Location = "", "/skills/ctl/SKILL.md"
	list := []skillmd.Entry{
		flat,
		{Location: `/skills/R&D "x"/tool/SKILL.md`, Category: `R&D "x"`, Name: "tool", Description: "d"},
	}
	b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{GroupByCategory: true, CharBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Skills []struct {
			Description string `xml:"description"`
		} `xml:"skill"`
		Categories []struct {
			Name   string `xml:"name,attr"`
			Skills []struct {
				Location string `xml:"location"`
			} `xml:"skill"`
		} `xml:"category"`
	}
	if err := xml.Unmarshal([]byte(b.Text), &got); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, b.Text)
	}
	if len(got.Skills) != 1 || got.Skills[0].Description != "Bell  and escape  characters, ]]> and a > b." {
		t.Errorf("skills = %+v", got.Skills)
	}
	if len(got.Categories) != 1 || got.Categories[0].Name != `R&D "x"` || got.Categories[0].Skills[0].Location != `/skills/R&D "x"/tool/SKILL.md` {
		t.Errorf("categories = %+v", got.Categories)
	}
	if !strings.Contains(b.Text, " a > b.") {
		t.Errorf("> escaped where XML does not need it:\n%s", b.Text)
	}
}

// TestFormatBlockNote: the note about skills left out names no RPC of ours;
// it names the caller's search tool when given one, and a name that could
// break the block is refused.
func TestFormatBlockNote(t *testing.T) {
	list := manySkills(5, 40)
	for _, tc := range []struct {
		format, tool, want string
	}{
		{skillmd.FormatXML, "", "<!-- 3 more skills not shown; search the skill catalog to find them -->\n"},
		{skillmd.FormatXML, "search_skills", "<!-- 3 more skills not shown; use search_skills to find them -->\n"},
		{skillmd.FormatMarkdown, "", "\n_3 more skills not shown; search the skill catalog to find them._\n"},
		{skillmd.FormatMarkdown, "mcp__skills__search", "\n_3 more skills not shown; use `mcp__skills__search` to find them._\n"},
		{skillmd.FormatYAML, "skills.search", "# 3 more skills not shown; use skills.search to find them\n"},
	} {
		t.Run(tc.format+" "+tc.tool, func(t *testing.T) {
			b, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: tc.format, MaxSkills: 2, SearchTool: tc.tool})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.Text, tc.want) || strings.Contains(b.Text, "SearchSkills") {
				t.Errorf("block lacks %q:\n%s", tc.want, b.Text)
			}
			wellFormed(t, tc.format, b.Text)
		})
	}
	for _, tool := range []string{"a--b", "x -->", "two words", "tool\n", "-lead", strings.Repeat("t", 129)} {
		if _, err := skillmd.FormatBlock(list, skillmd.FormatOptions{SearchTool: tool}); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("SearchTool %q: err = %v, want InvalidArgument", tool, err)
		}
	}
}

// TestFormatBlockSizedExactly: a block is sized without rendering each
// candidate, so the sizes must be exact: a block fits its budget, and
// rendering the same skills within exactly its length gives the same
// block (an overestimate would drop or cut more, an underestimate would
// pass the budget).
func TestFormatBlockSizedExactly(t *testing.T) {
	odd := []string{"plain words ", "quotes \" and ' ", "<tags> & ", "]]> ", "ünïcödé ✓ ", "tab\tand  spaces ", "yes: no # ", "\x01ctl "}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		list := make([]skillmd.Entry, 1+rng.IntN(60))
		for i := range list {
			var d strings.Builder
			for range rng.IntN(80) {
				d.WriteString(odd[rng.IntN(len(odd))])
			}
			cat := ""
			if rng.IntN(3) > 0 {
				cat = fmt.Sprintf("cat-%d", rng.IntN(4))
			}
			list[i] = skillmd.Entry{Name: fmt.Sprintf("skill-%d", i), Description: d.String(), Category: cat, Location: "/skills/" + cat + "/skill/SKILL.md"}
		}
		for _, format := range skillmd.FormatNames() {
			opts := skillmd.FormatOptions{Format: format, CharBudget: 200 + rng.IntN(20000), GroupByCategory: rng.IntN(2) == 0}
			b, err := skillmd.FormatBlock(list, opts)
			if err != nil {
				t.Fatal(err)
			}
			n := utf8.RuneCountInString(b.Text)
			if n > opts.CharBudget {
				t.Fatalf("round %d, %s: %d characters over a budget of %d", round, format, n, opts.CharBudget)
			}
			opts.CharBudget = n
			again, err := skillmd.FormatBlock(list, opts)
			if err != nil || again != b {
				t.Fatalf("round %d, %s: within exactly its %d characters the block became %+v (%v), want %+v", round, format, n, again, err, b)
			}
		}
	}
}
