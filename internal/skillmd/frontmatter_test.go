package skillmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// validName is the specification's rule for skill names.
var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestParseSkillMDValid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		folder string
		want   skillmd.Frontmatter // compared field by field; nil maps mean "empty"
		body   string
	}{
		{
			name:   "minimal",
			input:  "---\nname: pdf\ndescription: Extract text from PDF files.\n---\n# PDF\n\nSteps.\n",
			folder: "pdf",
			want:   skillmd.Frontmatter{Name: "pdf", Description: "Extract text from PDF files."},
			body:   "# PDF\n\nSteps.\n",
		},
		{
			name: "all fields",
			input: "---\nname: pdf-tools\ndescription: Work with PDFs.\nlicense: Apache-2.0\nversion: \"2.1.0\"\n" +
				"compatibility: Needs python3 and poppler.\nallowed-tools: Bash(python3:*) Read Write\n" +
				"metadata:\n  author: docs-team\n  tier: gold\n---\nBody\n",
			folder: "pdf-tools",
			want: skillmd.Frontmatter{
				Name: "pdf-tools", Description: "Work with PDFs.", License: "Apache-2.0", Version: "2.1.0",
				Compatibility: "Needs python3 and poppler.", AllowedTools: []string{"Bash(python3:*)", "Read", "Write"},
				Metadata: map[string]string{"author": "docs-team", "tier": "gold"},
			},
			body: "Body\n",
		},
		{
			name:   "allowed-tools as a list",
			input:  "---\nname: a\ndescription: d\nallowed-tools:\n  - Read\n  - \" Grep \"\n  - Bash(git:*)\n---\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d", AllowedTools: []string{"Read", "Grep", "Bash(git:*)"}},
		},
		{
			name:   "metadata numbers and booleans become text as written",
			input:  "---\nname: a\ndescription: d\nmetadata:\n  revision: 3\n  ratio: 0.50\n  schema: 1.0\n  beta: true\n---\n",
			folder: "a",
			want: skillmd.Frontmatter{Name: "a", Description: "d",
				Metadata: map[string]string{"revision": "3", "ratio": "0.50", "schema": "1.0", "beta": "true"}},
		},
		{
			// YAML reads 1.0 as a float; the author meant the version "1.0".
			name:   "numeric version keeps its spelling",
			input:  "---\nname: a\ndescription: d\nversion: 1.0\nlicense: 2\n---\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d", Version: "1.0", License: "2"},
		},
		{
			name:   "version 1.10 is not 1.1",
			input:  "---\nname: a\ndescription: d\nversion: 1.10\n---\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d", Version: "1.10"},
		},
		{
			name: "unknown fields are kept in Extra",
			input: "---\nname: a\ndescription: d\nuser-invocable: false\nmodel: fast\npriority: 5\n" +
				"tags: [x, y]\nhooks:\n  pre: lint\nreleased: 2024-01-02\n---\n",
			folder: "a",
			want: skillmd.Frontmatter{Name: "a", Description: "d", Extra: map[string]any{
				"user-invocable": false, "model": "fast", "priority": float64(5),
				"tags": []any{"x", "y"}, "hooks": map[string]any{"pre": "lint"}, "released": "2024-01-02T00:00:00Z",
			}},
		},
		{
			name:   "UTF-8 byte order mark",
			input:  "\ufeff---\nname: a\ndescription: d\n---\nBody\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d"},
			body:   "Body\n",
		},
		{
			name:   "CRLF line endings",
			input:  "---\r\nname: a\r\ndescription: Does\r\n  things.\r\n---\r\n\r\n# Title\r\nText\r\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "Does things."},
			body:   "# Title\r\nText\r\n",
		},
		{
			name:   "BOM and CRLF together",
			input:  "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nBody\r\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d"},
			body:   "Body\r\n",
		},
		{
			name:   "leading blank lines",
			input:  "\n\n  \n---\nname: a\ndescription: d\n---\n\n\nBody\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d"},
			body:   "Body\n",
		},
		{
			name:   "closing line at end of file without newline",
			input:  "---\nname: a\ndescription: d\n---",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d"},
		},
		{
			name:   "multi-line description",
			input:  "---\nname: a\ndescription: |\n  Line one.\n  Line two.\n---\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "Line one.\nLine two.\n"},
		},
		{
			name:   "no folder to compare with",
			input:  "---\nname: a-1\ndescription: d\n---\n",
			folder: "",
			want:   skillmd.Frontmatter{Name: "a-1", Description: "d"},
		},
		{
			name:   "body keeps later --- lines",
			input:  "---\nname: a\ndescription: d\n---\nabove\n---\nbelow\n",
			folder: "a",
			want:   skillmd.Frontmatter{Name: "a", Description: "d"},
			body:   "above\n---\nbelow\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, p := skillmd.ParseSkillMD([]byte(tc.input), tc.folder)
			if !p.Valid() || len(p.Warnings) > 0 {
				t.Fatalf("problems = %+v, want none", p)
			}
			checkFrontmatter(t, fm, tc.want)
			if body != tc.body {
				t.Errorf("body = %q, want %q", body, tc.body)
			}
			if fm.Raw["name"] != tc.want.Name {
				t.Errorf("Raw[name] = %v, want %q", fm.Raw["name"], tc.want.Name)
			}
		})
	}
}

