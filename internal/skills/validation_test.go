package skills_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

func testInvalid(t *testing.T, newBucket newBucketFunc) {
	lib, b := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	var broken *skillview.Skill
	for i := range list {
		if list[i].Dir == "broken" {
			broken = &list[i]
		}
	}
	if broken == nil {
		t.Fatalf("IncludeInvalid does not list broken: %q", dirs(list))
	}
	if broken.Valid() || !strings.Contains(strings.Join(broken.Errors, ";"), "no YAML frontmatter") {
		t.Errorf("broken errors = %q", broken.Errors)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, err := lib.Catalog.Get(ctx, aliceID, "broken"); return err }},
		{"Get by path", func() error { _, err := lib.Catalog.Get(ctx, aliceID, "/skills/broken/SKILL.md"); return err }},
		{"Render", func() error {
			_, _, err := lib.Catalog.Render(ctx, aliceID, "broken", skillview.RenderOptions{Arguments: "x"})
			return err
		}},
		{"Export", func() error { _, err := lib.Exporter.Export(ctx, aliceID, "broken", io.Discard); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, skills.ErrInvalidSkill) || !strings.Contains(err.Error(), "no YAML frontmatter") {
				t.Errorf("err = %v, want ErrInvalidSkill with the reason", err)
			}
		})
	}
	// Fixing the file makes the skill valid at once (IndexRefresh is 0).
	putAliceSkill(t, b, "broken", "Fixed now.", "# Fixed\n")
	if d, err := lib.Catalog.Get(ctx, aliceID, "broken"); err != nil || d.Body != "# Fixed\n" {
		t.Errorf("after the fix: Get = %q, %v", d.Body, err)
	}
}

func testWarnings(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{Category: "misc", FilterCategory: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("misc = %q, want the warned skill", dirs(list))
	}
	d, err := lib.Catalog.Get(ctx, aliceID, "warned")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]skillview.Skill{"listing": list[0], "Get": d.Skill} {
		t.Run(name, func(t *testing.T) {
			w := strings.Join(s.Warnings, "\n")
			for _, want := range []string{`name "other-name" differs from its folder "warned"`, "description is 1500 characters"} {
				if !strings.Contains(w, want) {
					t.Errorf("warnings %q lack %q", s.Warnings, want)
				}
			}
			if s.Description != warnedDesc {
				t.Errorf("description shortened to %d characters; the skill must keep it whole", utf8.RuneCountInString(s.Description))
			}
			if s.Name != "other-name" || s.Folder != "warned" {
				t.Errorf("Name %q Folder %q", s.Name, s.Folder)
			}
		})
	}
}

func testLargeFrontmatter(t *testing.T, newBucket newBucketFunc) {
	b := newBucket(t)
	bigDesc := strings.Repeat("d", 20000) // past HeadBytes, within MaxFrontmatterBytes
	lb := skillstest.New()
	lb.User("alice").
		Skill("big", "", bigDesc, "# Big\n").
		Skill("huge", "", strings.Repeat("h", 70<<10), "# Huge\n")
	lb.Put(t, b)
	lib := skillstest.Library(t, b, nil)
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skillview.ListOptions{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, list, "big@user", "huge@user")
	if len(list) != 2 {
		return
	}
	big, huge := list[0], list[1]
	if !big.Valid() || big.Description != bigDesc {
		t.Errorf("big: errors %q, description of %d characters; want the whole frontmatter read", big.Errors, len(big.Description))
	}
	if huge.Valid() || !strings.Contains(strings.Join(huge.Errors, ";"), "65536 bytes") {
		t.Errorf("huge: errors %q, want the 64 KiB frontmatter limit", huge.Errors)
	}
	if _, err := lib.Catalog.Get(t.Context(), aliceID, "huge"); !errors.Is(err, skills.ErrInvalidSkill) {
		t.Errorf("Get(huge) = %v, want ErrInvalidSkill", err)
	}
}
