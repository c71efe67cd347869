package skillres

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const mount = "/skills"
	for _, tc := range []struct {
		name, uri, want, refused string
	}{
		{name: "skill file", uri: "skill://writing/release-notes/SKILL.md", want: "/skills/writing/release-notes/SKILL.md"},
		{name: "space encoded", uri: "skill://writing/notes/my%20file.md", want: "/skills/writing/notes/my file.md"},
		{name: "non-ASCII encoded", uri: "skill://writing/notes/r%C3%A9sum%C3%A9.md", want: "/skills/writing/notes/résumé.md"},
		{name: "dot-dot to another mount", uri: "skill://writing/../../workspace/x", refused: ". or .."},
		{name: "dot-dot to another skill", uri: "skill://writing/../data/csv-summary/SKILL.md", refused: ". or .."},
		{name: "dot segment", uri: "skill://./writing/x/SKILL.md", refused: ". or .."},
		{name: "encoded dot-dot", uri: "skill://writing/%2e%2e/x", refused: ". or .."},
		{name: "encoded dot-dot upper", uri: "skill://writing/%2E%2E/x", refused: ". or .."},
		{name: "empty segment", uri: "skill://writing//x/SKILL.md", refused: "empty"},
		{name: "trailing slash", uri: "skill://writing/x/", refused: "empty"},
		{name: "leading slash", uri: "skill:///skills/x/SKILL.md", refused: "empty"},
		{name: "encoded slash", uri: "skill://writing%2Fx/SKILL.md", refused: "separators"},
		{name: "encoded backslash", uri: "skill://writing/..%5Cx/SKILL.md", refused: "separators"},
		{name: "encoded NUL", uri: "skill://writing/x%00/SKILL.md", refused: "separators"},
		{name: "bad escape", uri: "skill://writing/%zz/SKILL.md", refused: "percent-encoded"},
		{name: "invalid UTF-8", uri: "skill://writing/%ff/SKILL.md", refused: "UTF-8"},
		{name: "raw space", uri: "skill://writing/notes/my file.md", refused: "canonical"},
		{name: "raw non-ASCII", uri: "skill://writing/notes/résumé.md", refused: "canonical"},
		{name: "needless escape", uri: "skill://%77riting/x/SKILL.md", refused: "canonical"},
		{name: "query", uri: "skill://writing/x/SKILL.md?v=1", refused: "query"},
		{name: "fragment", uri: "skill://writing/x/SKILL.md#top", refused: "query"},
		{name: "other scheme", uri: "file:///etc/passwd", refused: "not a skill file URI"},
		{name: "scheme only", uri: "skill://", refused: "not a skill file URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(mount, tc.uri)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Parse(%q) = %q, %v; want refused (%s)", tc.uri, got, err, tc.refused)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tc.uri, got, err, tc.want)
			}
			// The listed form of what it names is the URI itself.
			if back := URI(mount, got); back != tc.uri {
				t.Errorf("URI(%q) = %q, want %q", got, back, tc.uri)
			}
		})
	}
}

// FuzzSkillURI: every accepted URI names a file under the mount with no
// dot or empty segment, and is the one URI of that file.
func FuzzSkillURI(f *testing.F) {
	for _, s := range []string{"skill://a/b/SKILL.md", "skill://a/../b", "skill://a/%2e%2e/b", "skill://a%2Fb/c", "skill://a/my%20file.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		p, err := Parse("/skills", uri)
		if err != nil {
			return
		}
		rest, ok := strings.CutPrefix(p, "/skills/")
		if !ok {
			t.Fatalf("%q resolved outside the mount: %q", uri, p)
		}
		for _, seg := range strings.Split(rest, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q resolved with segment %q: %q", uri, seg, p)
			}
		}
		if back := URI("/skills", p); back != uri {
			t.Fatalf("%q is accepted but its canonical form is %q", uri, back)
		}
	})
}