func checkFrontmatter(t *testing.T, got, want skillmd.Frontmatter) {
	t.Helper()
	for _, f := range []struct {
		field     string
		got, want string
	}{
		{"Name", got.Name, want.Name},
		{"Description", got.Description, want.Description},
		{"License", got.License, want.License},
		{"Version", got.Version, want.Version},
		{"Compatibility", got.Compatibility, want.Compatibility},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.field, f.got, f.want)
		}
	}
	if len(got.AllowedTools)+len(want.AllowedTools) > 0 && !reflect.DeepEqual(got.AllowedTools, want.AllowedTools) {
		t.Errorf("AllowedTools = %q, want %q", got.AllowedTools, want.AllowedTools)
	}
	if len(got.Metadata)+len(want.Metadata) > 0 && !reflect.DeepEqual(got.Metadata, want.Metadata) {
		t.Errorf("Metadata = %q, want %q", got.Metadata, want.Metadata)
	}
	if len(got.Extra)+len(want.Extra) > 0 && !reflect.DeepEqual(got.Extra, want.Extra) {
		t.Errorf("Extra = %#v, want %#v", got.Extra, want.Extra)
	}
}

// nested returns a YAML flow value nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// billionLaughs is the classic alias bomb: ten aliases per level, nine levels.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("---\nname: a\ndescription: d\nl0: &l0 \"lol\"\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("---\n")
	return b.String()
}

