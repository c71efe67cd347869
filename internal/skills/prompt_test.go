package skills_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// TestPromptSearchTool: the block names the request's search tool, else the
// configured one, else none.
func TestPromptSearchTool(t *testing.T) {
	lb := skillstest.New()
	for i := range 5 {
		lb.User("alice").Skill(fmt.Sprintf("s%d", i), "", "Skill number one of several.", "body\n")
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	for _, tc := range []struct {
		name, cfg, req, want string
	}{
		{"neutral", "", "", "search the skill catalog to find them"},
		{"configured", "skills_search", "", "use skills_search to find them"},
		{"request wins", "skills_search", "find_skill", "use find_skill to find them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := skillstest.Library(t, lb.Bucket(t), func(c *skills.Config) { c.SearchTool = tc.cfg })
			b, err := lib.Catalog.Prompt(t.Context(), alice, skills.ListOptions{}, skillmd.FormatOptions{MaxSkills: 1, SearchTool: tc.req})
			if err != nil || !strings.Contains(b.Text, "4 more skills not shown; "+tc.want) {
				t.Errorf("Prompt = %v\n%s", err, b.Text)
			}
		})
	}
	lib := skillstest.Library(t, lb.Bucket(t), nil)
	if _, err := lib.Catalog.Prompt(t.Context(), alice, skills.ListOptions{}, skillmd.FormatOptions{SearchTool: "a b"}); !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "search_tool") {
		t.Errorf("Prompt with a bad search tool: %v, want InvalidArgument naming search_tool", err)
	}
	if _, err := lib.Catalog.Prompt(t.Context(), alice, skills.ListOptions{}, skillmd.FormatOptions{Format: "json"}); !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "yaml") {
		t.Errorf("Prompt with an unknown format: %v, want InvalidArgument listing the formats", err)
	}
}
