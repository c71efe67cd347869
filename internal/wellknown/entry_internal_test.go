package wellknown

import (
	"strings"
	"testing"
	"unicode/utf16"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

func TestEntry(t *testing.T) {
	art := &skillsvcv1.SkillArtifact{Type: "archive", Digest: "sha256:" + strings.Repeat("a", 64)}
	for _, c := range []struct {
		name string
		s    *skillsvcv1.SkillSummary
		url  string // "" when left out
	}{
		{"archive", &skillsvcv1.SkillSummary{Name: "pdf", Description: "PDFs.", Artifact: art}, "/.well-known/agent-skills/pdf.tar.gz"},
		{"skill-md", &skillsvcv1.SkillSummary{Name: "notes", Description: "Notes.", Artifact: &skillsvcv1.SkillArtifact{Type: "skill-md", Digest: art.Digest}}, "/.well-known/agent-skills/notes/SKILL.md"},
		{"no artifact (over the limits)", &skillsvcv1.SkillSummary{Name: "big", Description: "Big."}, ""},
		{"a display name", &skillsvcv1.SkillSummary{Name: "escritura", DisplayName: "Escritura de Compraventa", Description: "Deeds.", Artifact: art}, ""},
		{"a name the draft refuses", &skillsvcv1.SkillSummary{Name: "My_Skill", Description: "x", Artifact: art}, ""},
		{"an unknown type", &skillsvcv1.SkillSummary{Name: "zip", Description: "x", Artifact: &skillsvcv1.SkillArtifact{Type: "zip", Digest: art.Digest}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ok := entry(c.s)
			if ok != (c.url != "") || e.URL != c.url {
				t.Errorf("entry = %+v, %t; want url %q", e, ok, c.url)
			}
			if ok && (e.Name != c.s.GetName() || e.Digest != c.s.GetArtifact().GetDigest() || e.Type != c.s.GetArtifact().GetType()) {
				t.Errorf("entry = %+v", e)
			}
		})
	}
}

func TestFitUTF16(t *testing.T) {
	emoji := strings.Repeat("😀", 1024) // 1,024 characters, 2,048 UTF-16 units
	got := fitUTF16(emoji, 1024)
	if n := len(utf16.Encode([]rune(got))); n > 1024 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(emoji, strings.TrimSuffix(got, "…")) {
		t.Errorf("%d units: %q", n, got)
	}
	if s := strings.Repeat("a", 1024); fitUTF16(s, 1024) != s {
		t.Error("1,024 ASCII characters were cut")
	}
	if got := fitUTF16(strings.Repeat("a", 1025), 1024); got != strings.Repeat("a", 1023)+"…" {
		t.Errorf("%q", got)
	}
}