func TestParseSkillMDInvalid(t *testing.T) {
	const head = "---\nname: a\ndescription: d\n"
	for _, tc := range []struct {
		name   string
		input  string
		folder string
		want   string // substring of one of the errors
	}{
		{"empty file", "", "a", "no YAML frontmatter"},
		{"no frontmatter", "# PDF\n\nname: a\n", "a", "no YAML frontmatter"},
		{"text before frontmatter", "intro\n---\nname: a\ndescription: d\n---\n", "a", "no YAML frontmatter"},
		{"unclosed", head + "body without closing line\n", "a", "not closed"},
		{"opening line only", "---", "a", "not closed"},
		{"unclosed and huge", head + strings.Repeat("x: y\n", 70<<10/5), "a", "not closed within 65536 bytes"},
		{"frontmatter over 64 KiB", "---\nname: a\ndescription: " + strings.Repeat("w", 65<<10) + "\n---\n", "a", "larger than 65536 bytes"},
		{"invalid YAML", "---\nname: a\ndescription: [unclosed\n---\n", "a", "not valid YAML"},
		{"tab indentation", "---\nname: a\n\tdescription: d\n---\n", "a", "not valid YAML"},
		{"not a mapping (list)", "---\n- name\n- description\n---\n", "a", "not a mapping"},
		{"not a mapping (scalar)", "---\njust text\n---\n", "a", "not a mapping"},
		{"empty frontmatter", "---\n---\nbody\n", "a", "name is required"},
		{"missing name", "---\ndescription: d\n---\n", "a", "name is required"},
		{"name not a string", "---\nname: [a]\ndescription: d\n---\n", "a", "name is required"},
		{"missing description", "---\nname: a\n---\n", "a", "description is required"},
		{"blank description", "---\nname: a\ndescription: \"  \"\n---\n", "a", "description is required"},
		// Without a folder to name the skill after, a display name is an error.
		{"name with uppercase", "---\nname: PDF\ndescription: d\n---\n", "", "must be lowercase"},
		{"name with spaces", "---\nname: pdf tools\ndescription: d\n---\n", "", "must be lowercase"},
		{"display name and no description", "---\nname: Escritura de Compraventa\n---\n", "escritura", "description is required"},
		{"invalid UTF-8", "---\nname: a\ndescription: \xff\xfe\n---\n", "a", "not UTF-8"},
		{"anchor without alias", "---\nname: &n a\ndescription: d\n---\n", "a", "anchors and aliases are not allowed"},
		{"alias bomb", billionLaughs(), "a", "anchors and aliases are not allowed"},
		{"nesting depth 100", head + "deep: " + nested(100) + "\n---\n", "a", "nests deeper than"},
		{"too many nodes", head + "many: [" + strings.Repeat("1,", 5000) + "1]\n---\n", "a", "more than 4096 YAML nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The bomb and depth cases are refused on the node tree, before
			// anything is expanded (the error names the rule that stopped them).
			fm, _, p := skillmd.ParseSkillMD([]byte(tc.input), tc.folder)
			if p.Valid() {
				t.Fatalf("valid, want an error containing %q (frontmatter %+v)", tc.want, fm)
			}
			if !strings.Contains(strings.Join(p.Errors, "\n"), tc.want) {
				t.Errorf("errors = %q, want one containing %q", p.Errors, tc.want)
			}
		})
	}
}

