package skills_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/textfile"

	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

var (
	aliceID = mounts.Identity{User: "alice", Thread: "t1"}
	bobID   = mounts.Identity{User: "bob", Thread: "t1"}
)

// TestLibrary runs the library suite on the local backend and on MinIO.
func TestLibrary(t *testing.T) {
	objstoretest.ForEachBackend(t, runLibrarySuite)
}

type newBucketFunc = func(t *testing.T) objstore.Bucket

func runLibrarySuite(t *testing.T, newBucket newBucketFunc) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, newBucketFunc)
	}{
		{"Layout", testLayout},
		{"Categories", testCategories},
		{"CategoryFilter", testCategoryFilter},
		{"Layers", testLayers},
		{"OtherUser", testOtherUser},
		{"Disable", testDisable},
		{"DisableErrors", testDisableErrors},
		{"DisableConcurrent", testDisableConcurrent},
		{"Invalid", testInvalid},
		{"Warnings", testWarnings},
		{"LargeFrontmatter", testLargeFrontmatter},
		{"Get", testGet},
		{"GetRefs", testGetRefs},
		{"Render", testRender},
		{"ReadFile", testReadFile},
		{"Export", testExport},
		{"Search", testSearch},
		{"IndexTTL", testIndexTTL},
		{"ParseCache", testParseCache},
		{"VFSList", testVFSList},
		{"VFSReadStat", testVFSReadStat},
		{"VFSGlobGrep", testVFSGlobGrep},
		{"VFSLocationsReadable", testVFSLocationsReadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, newBucket)
		})
	}
}

func putObject(t *testing.T, b objstore.Bucket, key, content string) {
	t.Helper()
	if _, err := b.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func seed(t *testing.T, b objstore.Bucket, objects map[string]string) {
	t.Helper()
	for k, v := range objects {
		putObject(t, b, k, v)
	}
}

func newLibrary(t *testing.T, b objstore.Bucket, tune func(*skills.Config)) *skills.Library {
	t.Helper()
	cfg := skills.DefaultConfig()
	cfg.IndexTTL = 0
	if tune != nil {
		tune(&cfg)
	}
	lib, err := skills.New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

// The fixture: alice's own library and the shared one.
const (
	pdfBody = "# PDF\n\nRun scripts/run.sh on $ARGUMENTS.\n"
	pdfMD   = "---\nname: pdf\ndescription: Extract text and tables from PDF files and fill PDF forms.\nlicense: Apache-2.0\nversion: 1.0\n---\n" + pdfBody
	runSh   = "#!/bin/sh\necho run \"$@\"\n"
	xPy     = "print('x')\n"
	formsMD = "# Forms\n\nFill the form fields.\n"
	logoPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06"
	docxMD  = "---\nname: docx\ndescription: Create and edit Word documents.\n---\n# DOCX\n\nOpen the document.\n"
	csvMD   = "---\nname: csv\ndescription: Read and write comma-separated values files.\n---\n# CSV\n\nQuote fields that hold commas.\n"
	csvRef  = "# CSV format\n\nRFC 4180 dialect.\n"
)

var warnedDesc = strings.Repeat("Long description. ", 84)[:1500]

var fixture = map[string]string{
	// alice's own library
	"alice/skills/docs/pdf/SKILL.md":               pdfMD,
	"alice/skills/docs/pdf/scripts/run.sh":         runSh,
	"alice/skills/docs/pdf/scripts/x.py":           xPy,
	"alice/skills/docs/pdf/references/forms.md":    formsMD,
	"alice/skills/docs/pdf/assets/logo.png":        logoPNG,
	"alice/skills/docs/docx/SKILL.md":              docxMD,
	"alice/skills/git-helper/SKILL.md":             skillMD("git-helper", "Write commit messages and resolve merge conflicts.", "# Git\n"),
	"alice/skills/git-helper/reference.md":         "# Git reference\n",
	"alice/skills/git-helper/sub/SKILL.md":         skillMD("sub", "Not a skill: inside a flat skill.", "sub\n"),
	"alice/skills/tools/a/b/SKILL.md":              skillMD("b", "Not a skill: too deep.", "b\n"),
	"alice/skills/broken/SKILL.md":                 "# Broken\n\nNo frontmatter here.\n",
	"alice/skills/misc/warned/SKILL.md":            skillMD("other-name", warnedDesc, "# Warned\n"),
	"alice/skills/review/style/notes.md":           "alice's own notes shadow the shared style skill\n",
	"alice/skills/guide/SKILL.md":                  skillMD("guide", "Alice's guide to the team.", "# Guide\n"),
	"alice/skills/notes.md":                        "library notes\n",
	"alice/threads/t1/workspace.md":                "not a skill\n",
	"bob/skills/.keep":                             "",
	"_shared/skills/docs/pdf/SKILL.md":             skillMD("pdf", "SHARED pdf skill, overridden by alice.", "# Shared PDF\n"),
	"_shared/skills/data/csv/SKILL.md":             csvMD,
	"_shared/skills/data/csv/references/format.md": csvRef,
	"_shared/skills/docs/xlsx/SKILL.md":            skillMD("xlsx", "Build spreadsheets with formulas and charts.", "# XLSX\n"),
	"_shared/skills/office/docx/SKILL.md":          skillMD("docx", "SHARED docx, overridden by alice's docs/docx.", "# Shared DOCX\n"),
	"_shared/skills/lint/SKILL.md":                 skillMD("lint", "Lint code and fix style issues.", "# Lint\n"),
	"_shared/skills/review/style/SKILL.md":         skillMD("style", "Shared style guide reviews.", "shadowed style guide\n"),
	"_shared/skills/guide/intro/SKILL.md":          skillMD("intro", "Shared introduction.", "shared intro text\n"),
	"_shared/skills/README.md":                     "not part of any skill\n",
}

// fixtureLibrary seeds the fixture into a fresh bucket.
func fixtureLibrary(t *testing.T, newBucket newBucketFunc, tune func(*skills.Config)) (*skills.Library, objstore.Bucket) {
	t.Helper()
	b := newBucket(t)
	seed(t, b, fixture)
	return newLibrary(t, b, tune), b
}

// dirs lists the Dir of each skill, with its layer: "docs/pdf@user".
func dirs(list []skills.Skill) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Dir + "@" + s.Layer
	}
	return out
}

