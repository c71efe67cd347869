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
	"github.com/skillsvc/skillsvc/internal/skillview"
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
			b, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{MaxSkills: 1, SearchTool: tc.req})
			if err != nil || !strings.Contains(b.Text, "4 more skills not shown; "+tc.want) {
				t.Errorf("Prompt = %v\n%s", err, b.Text)
			}
		})
	}
	lib := skillstest.Library(t, lb.Bucket(t), nil)
	if _, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{SearchTool: "a b"}); !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "search_tool") {
		t.Errorf("Prompt with a bad search tool: %v, want InvalidArgument naming search_tool", err)
	}
	if _, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{Format: "json"}); !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "yaml") {
		t.Errorf("Prompt with an unknown format: %v, want InvalidArgument listing the formats", err)
	}
}

// TestPromptOrder: without a query a block lists the caller's own skills,
// then its team's, then the organization's (path order within each), so
// max_skills cuts the organization's first; with a query, the skills most
// relevant to it, best first, the rest counted in the note. A query longer
// than --skills.max-query-bytes is refused.
func TestPromptOrder(t *testing.T) {
	lb := skillstest.New()
	lb.Shared().Skill("a/org-one", "", "Organization skill one.", "body\n").
		Skill("b/org-two", "", "Organization skill two.", "body\n").
		Skill("c/ledger", "", "Reconcile payables.", "# Three-way match\n\nMatch each supplier bill against its purchase order.\n")
	lb.Team("legal").Skill("m/team-nda", "", "Review NDAs.", "body\n")
	lb.User("alice").Skill("z/mine", "", "Alice's own.", "body\n")
	lib := skillstest.Library(t, lb.Bucket(t), nil)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t", Teams: "legal"})
	names := func(f skillmd.FormatOptions) []string {
		t.Helper()
		b, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(b.Text, "\n") {
			if n, ok := strings.CutPrefix(line, "<name>"); ok {
				out = append(out, strings.TrimSuffix(n, "</name>"))
			}
		}
		return out
	}
	if got, want := fmt.Sprint(names(skillmd.FormatOptions{})), "[mine team-nda org-one org-two ledger]"; got != want {
		t.Errorf("block = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(names(skillmd.FormatOptions{MaxSkills: 3})), "[mine team-nda org-one]"; got != want {
		t.Errorf("block of 3 = %s, want %s", got, want)
	}
	if got := names(skillmd.FormatOptions{MaxSkills: 1, Query: "match a supplier bill with its purchase order"}); fmt.Sprint(got) != "[ledger]" {
		t.Errorf("block for the task = %q, want ledger alone", got)
	}
	b, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{Query: "supplier bill"})
	if err != nil || b.Included != 1 || b.Omitted != 4 || !strings.Contains(b.Text, "4 more skills not shown") {
		t.Errorf("block for the task: %v, %d included, %d omitted:\n%s", err, b.Included, b.Omitted, b.Text)
	}
	if _, err := lib.Catalog.Prompt(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{Query: strings.Repeat("x", skills.DefaultConfig().MaxQueryBytes+1)}); !errors.Is(err, errkind.InvalidArgument) {
		t.Errorf("a query over the bound: %v, want InvalidArgument", err)
	}
}