func TestParseSkillMDWarnings(t *testing.T) {
	long := strings.Repeat("é", 1500) // runes, not bytes, count
	name70 := strings.Repeat("ab-", 23) + "a"
	for _, tc := range []struct {
		name   string
		input  string
		folder string
		want   []string // substrings, one per warning, in order
		check  func(t *testing.T, fm skillmd.Frontmatter)
	}{
		{
			name:   "description of 1500 characters",
			input:  "---\nname: a\ndescription: " + long + "\n---\n",
			folder: "a",
			want:   []string{"description is 1500 characters, the limit is 1024"},
			check: func(t *testing.T, fm skillmd.Frontmatter) {
				if fm.Description != long {
					t.Errorf("description was changed: %d runes", utf8.RuneCountInString(fm.Description))
				}
			},
		},
		{
			name:   "name of 70 valid characters",
			input:  "---\nname: " + name70 + "\ndescription: d\n---\n",
			folder: name70,
			want:   []string{"name is 70 characters, the limit is 64"},
		},
		{
			name:   "compatibility of 600 characters",
			input:  "---\nname: a\ndescription: d\ncompatibility: " + strings.Repeat("c", 600) + "\n---\n",
			folder: "a",
			want:   []string{"compatibility is 600 characters, the limit is 500"},
		},
		{
			name:   "name differs from folder",
			input:  "---\nname: pdf\ndescription: d\n---\n",
			folder: "pdf-tools",
			want:   []string{`name "pdf" differs from its folder "pdf-tools"`},
		},
		{
			name:   "license not a string",
			input:  "---\nname: a\ndescription: d\nlicense: {spdx: MIT}\n---\n",
			folder: "a",
			want:   []string{"license should be a string"},
		},
		{
			name:   "allowed-tools of the wrong type",
			input:  "---\nname: a\ndescription: d\nallowed-tools: {read: true}\n---\n",
			folder: "a",
			want:   []string{"allowed-tools should be a space-separated string or a list"},
		},
		{
			name:   "allowed-tools list with a non-string",
			input:  "---\nname: a\ndescription: d\nallowed-tools: [Read, {x: 1}]\n---\n",
			folder: "a",
			want:   []string{"allowed-tools entries should be strings"},
			check: func(t *testing.T, fm skillmd.Frontmatter) {
				if !reflect.DeepEqual(fm.AllowedTools, []string{"Read"}) {
					t.Errorf("AllowedTools = %q, want [Read]", fm.AllowedTools)
				}
			},
		},
		{
			name:   "metadata not a map",
			input:  "---\nname: a\ndescription: d\nmetadata: [x]\n---\n",
			folder: "a",
			want:   []string{"metadata should be a map of strings"},
		},
		{
			name:   "metadata value not a scalar",
			input:  "---\nname: a\ndescription: d\nmetadata:\n  ok: yes\n  bad: [1]\n---\n",
			folder: "a",
			want:   []string{"metadata.bad should be a string"},
			check: func(t *testing.T, fm skillmd.Frontmatter) {
				if fm.Metadata["ok"] != "yes" {
					t.Errorf("Metadata = %q, want ok kept", fm.Metadata)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, _, p := skillmd.ParseSkillMD([]byte(tc.input), tc.folder)
			if !p.Valid() {
				t.Fatalf("errors = %q, want a valid skill with warnings", p.Errors)
			}
			if len(p.Warnings) != len(tc.want) {
				t.Fatalf("warnings = %q, want %d", p.Warnings, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(p.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, p.Warnings[i], w)
				}
			}
			if tc.check != nil {
				tc.check(t, fm)
			}
		})
	}
}

// TestParseSkillMDDisplayNames: a name that breaks only the character
// rules, as libraries for older agent backends wrote them, is served under
// its folder's name with a warning, and kept as the display name.
func TestParseSkillMDDisplayNames(t *testing.T) {
	for _, tc := range []struct {
		name, frontmatterName, folder string
		wantDisplay                   string
	}{
		{"display name", "Escritura de Compraventa", "escritura-compraventa", "Escritura de Compraventa"},
		{"uppercase", "PDF", "pdf", "PDF"},
		{"underscore", "pdf_tools", "pdf-tools", "pdf_tools"},
		{"leading hyphen", "-pdf", "pdf", "-pdf"},
		{"trailing hyphen", "pdf-", "pdf", "pdf-"},
		{"double hyphen", "pdf--tools", "pdf-tools", "pdf--tools"},
		{"unicode", "pdé", "pde", "pdé"},
		{"folder breaks the rules too", "Contrato de Arrendamiento", "Contrato de Arrendamiento", ""},
		{"long display name", strings.Repeat("Nombre ", 20), "nombre", strings.TrimSpace(strings.Repeat("Nombre ", 20))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := "---\nname: " + tc.frontmatterName + "\ndescription: Redacta escrituras.\n---\nBody\n"
			fm, body, p := skillmd.ParseSkillMD([]byte(input), tc.folder)
			if !p.Valid() {
				t.Fatalf("errors = %q, want the skill served", p.Errors)
			}
			if fm.Name != tc.folder || fm.DisplayName != tc.wantDisplay || body != "Body\n" {
				t.Errorf("Name %q DisplayName %q body %q, want %q %q", fm.Name, fm.DisplayName, body, tc.folder, tc.wantDisplay)
			}
			if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "is not a skill name") || !strings.Contains(p.Warnings[0], strconv.Quote(tc.folder)) {
				t.Errorf("warnings = %q, want one naming the folder %q", p.Warnings, tc.folder)
			}
			if fm.Raw["name"] != strings.TrimSpace(tc.frontmatterName) {
				t.Errorf("Raw[name] = %v, want the name as written", fm.Raw["name"])
			}
		})
	}
}

