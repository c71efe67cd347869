package skillmd_test

import (
	"bytes"
	"io/fs"
	"math"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/examples"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// awkward are frontmatters whose parse holds every kind of value the codec
// carries: typed extras, dates, big numbers, nested lists in metadata,
// display names, and invalid skills with their problems.
var awkward = []struct {
	name, input, folder string
}{
	{"minimal", "---\nname: pdf\ndescription: Extract text.\n---\n# Body\n", "pdf"},
	{"all fields", "---\nname: pdf-tools\ndescription: Work with PDFs.\nlicense: Apache-2.0\nversion: 1.10\n" +
		"compatibility: Needs python3.\nallowed-tools: Bash(python3:*) Read Write\nmetadata:\n  author: docs\n  revision: 3\n  beta: true\n---\n", "pdf-tools"},
	{"typed extras", "---\nname: a\ndescription: d\nuser-invocable: false\nmodel: fast\npriority: 5\nweight: -2.5\n" +
		"tags: [x, y, 3, null, true]\nhooks:\n  pre: lint\n  nested:\n    deeper: [1, {k: v}]\n---\n", "a"},
	{"dates", "---\nname: a\ndescription: d\nreleased: 2024-01-02\nat: 2024-01-02T10:00:00Z\nmetadata:\n  since: 2023-05-06\n---\n", "a"},
	{"big numbers", "---\nname: a\ndescription: d\nbig: 123456789012345678901234567890\nneg: -9223372036854775809\n" +
		"max: 18446744073709551615\nhex: 0x1F\noct: 0o17\ntiny: 1e-300\nhuge: 1.7e308\ninf: -.inf\nmetadata:\n  id: 99999999999999999999\n---\n", "a"},
	{"lists in metadata", "---\nname: a\ndescription: d\nmetadata:\n  owner: x\n  tags: [alpha, beta]\n" +
		"  owners:\n    - name: x\n      roles: [r1, r2]\n  empty: []\n  none: {}\n---\n", "a"},
	{"nulls and empties", "---\nname: a\ndescription: d\nlicense:\nx: null\nempty: []\nm: {}\n\"\": blank key\nallowed-tools: \"   \"\n---\n", "a"},
	{"display name", "---\nname: Escritura de Compraventa\ndescription: Drafts a deed.\n---\n", "escritura"},
	{"unicode", "---\nname: a\ndescription: \"Résumé ✓ \\x41 \\u00e9 日本語\"\nmetadata:\n  emoji: \"🙂\"\n---\n", "a"},
	{"empty frontmatter", "---\n---\nbody\n", "a"},
	{"no description", "---\nname: a\n---\n", "a"},
	{"bad name", "---\nname: A_B\ndescription: d\n---\n", ""},
	{"name differs from folder", "---\nname: other\ndescription: d\n---\n", "a"},
	{"bad field types", "---\nname: [x]\ndescription: {a: b}\nmetadata: [1, 2]\nallowed-tools: [Read, 3, {x: y}]\n---\n", "a"},
	{"metadata values not strings", "---\nname: a\ndescription: d\nmetadata:\n  list: [1]\n  map: {k: v}\n  ok: fine\n---\n", "a"},
	{"long description", "---\nname: a\ndescription: " + strings.Repeat("word ", 300) + "\ncompatibility: " + strings.Repeat("c", 600) + "\n---\n", "a"},
	{"invalid YAML", "---\nname: a\ndescription: [unclosed\n---\n", "a"},
	{"not closed", "---\nname: a\ndescription: d\n", "a"},
	{"no frontmatter", "# Just a body\n", "a"},
	{"not UTF-8", "---\nname: a\ndescription: \xff\n---\n", "a"},
	{"aliases", "---\nname: a\ndescription: d\nx: &a [1]\ny: *a\n---\n", "a"},
	{"not a mapping", "---\n- x\n---\n", "a"},
}

// exampleSkills returns the SKILL.md files of the example library, by
// path.
func exampleSkills(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(examples.Skills(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(p) != skillmd.SkillFile {
			return err
		}
		data, err := fs.ReadFile(examples.Skills(), p)
		out[p] = data
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("example skills: %d, err %v", len(out), err)
	}
	return out
}

func TestParsedRoundTrip(t *testing.T) {
	type parse struct{ input, folder string }
	cases := map[string]parse{}
	for _, c := range awkward {
		cases[c.name] = parse{c.input, c.folder}
	}
	for p, data := range exampleSkills(t) {
		cases["example "+p] = parse{string(data), path.Base(path.Dir(p))}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			fm, _, p := skillmd.ParseSkillMD([]byte(c.input), c.folder)
			enc, err := skillmd.EncodeParsed(nil, fm, p)
			if err != nil {
				t.Fatalf("EncodeParsed: %v", err)
			}
			gotFM, gotP, err := skillmd.DecodeParsed(enc)
			if err != nil {
				t.Fatalf("DecodeParsed: %v", err)
			}
			if !reflect.DeepEqual(gotFM, fm) {
				t.Errorf("frontmatter:\n got %#v\nwant %#v", gotFM, fm)
			}
			if !reflect.DeepEqual(gotP, p) {
				t.Errorf("problems:\n got %#v\nwant %#v", gotP, p)
			}
			// Canonical: the same value encodes to the same bytes.
			if again, _ := skillmd.EncodeParsed(nil, gotFM, gotP); !bytes.Equal(again, enc) {
				t.Errorf("re-encoding differs")
			}
		})
	}
}

