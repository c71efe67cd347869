package skillmd_test

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// TestExtensionProblem: the MCP skills extension serves a skill whose
// frontmatter, as written, follows what hosts check, and says why it does
// not serve any other; the check over a kept WrittenOf agrees with the one
// that reads the JSON itself.
func TestExtensionProblem(t *testing.T) {
	for _, tc := range []struct {
		name, folder, md string
		over             bool
		want             string // a part of the reason; "" is served
	}{
		{name: "served", folder: "pdf", md: "name: pdf\ndescription: Read PDFs.\nmetadata:\n  version: \"1\"\ncompatibility: Claude Code\n"},
		{name: "folder differs", folder: "docs", md: "name: pdf\ndescription: Read PDFs.\n", want: "differs from its folder"},
		{name: "display name", folder: "pdf", md: "name: Read PDF\ndescription: Read PDFs.\n", want: "is not a skill name"},
		{name: "description a number", folder: "pdf", md: "name: pdf\ndescription: 12\n", want: "description is not text"},
		{name: "description too long", folder: "pdf", md: "name: pdf\ndescription: " + strings.Repeat("x", skillmd.MaxDescriptionLen+1) + "\n", want: "description is longer"},
		{name: "compatibility a number", folder: "pdf", md: "name: pdf\ndescription: Read PDFs.\ncompatibility: 3\n", want: "compatibility is not text"},
		{name: "metadata number", folder: "pdf", md: "name: pdf\ndescription: Read PDFs.\nmetadata:\n  version: 1\n", want: "metadata does not map strings"},
		{name: "over limits", folder: "pdf", md: "name: pdf\ndescription: Read PDFs.\n", over: true, want: "over the extension's limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, _, _ := skillmd.ParseSkillMD([]byte("---\n"+tc.md+"---\nBody.\n"), tc.folder)
			name := fm.Name
			if name == "" {
				name = tc.folder
			}
			kept := skillmd.ExtensionProblem(name, fm, skillmd.WrittenOf(fm.JSON), tc.folder, tc.over)
			unchecked := skillmd.ExtensionProblem(name, fm, 0, tc.folder, tc.over)
			if kept != unchecked {
				t.Errorf("with WrittenOf kept: %q; unchecked: %q", kept, unchecked)
			}
			if tc.want == "" && kept != "" || !strings.Contains(kept, tc.want) {
				t.Errorf("ExtensionProblem = %q, want %q", kept, tc.want)
			}
		})
	}
}