func wantDirs(t *testing.T, list []skills.Skill, want ...string) {
	t.Helper()
	if got := dirs(list); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("skills =\n  %q\nwant\n  %q", got, want)
	}
}

var aliceSkills = []string{
	"data/csv@shared", "docs/docx@user", "docs/pdf@user", "docs/xlsx@shared",
	"git-helper@user", "guide@user", "lint@shared", "misc/warned@user",
}

func testLayout(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skills.ListOptions{})
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
	want := []skills.Category{{Name: "", Count: 3}, {Name: "data", Count: 1}, {Name: "docs", Count: 3}, {Name: "misc", Count: 1}}
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
	want = []skills.Category{{Name: "", Count: 3}, {Name: "docs", Count: 3}, {Name: "misc", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after disabling csv: categories = %+v, want %+v", got, want)
	}
}

func testCategoryFilter(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name string
		opts skills.ListOptions
		want []string
	}{
		{"docs", skills.ListOptions{Category: "docs", FilterCategory: true}, []string{"docs/docx@user", "docs/pdf@user", "docs/xlsx@shared"}},
		{"shared only category", skills.ListOptions{Category: "data", FilterCategory: true}, []string{"data/csv@shared"}},
		{"flat only", skills.ListOptions{Category: "", FilterCategory: true}, []string{"git-helper@user", "guide@user", "lint@shared"}},
		{"unknown category", skills.ListOptions{Category: "nope", FilterCategory: true}, nil},
		{"overridden shared category", skills.ListOptions{Category: "office", FilterCategory: true}, nil},
		{"category ignored without FilterCategory", skills.ListOptions{Category: "docs"}, aliceSkills},
		{"filter with invalid", skills.ListOptions{Category: "", FilterCategory: true, IncludeInvalid: true},
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
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skills.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]skills.Skill{}
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
		{"shared-only skill is listed", "data/csv", true, skills.LayerShared, "Read and write"},
		{"shared skill in a user's category", "docs/xlsx", true, skills.LayerShared, "Build spreadsheets"},
		{"flat shared skill", "lint", true, skills.LayerShared, "Lint code"},
		{"user skill overrides shared at the same path", "docs/pdf", true, skills.LayerUser, "Extract text"},
		{"user skill overrides shared of the same name in another category", "office/docx", false, "", ""},
		{"user's docx is the one listed", "docs/docx", true, skills.LayerUser, "Create and edit"},
		{"shared skill shadowed by a user file at its path", "review/style", false, "", ""},
		{"shared skill inside a user's flat skill", "guide/intro", false, "", ""},
		{"user flat skill", "guide", true, skills.LayerUser, "Alice's guide"},
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
	list, err := lib.Catalog.Skills(ctx, bobID, skills.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
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
	if d.Layer != skills.LayerShared || !strings.Contains(d.Raw, "SHARED pdf") || len(d.Files) != 0 {
		t.Errorf("bob's pdf = layer %q files %v raw %q, want the shared one", d.Layer, d.Files, d.Raw)
	}
	if _, _, err := lib.Catalog.ReadFile(ctx, bobID, "pdf", "scripts/run.sh"); !errors.Is(err, errkind.NotFound) {
		t.Errorf("bob reads alice's pdf script: %v", err)
	}
	// Alice disabling a shared skill does not disable it for bob.
	if _, err := lib.Catalog.SetEnabled(ctx, aliceID, "lint", false); err != nil {
		t.Fatal(err)
	}
	list, err = lib.Catalog.Skills(ctx, bobID, skills.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(dirs(list), "lint@shared") {
		t.Errorf("bob lost lint after alice disabled it: %q", dirs(list))
	}
	// An invalid identity sees nothing.
	if _, err := lib.Catalog.Skills(ctx, mounts.Identity{User: "../alice", Thread: "t1"}, skills.ListOptions{}); !errors.Is(err, errkind.InvalidArgument) {
		t.Errorf("bad identity: err = %v, want ErrInvalidArgument", err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

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
	listed := func(opts skills.ListOptions) map[string]bool {
		t.Helper()
		list, err := lib.Catalog.Skills(ctx, aliceID, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, s := range list {
			out[s.Dir] = s.Disabled
		}
		return out
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
			def, all := listed(skills.ListOptions{}), listed(skills.ListOptions{IncludeDisabled: true})
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
	hits, err := lib.Catalog.Search(ctx, aliceID, "comma-separated values", 0)
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
	objs := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		objs["alice/skills/"+name+"/SKILL.md"] = skillMD(name, "Skill "+name+".", "body\n")
	}
	seed(t, b, objs)
	lib := newLibrary(t, b, nil)
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
			list, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := n - tc.wantStore; len(list) != want {
				t.Errorf("listed %d skills, want %d", len(list), want)
			}
		})
	}
}

func testInvalid(t *testing.T, newBucket newBucketFunc) {
	lib, b := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	var broken *skills.Skill
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
		{"Render", func() error { _, _, err := lib.Catalog.Render(ctx, aliceID, "broken", "x"); return err }},
		{"Export", func() error { _, err := lib.Exporter.Export(ctx, aliceID, "broken", io.Discard); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, skills.ErrInvalidSkill) || !strings.Contains(err.Error(), "no YAML frontmatter") {
				t.Errorf("err = %v, want ErrInvalidSkill with the reason", err)
			}
		})
	}
	// Fixing the file makes the skill valid at once (IndexTTL is 0).
	putObject(t, b, "alice/skills/broken/SKILL.md", skillMD("broken", "Fixed now.", "# Fixed\n"))
	if d, err := lib.Catalog.Get(ctx, aliceID, "broken"); err != nil || d.Body != "# Fixed\n" {
		t.Errorf("after the fix: Get = %q, %v", d.Body, err)
	}
}

