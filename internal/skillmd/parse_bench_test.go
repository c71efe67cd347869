package skillmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// BenchmarkParseSkillMD parses a SKILL.md head (what a listing parses per
// skill nobody parsed before) and a whole 3 KiB SKILL.md (what GetSkill
// parses when the parse is not held).
func BenchmarkParseSkillMD(b *testing.B) {
	head := "---\nname: skill-0001\ndescription: Skill skill-0001; extracts, converts and summarizes the documents of its kind, step by step.\n" +
		"license: Apache-2.0\nmetadata:\n  owner: platform-team\n---\n"
	var body strings.Builder
	body.WriteString("\n# skill-0001\n\n")
	for i := 0; body.Len() < 3<<10; i++ {
		fmt.Fprintf(&body, "%d. Step %d of the procedure, with enough words to look like real instructions.\n", i+1, i+1)
	}
	for _, c := range []struct{ name, text string }{{"head", head}, {"file", head + body.String()}} {
		data := []byte(c.text)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, p := skillmd.ParseSkillMD(data, "skill-0001"); !p.Valid() {
					b.Fatal(p.Errors)
				}
			}
		})
	}
}
