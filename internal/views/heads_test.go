package views

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestFileOfHead: a SKILL.md read for GetSkill is, as SkillMDOf makes it,
// what ParseSkillMD makes of it, whether the parse of its head the layer
// holds serves (the same frontmatter bytes, maps that derive from its
// JSON) or it is parsed afresh: a head of other bytes, a file whose body is
// no UTF-8, frontmatter whose maps do not derive from its JSON.
func TestFileOfHead(t *testing.T) {
	const folder = "one"
	front := func(fm string) string { return "---\n" + fm + "---\n" }
	for _, tc := range []struct {
		name, head, file string
		fromHead         bool // the layer's parse serves
	}{
		{name: "spec fields and metadata", head: front("name: one\ndescription: Does one.\nlicense: MIT\nmetadata:\n  owner: a\n"), fromHead: true},
		{name: "extra fields", head: front("name: one\ndescription: Does one.\ntags: [a, b]\nx-tool:\n  depth: 3\n"), fromHead: true},
		{name: "a display name", head: front("name: Skill One\ndescription: Does one.\n"), fromHead: true},
		{name: "a folder the name does not match", head: front("name: two\ndescription: Does two.\n"), fromHead: true},
		{name: "invalid", head: front("description: [no, name]\n")},
		{name: "not a mapping", head: front("0\n")},
		{name: "a byte order mark", head: skillmd.BOM + front("name: one\ndescription: Does one.\n"), fromHead: true},
		{name: "CRLF lines", head: "---\r\nname: one\r\ndescription: Does one.\r\n---\r\n", fromHead: true},
		{name: "blank lines before the body", head: front("name: one\ndescription: Does one.\n"), file: "\n\r\n\n# Body\n", fromHead: true},
		{name: "no body", head: front("name: one\ndescription: Does one.\n"), file: "-", fromHead: true},
		{name: "a version YAML reads as a number", head: front("name: one\ndescription: Does one.\nversion: 1.0\n")},
		{name: "a date", head: front("name: one\ndescription: Does one.\nreleased: 2024-01-02\n")},
		{name: "a body that is no UTF-8", head: front("name: one\ndescription: Does one.\n"), file: "# Body \xff\n"},
		{name: "a newer version than the head", head: front("name: one\ndescription: Does one.\n"), file: "other: " + front("name: one\ndescription: Changed.\n") + "# Body\n"},
		{name: "a longer frontmatter than the head", head: front("name: one\ndescription: Does one.\n"), file: "grown: " + "---\nname: one\ndescription: Does one.\nlicense: MIT\n---\n# Body\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.head + "# Body\n\nSteps.\n"
			switch {
			case tc.file == "-":
				raw = tc.head
			case strings.HasPrefix(tc.file, "other: "), strings.HasPrefix(tc.file, "grown: "):
				raw = tc.file[len("other: "):]
			case tc.file != "":
				raw = tc.head + tc.file
			}
			if end, _, ok := skillmd.Split([]byte(tc.head)); ok && end != len(tc.head) {
				t.Fatalf("the head %q is not cut after its frontmatter (%d bytes of %d)", tc.head, end, len(tc.head))
			}
			s := &skillview.Ref{Dir: "cat/" + folder, Layer: skillview.LayerUser, SkillMD: &objstoretestObject}
			s.Head = NewHeads(slog.New(slog.DiscardHandler), nil).parse(t.Context(), s, []byte(tc.head))
			// Through the shared cache's encoding too, as another replica
			// takes it.
			enc, ok := skillview.EncodeHead(s.Head)
			if !ok {
				t.Fatal("the parse does not encode")
			}
			dec, err := skillview.DecodeHead(enc)
			if err != nil || dec.Src != s.Head.Src || dec.Derived != s.Head.Derived {
				t.Fatalf("decoded parse: src %x derived %v (%v), want %x %v", dec.Src, dec.Derived, err, s.Head.Src, s.Head.Derived)
			}
			for _, p := range []skillview.Head{s.Head, dec} {
				s.Head = p
				got := skillview.SkillMDOf([]byte(raw), "etag-1", s)
				want := skillview.ParseSkillMD([]byte(raw), "etag-1", folder)
				if got.Raw != want.Raw || got.Body != want.Body || got.ETag != want.ETag {
					t.Errorf("raw %q body %q etag %q; want %q, %q, %q", got.Raw, got.Body, got.ETag, want.Raw, want.Body, want.ETag)
				}
				if !reflect.DeepEqual(got.Problems, want.Problems) {
					t.Errorf("problems %+v, want %+v", got.Problems, want.Problems)
				}
				if g, w := got.FullFrontmatter(), want.FullFrontmatter(); !reflect.DeepEqual(g, w) {
					t.Errorf("frontmatter = %#v\nwant %#v", g, w)
				}
				if fromHead := len(got.Frontmatter.JSON) > 0 && unsafe.SliceData(got.Frontmatter.JSON) == unsafe.SliceData(p.Frontmatter.JSON); fromHead != tc.fromHead {
					t.Errorf("served from the layer's parse: %v, want %v", fromHead, tc.fromHead)
				}
			}
		})
	}
}

// objstoretestObject is the SKILL.md object of TestFileOfHead's skills.
var objstoretestObject = objstore.Object{Key: "alice/skills/cat/one/SKILL.md", Attributes: objstore.Attributes{ETag: "etag-1"}}

// TestParsedCacheKey: a parse is addressed by everything it depends on (the
// SKILL.md version and its folder's name, the rules in the key space), in
// its library's hash tag.
func TestParsedCacheKey(t *testing.T) {
	base := ParsedCacheKey("alice/skills/pdf/SKILL.md", "e1", "pdf")
	if !strings.HasPrefix(base, parsedKeySpace+"{alice}:") {
		t.Fatalf("key %q is not in alice's hash tag under %q", base, parsedKeySpace)
	}
	for _, other := range []string{
		ParsedCacheKey("alice/skills/pdf/SKILL.md", "e2", "pdf"),
		ParsedCacheKey("alice/skills/pdf/SKILL.md", "e1", "other"),
		ParsedCacheKey("alice/skills/docs/pdf/SKILL.md", "e1", "pdf"),
		ParsedCacheKey("bob/skills/pdf/SKILL.md", "e1", "pdf"),
	} {
		if other == base {
			t.Errorf("%q names two parses", base)
		}
	}
	if len(ParsedCacheKey("alice/"+strings.Repeat("x", 1024), "e", "x")) > 100 {
		t.Error("a long object key makes a long cache key")
	}
}