func testWarnings(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{Category: "misc", FilterCategory: true})
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
	for name, s := range map[string]skills.Skill{"listing": list[0], "Get": d.Skill} {
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
	seed(t, b, map[string]string{
		"alice/skills/big/SKILL.md":  skillMD("big", bigDesc, "# Big\n"),
		"alice/skills/huge/SKILL.md": skillMD("huge", strings.Repeat("h", 70<<10), "# Huge\n"),
	})
	lib := newLibrary(t, b, nil)
	list, err := lib.Catalog.Skills(t.Context(), aliceID, skills.ListOptions{IncludeInvalid: true})
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

func testGet(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		ref   string
		want  skills.Skill // Path, Dir, Folder, Category, Layer, Name, Version checked
		raw   string
		body  string
		files []skills.File
	}{
		{
			name: "user skill with files",
			ref:  "pdf",
			want: skills.Skill{Path: "/skills/docs/pdf", Dir: "docs/pdf", Folder: "pdf", Category: "docs", Layer: skills.LayerUser,
				Frontmatter: skills.Frontmatter{Name: "pdf", Version: "1.0", License: "Apache-2.0"}},
			raw:  pdfMD,
			body: pdfBody,
			files: []skills.File{
				{Path: "assets/logo.png", Size: int64(len(logoPNG)), Binary: true},
				{Path: "references/forms.md", Size: int64(len(formsMD))},
				{Path: "scripts/run.sh", Size: int64(len(runSh))},
				{Path: "scripts/x.py", Size: int64(len(xPy))},
			},
		},
		{
			name: "shared skill",
			ref:  "/skills/data/csv",
			want: skills.Skill{Path: "/skills/data/csv", Dir: "data/csv", Folder: "csv", Category: "data", Layer: skills.LayerShared,
				Frontmatter: skills.Frontmatter{Name: "csv"}},
			raw:   csvMD,
			body:  "# CSV\n\nQuote fields that hold commas.\n",
			files: []skills.File{{Path: "references/format.md", Size: int64(len(csvRef))}},
		},
		{
			name: "flat skill keeps its sub-folder as files",
			ref:  "git-helper",
			want: skills.Skill{Path: "/skills/git-helper", Dir: "git-helper", Folder: "git-helper", Layer: skills.LayerUser,
				Frontmatter: skills.Frontmatter{Name: "git-helper"}},
			raw:  fixture["alice/skills/git-helper/SKILL.md"],
			body: "# Git\n",
			files: []skills.File{
				{Path: "reference.md", Size: int64(len(fixture["alice/skills/git-helper/reference.md"]))},
				{Path: "sub/SKILL.md", Size: int64(len(fixture["alice/skills/git-helper/sub/SKILL.md"]))},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := lib.Catalog.Get(ctx, aliceID, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			got := skills.Skill{Path: d.Path, Dir: d.Dir, Folder: d.Folder, Category: d.Category, Layer: d.Layer,
				Frontmatter: skills.Frontmatter{Name: d.Name, Version: d.Version, License: d.License}}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("skill = %+v\nwant %+v", got, tc.want)
			}
			if d.Raw != tc.raw {
				t.Errorf("Raw = %q, want %q", d.Raw, tc.raw)
			}
			if d.Body != tc.body {
				t.Errorf("Body = %q, want %q", d.Body, tc.body)
			}
			if !reflect.DeepEqual(d.Files, tc.files) {
				t.Errorf("Files = %+v\nwant %+v", d.Files, tc.files)
			}
			if d.ETag == "" || d.Disabled || !d.Valid() {
				t.Errorf("ETag %q Disabled %v Errors %q", d.ETag, d.Disabled, d.Errors)
			}
		})
	}
}