// TestParsedValues covers the values ParseSkillMD does not make today but
// the codec carries exactly (ints, nil and empty apart), and NaN, which
// DeepEqual cannot compare.
func TestParsedValues(t *testing.T) {
	fm := skillmd.Frontmatter{
		AllowedTools: []string{},
		Metadata:     map[string]string{},
		Extra: map[string]any{
			"int": int(-7), "int64": int64(math.MinInt64), "uint64": uint64(math.MaxUint64),
			"nil list": []any(nil), "empty list": []any{}, "nil map": map[string]any(nil), "empty map": map[string]any{},
			"negative zero": math.Copysign(0, -1),
		},
		Raw:  map[string]any{"nan": math.NaN()},
		JSON: []byte{},
	}
	p := skillmd.Problems{List: []skillmd.Problem{}}
	enc, err := skillmd.EncodeParsed([]byte("prefix"), fm, p)
	if err != nil || !bytes.HasPrefix(enc, []byte("prefix")) {
		t.Fatalf("EncodeParsed: %v", err)
	}
	gotFM, gotP, err := skillmd.DecodeParsed(enc[len("prefix"):])
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(gotFM.Raw["nan"].(float64)) {
		t.Errorf("NaN decoded as %v", gotFM.Raw["nan"])
	}
	gotFM.Raw, fm.Raw = nil, nil
	if !reflect.DeepEqual(gotFM, fm) || !reflect.DeepEqual(gotP, p) {
		t.Errorf("got %#v %#v\nwant %#v %#v", gotFM, gotP, fm, p)
	}
	if z := gotFM.Extra["negative zero"].(float64); !math.Signbit(z) {
		t.Errorf("-0 decoded as +0")
	}
}

