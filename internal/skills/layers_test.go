package skills_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

func testLayout(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Both layouts; not git-helper/sub (inside a flat skill), not tools/a/b
	// (too deep), not broken (invalid).
	wantDirs(t, list, aliceSkills...)
	for _, s := range list {
		wantCat, wantFolder, ok := strings.Cut(s.Dir, "/")
		if !ok {
			wantCat, wantFolder = "", s.Dir
		}
		if s.Category != wantCat || s.Folder != wantFolder || s.Path != "/skills/"+s.Dir || s.Location() != "/skills/"+s.Dir+"/SKILL.md" {
			t.Errorf("%s: Category %q Folder %q Path %q Location %q", s.Dir, s.Category, s.Folder, s.Path, s.Location())
		}
		if s.ETag == "" {
			t.Errorf("%s: no ETag", s.Dir)
		}
	}
}

func testCategories(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	got, err := lib.Catalog.Categories(t.Context(), aliceID)
	if err != nil {
		t.Fatal(err)
	}
	want := []skillview.Category{{Name: "", Count: 3}, {Name: "data", Count: 1}, {Name: "docs", Count: 3}, {Name: "misc", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("categories = %+v, want %+v", got, want)
	}
	// A disabled skill no longer counts.
	if _, err := lib.Catalog.SetEnabled(t.Context(), aliceID, "csv", false); err != nil {
		t.Fatal(err)
	}
	got, err = lib.Catalog.Categories(t.Context(), aliceID)
	if err != nil {
		t.Fatal(err)
	}
	want = []skillview.Category{{Name: "", Count: 3}, {Name: "docs", Count: 3}, {Name: "misc", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after disabling csv: categories = %+v, want %+v", got, want)
	}
}

func testCategoryFilter(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name string
		opts skillview.ListOptions
		want []string
	}{
		{"docs", skillview.ListOptions{Category: "docs", FilterCategory: true}, []string{"docs/docx@user", "docs/pdf@user", "docs/xlsx@shared"}},
		{"shared only category", skillview.ListOptions{Category: "data", FilterCategory: true}, []string{"data/csv@shared"}},
		{"flat only", skillview.ListOptions{Category: "", FilterCategory: true}, []string{"git-helper@user", "guide@user", "lint@shared"}},
		{"unknown category", skillview.ListOptions{Category: "nope", FilterCategory: true}, nil},
		{"overridden shared category", skillview.ListOptions{Category: "office", FilterCategory: true}, nil},
		{"category ignored without FilterCategory", skillview.ListOptions{Category: "docs"}, aliceSkills},
		{"filter with invalid", skillview.ListOptions{Category: "", FilterCategory: true, IncludeInvalid: true},
			[]string{"broken@user", "git-helper@user", "guide@user", "lint@shared"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := lib.Catalog.Skills(t.Context(), aliceID, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			wantDirs(t, list, tc.want...)
		})
	}
}

func testLayers(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skillview.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]skillview.Skill{}
	for _, s := range list {
		byDir[s.Dir] = s
	}
	for _, tc := range []struct {
		name    string
		dir     string
		present bool
		layer   string
		desc    string // prefix
	}{
		{"shared-only skill is listed", "data/csv", true, skillview.LayerShared, "Read and write"},
		{"shared skill in a user's category", "docs/xlsx", true, skillview.LayerShared, "Build spreadsheets"},
		{"flat shared skill", "lint", true, skillview.LayerShared, "Lint code"},
		{"user skill overrides shared at the same path", "docs/pdf", true, skillview.LayerUser, "Extract text"},
		{"user skill overrides shared of the same name in another category", "office/docx", false, "", ""},
		{"user's docx is the one listed", "docs/docx", true, skillview.LayerUser, "Create and edit"},
		{"shared skill shadowed by a user file at its path", "review/style", false, "", ""},
		{"shared skill inside a user's flat skill", "guide/intro", false, "", ""},
		{"user flat skill", "guide", true, skillview.LayerUser, "Alice's guide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := byDir[tc.dir]
			if ok != tc.present {
				t.Fatalf("%s listed = %v, want %v (skills %q)", tc.dir, ok, tc.present, dirs(list))
			}
			if !ok {
				return
			}
			if s.Layer != tc.layer || !strings.HasPrefix(s.Description, tc.desc) {
				t.Errorf("%s: layer %q description %q, want %q %q…", tc.dir, s.Layer, s.Description, tc.layer, tc.desc)
			}
		})
	}
	// Names are unique in the merged view.
	seen := map[string]bool{}
	for _, s := range list {
		if seen[s.Folder] {
			t.Errorf("skill name %q listed twice", s.Folder)
		}
		seen[s.Folder] = true
	}
}

func testOtherUser(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, bobID, skillview.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// Only the shared library: no override by alice, nothing of hers.
	wantDirs(t, list, "data/csv@shared", "docs/pdf@shared", "docs/xlsx@shared", "guide/intro@shared",
		"lint@shared", "office/docx@shared", "review/style@shared")
	for _, ref := range []string{"docs/docx", "broken", "git-helper", "misc/warned", "/skills/guide"} {
		if _, err := lib.Catalog.Get(ctx, bobID, ref); !errors.Is(err, errkind.NotFound) {
			t.Errorf("bob Get(%q) = %v, want ErrNotFound", ref, err)
		}
	}
	d, err := lib.Catalog.Get(ctx, bobID, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if d.Layer != skillview.LayerShared || !strings.Contains(d.Raw, "SHARED pdf") || len(d.Files) != 0 {
		t.Errorf("bob's pdf = layer %q files %v raw %q, want the shared one", d.Layer, d.Files, d.Raw)
	}
	if _, _, err := lib.Catalog.ReadFile(ctx, bobID, "pdf", "scripts/run.sh", skillview.ReadOptions{}); !errors.Is(err, errkind.NotFound) {
		t.Errorf("bob reads alice's pdf script: %v", err)
	}
	// Alice disabling a shared skill does not disable it for bob.
	if _, err := lib.Catalog.SetEnabled(ctx, aliceID, "lint", false); err != nil {
		t.Fatal(err)
	}
	list, err = lib.Catalog.Skills(ctx, bobID, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs(list), "lint@shared") {
		t.Errorf("bob lost lint after alice disabled it: %q", dirs(list))
	}
	// A caller no mount table identified sees nothing.
	if _, err := lib.Catalog.Skills(ctx, mounts.Caller{}, skillview.ListOptions{}); !errors.Is(err, errkind.InvalidArgument) {
		t.Errorf("bad identity: err = %v, want ErrInvalidArgument", err)
	}
}