func testGetRefs(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		ref  string
		want string // Dir; "" means an error
	}{
		{"pdf", "docs/pdf"},
		{" pdf ", "docs/pdf"},
		{"docs/pdf", "docs/pdf"},
		{"docs/pdf/SKILL.md", "docs/pdf"},
		{"/skills/docs/pdf", "docs/pdf"},
		{"/skills/docs/pdf/SKILL.md", "docs/pdf"},
		{"csv", "data/csv"},
		{"docx", "docs/docx"},
		{"lint", "lint"},
		{"/skills/lint/SKILL.md", "lint"},
		{"warned", "misc/warned"},
		// not skills
		{"other-name", ""}, // the frontmatter name; refs use folders
		{"sub", ""},
		{"git-helper/sub", ""},
		{"tools/a/b", ""},
		{"b", ""},
		{"office/docx", ""},
		{"/skills/review/style", ""},
		{"style", ""},
		{"/skills/guide/intro", ""},
		{"intro", ""},
		{"notes.md", ""},
		{"SKILL.md", ""},
		{"README.md", ""},
		// hostile
		{"", ""},
		{"/skills", ""},
		{"/skills/", ""},
		{"docs/pdf/", ""},
		{"/skills/../alice/x", ""},
		{"../x", ""},
		{"./pdf", ""},
		{"/workspace/x", ""},
		{"/workspace/workspace.md", ""},
		{"/skills/docs/pdf/../../other", ""},
		{"docs/../docs/pdf", ""},
		{"a//b", ""},
		{"\x00", ""},
		{"pdf\x00", ""},
		{"docs\\pdf", ""},
		{"alice/skills/docs/pdf", ""},
		{"_shared/skills/data/csv", ""},
		{"/_shared/skills/data/csv", ""},
		{"/skills/_shared/skills/data/csv", ""},
	} {
		t.Run(fmt.Sprintf("%q", tc.ref), func(t *testing.T) {
			d, err := lib.Catalog.Get(t.Context(), aliceID, tc.ref)
			if tc.want != "" {
				if err != nil || d.Dir != tc.want {
					t.Errorf("Dir %q err %v, want %q", d.Dir, err, tc.want)
				}
				return
			}
			if !errors.Is(err, errkind.InvalidArgument) && !errors.Is(err, errkind.NotFound) {
				t.Errorf("Get = Dir %q Raw %q err %v, want ErrInvalidArgument or ErrNotFound", d.Dir, d.Raw, err)
			}
		})
	}
}

