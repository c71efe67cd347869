package skills_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

func readSettings(t *testing.T, b objstore.Bucket, user string) []string {
	t.Helper()
	rc, _, err := b.Get(t.Context(), user+"/settings/skills.json")
	if objstore.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var s struct {
		Disabled []string `json:"disabled"`
	}
	if err := json.NewDecoder(rc).Decode(&s); err != nil {
		t.Fatalf("settings: %v", err)
	}
	return s.Disabled
}

func testDisable(t *testing.T, newBucket newBucketFunc) {
	lib, b := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	listed := func(opts skillview.ListOptions) map[string]bool {
		t.Helper()
		return listedBy(t, lib, opts, func(s skillview.Skill) bool { return s.Disabled })
	}
	steps := []struct {
		name         string
		ref          string
		enabled      bool
		wantDisabled []string // in the settings object afterwards
	}{
		{"disable own skill", "docs/docx", false, []string{"docx"}},
		{"disable shared skill", "/skills/data/csv", false, []string{"csv", "docx"}},
		{"disable again is a no-op", "docx", false, []string{"csv", "docx"}},
		{"re-enable own skill", "docx", true, []string{"csv"}},
		{"re-enable shared skill", "csv", true, []string{}},
		{"enable an enabled skill", "pdf", true, []string{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			s, err := lib.Catalog.SetEnabled(ctx, aliceID, st.ref, st.enabled)
			if err != nil {
				t.Fatal(err)
			}
			if s.Disabled == st.enabled || s.Dir == "" {
				t.Errorf("SetEnabled returned Dir %q Disabled %v", s.Dir, s.Disabled)
			}
			if got := readSettings(t, b, "alice"); !reflect.DeepEqual(got, st.wantDisabled) && !(len(got) == 0 && len(st.wantDisabled) == 0) {
				t.Errorf("stored disabled = %q, want %q", got, st.wantDisabled)
			}
			def, all := listed(skillview.ListOptions{}), listed(skillview.ListOptions{IncludeDisabled: true})
			_, inDefault := def[s.Dir]
			disabled, inAll := all[s.Dir]
			if inDefault != st.enabled || !inAll || disabled == st.enabled {
				t.Errorf("%s: in default listing %v, in full listing %v (disabled %v)", s.Dir, inDefault, inAll, disabled)
			}
			if len(all) != len(aliceSkills) {
				t.Errorf("IncludeDisabled lists %d skills, want %d", len(all), len(aliceSkills))
			}
		})
	}
	// A disabled skill can still be loaded, and says it is disabled; search skips it.
	if _, err := lib.Catalog.SetEnabled(ctx, aliceID, "csv", false); err != nil {
		t.Fatal(err)
	}
	d, err := lib.Catalog.Get(ctx, aliceID, "csv")
	if err != nil || !d.Disabled {
		t.Errorf("Get(csv) = Disabled %v, err %v; want Disabled", d.Disabled, err)
	}
	hits, err := hitsOf(lib.Catalog.Search(ctx, aliceID, skillview.SearchOptions{Query: "comma-separated values"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Name == "csv" {
			t.Error("search found the disabled csv skill")
		}
	}
	// The settings live outside every mount: the skills are untouched.
	if _, err := b.Stat(ctx, "_shared/skills/data/csv/SKILL.md"); err != nil {
		t.Errorf("disabling touched the shared skill: %v", err)
	}
}

func testDisableErrors(t *testing.T, newBucket newBucketFunc) {
	lib, b := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name    string
		ref     string
		enabled bool
		want    error // nil: success
	}{
		{"disable unknown skill", "nope", false, errkind.NotFound},
		{"disable hostile ref", "../x", false, errkind.InvalidArgument},
		{"disable a non-skill folder", "git-helper/sub", false, errkind.NotFound},
		{"enable a skill that is gone", "gone-skill", true, nil},
		{"enable hostile ref", "../x", true, errkind.InvalidArgument},
		{"enable a bad name", "Bad_Name", true, errkind.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lib.Catalog.SetEnabled(t.Context(), aliceID, tc.ref, tc.enabled)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if got := readSettings(t, b, "alice"); len(got) != 0 {
		t.Errorf("failed calls stored %q", got)
	}
}

func testDisableConcurrent(t *testing.T, newBucket newBucketFunc) {
	b := newBucket(t)
	const n = 10
	lb := skillstest.New()
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		lb.User("alice").Skill(name, "", "Skill "+name+".", "body\n")
	}
	lb.Put(t, b)
	lib := skillstest.Library(t, b, nil)
	ctx := t.Context()
	setAll := func(enabled bool) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = lib.Catalog.SetEnabled(ctx, aliceID, fmt.Sprintf("s%d", i), enabled)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		enabled   bool
		wantStore int
	}{{"disable all", false, n}, {"enable all", true, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			setAll(tc.enabled)
			if got := readSettings(t, b, "alice"); len(got) != tc.wantStore {
				t.Errorf("stored disabled = %q, want %d names: a concurrent write was lost", got, tc.wantStore)
			}
			list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := n - tc.wantStore; len(list) != want {
				t.Errorf("listed %d skills, want %d", len(list), want)
			}
		})
	}
}