// FuzzParseSkillMD checks that parsing never panics and that a skill it
// accepts has what a listing needs: a valid name, a description, and a body
// that is the end of the file.
func FuzzParseSkillMD(f *testing.F) {
	for _, s := range []string{
		"---\nname: pdf\ndescription: Extract text.\n---\n# Body\n",
		"\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nx",
		"---\nname: a\ndescription: d\nmetadata:\n  k: 1.0\nallowed-tools: [a, b]\n---\n",
		"---\nname: a\ndescription: d\nx: &a [*a]\n---\n",
		"---\nname: A_B\n---\n",
		"---\n- x\n---\n",
		"---\nname: a\ndescription: d\n",
		"no frontmatter",
	} {
		f.Add([]byte(s), "a")
	}
	f.Add([]byte("---\nname: Escritura de Compraventa\ndescription: d\n---\n"), "escritura")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		fm, body, p := skillmd.ParseSkillMD(data, folder)
		// The structured problems are the messages, in order.
		var errs, warns []string
		for _, pr := range p.List {
			if pr.Severity == skillmd.SeverityError {
				errs = append(errs, pr.Message)
			} else {
				warns = append(warns, pr.Message)
			}
		}
		if !slices.Equal(errs, p.Errors) || !slices.Equal(warns, p.Warnings) {
			t.Fatalf("List %+v disagrees with Errors %q Warnings %q", p.List, p.Errors, p.Warnings)
		}
		// Replicas share the result encoded: every result encodes (but of
		// a folder name that is no UTF-8, which no object key is), and
		// decodes to what encodes the same (DeepEqual fails on NaN).
		enc, err := skillmd.EncodeParsed(nil, fm, p)
		switch {
		case err != nil && utf8.ValidString(folder):
			t.Fatalf("EncodeParsed: %v", err)
		case err == nil:
			dfm, dp, err := skillmd.DecodeParsed(enc)
			if err != nil {
				t.Fatalf("DecodeParsed: %v", err)
			}
			if again, _ := skillmd.EncodeParsed(nil, dfm, dp); !bytes.Equal(again, enc) {
				t.Fatalf("decoded %+v %+v, which encodes differently", dfm, dp)
			}
		}
		// What GetSkill relies on to take a head's parse for the whole
		// file (skills.fileOf): where Split finds the frontmatter closed
		// and the text UTF-8, parsing data[:head] is parsing data, and
		// the body of a valid one starts where Split says.
		if head, start, ok := skillmd.Split(data); ok {
			hfm, _, hp := skillmd.ParseSkillMDBody(data[:head], folder)
			_, bodyAt, _ := skillmd.ParseSkillMDBody(data, folder)
			henc, herr := skillmd.EncodeParsed(nil, hfm, hp)
			if fenc, ferr := skillmd.EncodeParsed(nil, fm, p); !bytes.Equal(henc, fenc) || (herr == nil) != (ferr == nil) {
				t.Fatalf("the parse of the head %q differs from the file's: %+v %+v against %+v %+v", data[:head], hfm, hp, fm, p)
			}
			if p.Valid() && (start != bodyAt || string(data[start:]) != body) {
				t.Fatalf("Split puts the body at %d, the parse at %d (%q)", start, bodyAt, body)
			}
		}
		// Publishing is never more lenient than the catalog.
		if !skillmd.HasErrors(skillmd.CheckFolder(folder, []skillmd.File{{Path: skillmd.SkillFile, Data: data}})) && !p.Valid() {
			t.Fatalf("CheckFolder accepts a SKILL.md the catalog refuses: %q", p.Errors)
		}
		if !p.Valid() {
			return
		}
		if fm.Name == "" || strings.TrimSpace(fm.Description) == "" {
			t.Fatalf("valid skill without name or description: %+v", fm)
		}
		// A name breaking the character rules gives way to the folder's.
		if !validName.MatchString(fm.Name) && fm.Name != folder {
			t.Fatalf("valid skill with bad name %q (folder %q)", fm.Name, folder)
		}
		if fm.DisplayName != "" && (fm.Name != folder || fm.Raw["name"] != fm.DisplayName) {
			t.Fatalf("display name %q with name %q, folder %q, frontmatter name %v", fm.DisplayName, fm.Name, folder, fm.Raw["name"])
		}
		if !strings.HasSuffix(strings.TrimPrefix(string(data), "\ufeff"), body) {
			t.Fatalf("body %q is not the end of the file", body)
		}
		// The verbatim frontmatter is a JSON object holding every field.
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(fm.JSON, &obj); err != nil {
			t.Fatalf("frontmatter JSON %q: %v", fm.JSON, err)
		}
		for k := range fm.Raw {
			if _, ok := obj[k]; !ok {
				t.Fatalf("frontmatter JSON %s lacks field %q", fm.JSON, k)
			}
		}
	})
}