func testRender(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name, ref, args string
		want            string
	}{
		{"placeholder replaced", "pdf", "report.pdf",
			"Base directory for this skill: /skills/docs/pdf\n\n# PDF\n\nRun scripts/run.sh on report.pdf.\n"},
		{"placeholder and empty arguments", "pdf", "",
			"Base directory for this skill: /skills/docs/pdf\n\n" + pdfBody},
		{"no placeholder, arguments appended", "docx", "write a memo",
			"Base directory for this skill: /skills/docs/docx\n\n# DOCX\n\nOpen the document.\n\nARGUMENTS: write a memo\n"},
		{"no placeholder, empty arguments", "docx", "",
			"Base directory for this skill: /skills/docs/docx\n\n# DOCX\n\nOpen the document.\n"},
		{"blank arguments count as empty", "docx", "  \n",
			"Base directory for this skill: /skills/docs/docx\n\n# DOCX\n\nOpen the document.\n"},
		{"shared flat skill", "lint", "src/",
			"Base directory for this skill: /skills/lint\n\n# Lint\n\nARGUMENTS: src/\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, d, err := lib.Catalog.Render(t.Context(), aliceID, tc.ref, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Render =\n%q\nwant\n%q", got, tc.want)
			}
			first, _, _ := strings.Cut(got, "\n")
			if first != "Base directory for this skill: "+d.Path {
				t.Errorf("first line %q", first)
			}
		})
	}
	// RenderBody on its own: replacement is literal and global.
	if got := skills.RenderBody("/skills/x", "$ARGUMENTS and $ARGUMENTS", "a $1 b"); got != "Base directory for this skill: /skills/x\n\na $1 b and a $1 b" {
		t.Errorf("RenderBody = %q", got)
	}
}