func TestEncodeParsedRefuses(t *testing.T) {
	deep := any("leaf")
	for range 40 {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		name string
		fm   skillmd.Frontmatter
		p    skillmd.Problems
	}{
		{"a type jsonable never makes", skillmd.Frontmatter{Extra: map[string]any{"x": int32(1)}}, skillmd.Problems{}},
		{"too deep", skillmd.Frontmatter{Raw: map[string]any{"x": deep}}, skillmd.Problems{}},
		{"not UTF-8", skillmd.Frontmatter{Name: "\xff"}, skillmd.Problems{}},
		{"messages without a list", skillmd.Frontmatter{}, skillmd.Problems{Errors: []string{"e"}}},
		{"messages disagree", skillmd.Frontmatter{}, skillmd.Problems{Errors: []string{"e"}, List: []skillmd.Problem{{Severity: skillmd.SeverityError, Message: "f"}}}},
		{"unknown severity", skillmd.Frontmatter{}, skillmd.Problems{List: []skillmd.Problem{{Severity: 3}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := skillmd.EncodeParsed(nil, tc.fm, tc.p); err == nil {
				t.Fatal("encoded")
			}
		})
	}
}

// TestDecodeParsedRefusesDamage: a cached value cut short, of another
// version, or with bytes after it is an error, not a wrong skill.
func TestDecodeParsedRefusesDamage(t *testing.T) {
	for _, c := range awkward {
		fm, _, p := skillmd.ParseSkillMD([]byte(c.input), c.folder)
		enc, err := skillmd.EncodeParsed(nil, fm, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(enc) {
			if _, _, err := skillmd.DecodeParsed(enc[:i]); err == nil {
				t.Fatalf("%s: cut at %d of %d decoded", c.name, i, len(enc))
			}
		}
		if _, _, err := skillmd.DecodeParsed(append(bytes.Clone(enc), 0)); err == nil {
			t.Fatalf("%s: a trailing byte decoded", c.name)
		}
		other := bytes.Clone(enc)
		other[0] = skillmd.CodecVersion + 1
		if _, _, err := skillmd.DecodeParsed(other); err == nil {
			t.Fatalf("%s: another version decoded", c.name)
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"a count past the end", []byte{skillmd.CodecVersion, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"an overlong varint", []byte{skillmd.CodecVersion, 0x80, 0x00}},
		{"a varint too long", append([]byte{skillmd.CodecVersion}, bytes.Repeat([]byte{0xff}, 11)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := skillmd.DecodeParsed(tc.b); err == nil {
				t.Fatal("decoded")
			}
		})
	}
}

// TestCodecCoversEveryField fails when Frontmatter, Problems or Problem gain
// a field: add it to EncodeParsed and DecodeParsed and bump CodecVersion.
func TestCodecCoversEveryField(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[skillmd.Frontmatter](): 11,
		reflect.TypeFor[skillmd.Problems]():    3,
		reflect.TypeFor[skillmd.Problem]():     6,
	} {
		if typ.NumField() != n {
			t.Errorf("%v has %d fields, the codec knows %d", typ, typ.NumField(), n)
		}
	}
}

// FuzzDecodeParsed checks that decoding never panics and accepts only the
// canonical encoding of a value: what it accepts encodes to the same bytes.
func FuzzDecodeParsed(f *testing.F) {
	for _, c := range awkward {
		fm, _, p := skillmd.ParseSkillMD([]byte(c.input), c.folder)
		enc, err := skillmd.EncodeParsed(nil, fm, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Add([]byte{skillmd.CodecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, p, err := skillmd.DecodeParsed(b)
		if err != nil {
			return
		}
		enc, err := skillmd.EncodeParsed(nil, fm, p)
		if err != nil {
			t.Fatalf("decoded a value that does not encode: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decoded %x, which encodes to %x", b, enc)
		}
	})
}

// BenchmarkParsedHead compares, for one SKILL.md head of a real library's
// frontmatter, parsing it with decoding what EncodeParsed made of its parse
// (what a replica's first listing does per skill when another replica
// parsed that version), and encoding it.
func BenchmarkParsedHead(b *testing.B) {
	head := []byte("---\nname: skill-0001\ndescription: Skill skill-0001; extracts, converts and summarizes the documents of its kind, step by step.\n" +
		"license: Apache-2.0\nmetadata:\n  owner: platform-team\n  version: \"1.2\"\ntags: [documents, conversion]\n---\n")
	fm, _, p := skillmd.ParseSkillMD(head, "skill-0001")
	enc, err := skillmd.EncodeParsed(nil, fm, p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			skillmd.ParseSkillMD(head, "skill-0001")
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := skillmd.DecodeParsed(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := skillmd.EncodeParsed(nil, fm, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