func testReadFile(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name, ref, file string
		content, vpath  string
		err             error
		msg             []string // substrings of the error
	}{
		{name: "script", ref: "pdf", file: "scripts/x.py", content: xPy, vpath: "/skills/docs/pdf/scripts/x.py"},
		{name: "leading ./", ref: "pdf", file: "./scripts/run.sh", content: runSh, vpath: "/skills/docs/pdf/scripts/run.sh"},
		{name: "markdown fallback", ref: "pdf", file: "references/forms", content: formsMD, vpath: "/skills/docs/pdf/references/forms.md"},
		{name: "SKILL.md itself", ref: "/skills/docs/pdf", file: "SKILL.md", content: pdfMD, vpath: "/skills/docs/pdf/SKILL.md"},
		{name: "shared skill file", ref: "csv", file: "references/format.md", content: csvRef, vpath: "/skills/data/csv/references/format.md"},
		{name: "binary", ref: "pdf", file: "assets/logo.png", err: textfile.ErrBinary, msg: []string{"/skills/docs/pdf/assets/logo.png"}},
		{name: "unknown file lists the files", ref: "pdf", file: "scripts/missing.sh", err: errkind.NotFound,
			msg: []string{"scripts/missing.sh", "SKILL.md", "assets/logo.png", "references/forms.md", "scripts/run.sh", "scripts/x.py"}},
		{name: "no fallback with an extension", ref: "pdf", file: "references/forms.txt", err: errkind.NotFound},
		{name: "file of the overridden shared skill", ref: "pdf", file: "README.md", err: errkind.NotFound},
		{name: "unknown skill", ref: "nope", file: "SKILL.md", err: errkind.NotFound},
		{name: "escape to another user", ref: "pdf", file: "../../bob/skills/x/SKILL.md", err: errkind.InvalidArgument},
		{name: "escape to a sibling skill", ref: "pdf", file: "../docx/SKILL.md", err: errkind.InvalidArgument},
		{name: "absolute path", ref: "pdf", file: "/etc/passwd", err: errkind.InvalidArgument},
		{name: "empty file", ref: "pdf", file: "", err: errkind.InvalidArgument},
		{name: "directory", ref: "pdf", file: "scripts/", err: errkind.InvalidArgument},
		{name: "NUL byte", ref: "pdf", file: "scripts/x.py\x00", err: errkind.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, vpath, err := lib.Catalog.ReadFile(t.Context(), aliceID, tc.ref, tc.file)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v (content %q)", err, tc.err, content)
				}
				for _, m := range tc.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not mention %q", err, m)
					}
				}
				if strings.Contains(err.Error(), "alice/skills") || strings.Contains(err.Error(), "_shared") {
					t.Errorf("error %q leaks a storage key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if content != tc.content || vpath != tc.vpath {
				t.Errorf("ReadFile = %q at %q, want %q at %q", content, vpath, tc.content, tc.vpath)
			}
		})
	}
}

type tarFile struct {
	mode    int64
	content string
}

func untar(t *testing.T, data []byte) map[string]tarFile {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("tar: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Errorf("%s: type %c, want a regular file", h.Name, h.Typeflag)
		}
		out[h.Name] = tarFile{mode: h.Mode, content: string(body)}
	}
	return out
}

func testExport(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name, ref string
		want      map[string]tarFile
	}{
		{"user skill", "/skills/docs/pdf", map[string]tarFile{
			"pdf/SKILL.md":            {0o644, pdfMD},
			"pdf/assets/logo.png":     {0o644, logoPNG},
			"pdf/references/forms.md": {0o644, formsMD},
			"pdf/scripts/run.sh":      {0o755, runSh},
			"pdf/scripts/x.py":        {0o755, xPy},
		}},
		{"shared skill", "csv", map[string]tarFile{
			"csv/SKILL.md":             {0o644, csvMD},
			"csv/references/format.md": {0o644, csvRef},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			s, err := lib.Exporter.Export(t.Context(), aliceID, tc.ref, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if s.Folder+"/SKILL.md" == "" || !s.Valid() {
				t.Errorf("Export returned %+v", s)
			}
			if got := untar(t, buf.Bytes()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("archive =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		small, _ := fixtureLibrary(t, newBucket, func(c *skills.Config) { c.MaxExportBytes = 100 })
		var buf bytes.Buffer
		if _, err := small.Exporter.Export(t.Context(), aliceID, "pdf", &buf); !errors.Is(err, errkind.ResourceExhausted) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
		if buf.Len() != 0 {
			t.Errorf("wrote %d bytes before failing", buf.Len())
		}
	})
	t.Run("unknown skill", func(t *testing.T) {
		if _, err := lib.Exporter.Export(t.Context(), aliceID, "nope", io.Discard); !errors.Is(err, errkind.NotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

func testSearch(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name  string
		id    mounts.Identity
		query string
		limit int32
		first string // Dir@Layer of the best hit; "" for no hits
	}{
		{"user skill", aliceID, "extract text from pdf files", 3, "docs/pdf@user"},
		{"shared skill", aliceID, "comma-separated values", 0, "data/csv@shared"},
		{"bob gets the shared pdf", bobID, "pdf", 0, "docs/pdf@shared"},
		{"overridden shared skill not found", aliceID, "SHARED overridden", 0, ""},
		{"invalid skill not found", aliceID, "broken frontmatter", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := lib.Catalog.Search(t.Context(), tc.id, tc.query, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if tc.first == "" {
				if len(hits) != 0 {
					t.Errorf("hits = %+v, want none", hits)
				}
				return
			}
			if len(hits) == 0 || hits[0].Dir+"@"+hits[0].Layer != tc.first {
				t.Fatalf("hits = %+v, want %s first", hits, tc.first)
			}
			if tc.limit > 0 && len(hits) > int(tc.limit) {
				t.Errorf("%d hits, limit %d", len(hits), tc.limit)
			}
			for i, h := range hits {
				if h.Score <= 0 || i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hit %d %s score %v out of order", i, h.Dir, h.Score)
				}
			}
		})
	}
}

// countingBucket counts the calls that cost a round trip to the store.
type countingBucket struct {
	objstore.Bucket
	lists, ranges atomic.Int64
}

func (c *countingBucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	c.lists.Add(1)
	return c.Bucket.List(ctx, opts)
}

func (c *countingBucket) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	c.ranges.Add(1)
	return c.Bucket.GetRange(ctx, key, offset, length)
}

func testIndexTTL(t *testing.T, newBucket newBucketFunc) {
	for _, tc := range []struct {
		name       string
		ttl        time.Duration
		cached     bool // the second listing reuses the first
		seesNewOne bool // a skill added after the first listing shows up
	}{
		{"no TTL lists every time", 0, false, true},
		{"TTL reuses the listing", time.Hour, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &countingBucket{Bucket: newBucket(t)}
			seed(t, b, map[string]string{
				"alice/skills/one/SKILL.md":   skillMD("one", "First skill.", ""),
				"_shared/skills/two/SKILL.md": skillMD("two", "Second skill.", ""),
			})
			lib := newLibrary(t, b, func(c *skills.Config) { c.IndexTTL = tc.ttl })
			ctx := t.Context()
			if _, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			first := b.lists.Load()
			if first < 2 {
				t.Fatalf("first listing made %d List calls, want one per layer", first)
			}
			putObject(t, b, "alice/skills/three/SKILL.md", skillMD("three", "Third skill.", ""))
			list, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lib.Catalog.Categories(ctx, aliceID); err != nil {
				t.Fatal(err)
			}
			again := b.lists.Load() - first
			if tc.cached && again != 0 || !tc.cached && again < 2*first {
				t.Errorf("two more listings made %d List calls (first made %d); cached = %v", again, first, tc.cached)
			}
			if got := contains(dirs(list), "three@user"); got != tc.seesNewOne {
				t.Errorf("new skill listed = %v, want %v (%q)", got, tc.seesNewOne, dirs(list))
			}
		})
	}
}

// testParseCache: an unchanged SKILL.md is not fetched again, a changed one is.
func testParseCache(t *testing.T, newBucket newBucketFunc) {
	b := &countingBucket{Bucket: newBucket(t)}
	seed(t, b, map[string]string{
		"alice/skills/one/SKILL.md":   skillMD("one", "First version.", ""),
		"_shared/skills/two/SKILL.md": skillMD("two", "Shared.", ""),
	})
	lib := newLibrary(t, b, nil)
	ctx := t.Context()
	describe := func() map[string]string {
		t.Helper()
		list, err := lib.Catalog.Skills(ctx, aliceID, skills.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range list {
			out[s.Dir] = s.Description
		}
		return out
	}
	describe()
	before := b.ranges.Load()
	if got := describe(); got["one"] != "First version." {
		t.Fatalf("skills = %v", got)
	}
	if n := b.ranges.Load() - before; n != 0 {
		t.Errorf("unchanged library: %d SKILL.md reads, want 0", n)
	}
	putObject(t, b, "alice/skills/one/SKILL.md", skillMD("one", "Second version.", ""))
	if got := describe(); got["one"] != "Second version." || got["two"] != "Shared." {
		t.Errorf("after the change: skills = %v", got)
	}
	if n := b.ranges.Load() - before; n != 1 {
		t.Errorf("one changed SKILL.md: %d reads, want 1", n)
	}
}
