package skills_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// namingSkills is a library whose names break in the ways real libraries
// do: frontmatter names that differ from their folders, a user's skill
// overriding a shared one by name from another folder, two folders with
// one name, display names as older S3-backed agent backends wrote them, and
// SKILL.md files nested deeper than <category>/<skill>.
var namingSkills = func() *skillstest.Builder {
	f := skillstest.New()
	f.User("alice").
		Skill("writing/blog-post", "blogging", "Write blog posts in the house style.", "# Blog\n\nDraft $ARGUMENTS.\n").
		File("writing/blog-post/references/style.md", "# Style\n").
		Skill("writing/blog-post/examples/demo", "demo", "A file of blog-post, not a nested skill.", "demo\n").
		Skill("my-review", "code-review", "Alice's own code review checklist.", "# Alice review\n").
		Skill("lint-config", "house-lint", "Alice's lint configuration.", "# House lint\n").
		Skill("tools/a-lint", "lint", "The old linter setup.", "# Old lint\n").
		Skill("tools/lint", "", "Run the linters.", "# Lint\n").
		File("misc/lint/SKILL.md", "---\nname: lint\n---\nno description\n").
		Skill("fmt/one", "fmt", "Format code, first copy.", "# One\n").
		Skill("fmt/two", "fmt", "Format code, second copy.", "# Two\n").
		Skill("legal/escritura-compraventa", "Escritura de Compraventa", "Redacta escrituras de compraventa.", "# Escritura\n").
		Skill("archive/2024/old", "", "An archived skill, nested too deep.", "# Old\n").
		File("drafts/translate/SKILL.md", "---\nname: translate\n---\nalice's draft, no description yet\n")
	f.Shared().
		Skill("review/code-review", "", "SHARED code review, overridden by alice's my-review.", "# Shared review\n").
		File("review/code-review/checklist.md", "shared checklist\n").
		Skill("dev/lint-config", "", "Shared lint configuration files.", "# Shared lint config\n").
		Skill("legal/contrato", "Contrato de Arrendamiento", "Redacta contratos de arrendamiento.", "# Contrato\n").
		Skill("a/dup", "shared-dup", "Shared duplicate, first.", "# A\n").
		Skill("b/dup", "shared-dup", "Shared duplicate, second.", "# B\n").
		Skill("deep/group/nested", "", "Nested too deep to be served.", "# Nested\n").
		File("deep/group/nested/notes.md", "nested notes\n").
		Skill("lang/translate", "", "SHARED translation, hidden by alice's invalid draft.", "# Translate\n")
	return f
}()

// namingListed is alice's listing of namingSkills: every valid skill, the
// shared code-review gone (alice's my-review has its name).
var namingListed = []string{
	"a/dup@shared", "b/dup@shared", "dev/lint-config@shared", "fmt/one@user", "fmt/two@user",
	"legal/contrato@shared", "legal/escritura-compraventa@user", "lint-config@user", "my-review@user",
	"tools/a-lint@user", "tools/lint@user", "writing/blog-post@user",
}

// namingLibrary seeds namingSkills into a fresh bucket; the library logs
// into the returned buffer.
func namingLibrary(t *testing.T, newBucket newBucketFunc) (*skills.Library, objstore.Bucket, *logtest.Buffer) {
	t.Helper()
	b := newBucket(t)
	namingSkills.Put(t, b)
	logs := &logtest.Buffer{}
	cfg := skills.DefaultConfig()
	cfg.IndexRefresh = 0
	lib, err := skills.New(b, mounts.Default(), cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return lib, b, logs
}

func skillByDir(t *testing.T, list []skillview.Skill, dir string) skillview.Skill {
	t.Helper()
	for _, s := range list {
		if s.Dir == dir {
			return s
		}
	}
	t.Fatalf("%s not listed: %q", dir, dirs(list))
	return skillview.Skill{}
}

// testNameLookup: every RPC accepts what the listing shows (the name), the
// folder path and the path under /skills, and agrees on the skill.
func testNameLookup(t *testing.T, newBucket newBucketFunc) {
	lib, b, _ := namingLibrary(t, newBucket)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, list, namingListed...)
	// Whatever the listing shows resolves to that skill.
	names := map[string]bool{}
	for _, s := range list {
		names[s.Name] = true
	}
	for _, s := range list {
		if s.Name == "fmt" || s.Name == "lint" || s.Name == "shared-dup" {
			continue // declared twice: see testDuplicateNames
		}
		refs := []string{s.Name, s.Path, s.Location()}
		if !names[s.Dir] || s.Dir == s.Name {
			refs = append(refs, s.Dir) // a flat folder named like another skill is that skill's name first
		}
		for _, ref := range refs {
			if d, err := lib.Catalog.Get(ctx, aliceID, ref); err != nil || d.Dir != s.Dir || d.Name != s.Name {
				t.Errorf("listed as %s at %s; Get(%q) = %s %q, %v", s.Name, s.Path, ref, d.Dir, d.Name, err)
			}
		}
	}
	for _, tc := range []struct {
		ref  string
		want string // Dir; "" means NotFound
	}{
		{"blogging", "writing/blog-post"},
		{"blog-post", "writing/blog-post"}, // the folder, which no other skill has
		{"code-review", "my-review"},
		{"my-review", "my-review"},
		{"house-lint", "lint-config"},
		{"lint-config", "dev/lint-config"}, // a name first: the shared skill is listed as lint-config
		{"/skills/lint-config", "lint-config"},
		{"lint", "tools/lint"},
		{"a-lint", "tools/a-lint"},
		{"fmt", "fmt/one"},
		{"two", "fmt/two"},
		{"escritura-compraventa", "legal/escritura-compraventa"},
		{"Escritura de Compraventa", "legal/escritura-compraventa"}, // the display name
		{"contrato", "legal/contrato"},
		{"Contrato de Arrendamiento", "legal/contrato"},
		{"shared-dup", "a/dup"},
		// Hidden by alice's code-review, the shared one is not listed but
		// stays reachable by its path (issue 24: no silent shadowing).
		{"review/code-review", "review/code-review"},
		{"/skills/review/code-review", "review/code-review"},
		{"demo", ""},
		{"nested", ""},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			d, err := lib.Catalog.Get(ctx, aliceID, tc.ref)
			if tc.want == "" {
				if !errors.Is(err, errkind.NotFound) {
					t.Errorf("Get = %s, %v; want NotFound", d.Dir, err)
				}
				return
			}
			if err != nil || d.Dir != tc.want {
				t.Fatalf("Get = %s, %v; want %s", d.Dir, err, tc.want)
			}
			text, r, err := lib.Catalog.Render(ctx, aliceID, tc.ref, skillview.RenderOptions{})
			if err != nil || r.Dir != tc.want || !strings.HasPrefix(text, "Base directory for this skill: /skills/"+tc.want+"\n") {
				t.Errorf("Render = %q %s, %v", text, r.Dir, err)
			}
			if raw, vpath, err := lib.Catalog.ReadFile(ctx, aliceID, tc.ref, "SKILL.md", skillview.ReadOptions{}); err != nil || vpath != "/skills/"+tc.want+"/SKILL.md" || raw != d.Raw {
				t.Errorf("ReadFile = %s, %v", vpath, err)
			}
			var archive bytes.Buffer
			if s, err := lib.Exporter.Export(ctx, aliceID, tc.ref, &archive); err != nil || s.Dir != tc.want {
				t.Errorf("Export = %s, %v", s.Dir, err)
			} else if files := untar(t, archive.Bytes()); files[s.Folder+"/SKILL.md"].content != d.Raw {
				t.Errorf("Export holds %v", files)
			}
			s, err := lib.Catalog.SetEnabled(ctx, aliceID, tc.ref, false)
			if err != nil || s.Dir != tc.want || !s.Disabled {
				t.Errorf("SetEnabled(false) = %s %v, %v", s.Dir, s.Disabled, err)
			}
			if got := readSettings(t, b, "alice"); !slices.Equal(got, []string{d.Name}) {
				t.Errorf("stored disabled = %q, want the name %q", got, d.Name)
			}
			if s, err := lib.Catalog.SetEnabled(ctx, aliceID, tc.ref, true); err != nil || s.Disabled {
				t.Errorf("SetEnabled(true) = %v, %v", s.Disabled, err)
			}
		})
	}
	t.Run("a folder name two skills have", func(t *testing.T) {
		_, err := lib.Catalog.Get(ctx, aliceID, "dup")
		if !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "/skills/a/dup") || !strings.Contains(err.Error(), "/skills/b/dup") {
			t.Errorf("Get(dup) = %v, want InvalidArgument naming both skills", err)
		}
	})
}

// testNameOverride: a user's skill hides the shared skill of the same
// frontmatter name wherever each sits, in every listing, every lookup and
// the /skills filesystem.
func testNameOverride(t *testing.T, newBucket newBucketFunc) {
	lib, b, _ := namingLibrary(t, newBucket)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for _, s := range list {
		names[s.Name] = append(names[s.Name], s.Dir+"@"+s.Layer)
	}
	if got := names["code-review"]; !slices.Equal(got, []string{"my-review@user"}) {
		t.Errorf("code-review listed as %q, want alice's my-review only", got)
	}
	// Skills of different names both stay, whatever their folders.
	if got := names["lint-config"]; !slices.Equal(got, []string{"dev/lint-config@shared"}) {
		t.Errorf("lint-config listed as %q", got)
	}
	for name, where := range names {
		layers := map[string]bool{}
		for _, w := range where {
			layers[w[strings.Index(w, "@")+1:]] = true
		}
		if len(layers) > 1 {
			t.Errorf("name %s listed from both layers: %q", name, where)
		}
	}
	block, err := lib.Catalog.Prompt(ctx, aliceID, skillview.ListOptions{}, skillmd.FormatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(block.Text, "<name>code-review</name>"); n != 1 || !strings.Contains(block.Text, "<location>/skills/my-review/SKILL.md</location>") || strings.Contains(block.Text, "SHARED") {
		t.Errorf("prompt block lists code-review %d times:\n%s", n, block.Text)
	}
	text, _, err := lib.Catalog.Render(ctx, aliceID, "code-review", skillview.RenderOptions{})
	if err != nil || text != "Base directory for this skill: /skills/my-review\n\n# Alice review\n" {
		t.Errorf("Render(code-review) = %q, %v; want alice's copy", text, err)
	}
	hits, err := hitsOf(lib.Catalog.Search(ctx, aliceID, skillview.SearchOptions{Query: "code review"}))
	if err != nil || len(hits) == 0 || hits[0].Dir != "my-review" {
		t.Errorf("Search = %v, %v", hits, err)
	}
	for _, h := range hits {
		if h.Layer == skillview.LayerShared && h.Name == "code-review" {
			t.Errorf("search found the hidden shared code-review")
		}
	}

	fs, err := vfs.New(b, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", lib.Tree))
	if err != nil {
		t.Fatal(err)
	}
	root, err := entryNames(t, fs, aliceID, "/skills")
	if err != nil || slices.Contains(root, "review/") {
		t.Errorf("/skills = %q, %v; the hidden shared skill's folder shows", root, err)
	}
	for _, p := range []string{"/skills/review/code-review/SKILL.md", "/skills/review/code-review/checklist.md"} {
		if _, err := fs.Read(ctx, aliceID, p, 0, 0, false); !errors.Is(err, errkind.NotFound) {
			t.Errorf("Read(%s) = %v, want NotFound", p, err)
		}
	}
	g, err := fs.Glob(ctx, aliceID, "/skills", vfs.GlobOptions{Pattern: "**/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range g.Matches {
		if strings.HasPrefix(m.Path, "/skills/review/") {
			t.Errorf("Glob finds %s", m.Path)
		}
	}
	if res, err := fs.Grep(ctx, aliceID, "/skills", vfs.GrepOptions{Pattern: "SHARED code review"}); err != nil || len(res.Matches) != 0 {
		t.Errorf("Grep finds the hidden skill: %v, %v", res.Matches, err)
	}
	// Every location listed, invalid and nested ones included, reads
	// through the filesystem, and the hidden skill is bob's to read.
	for _, s := range list {
		if _, err := fs.Read(ctx, aliceID, s.Location(), 0, 0, false); err != nil {
			t.Errorf("listed at %s but unreadable: %v", s.Location(), err)
		}
	}
	// An invalid skill of alice's hides the shared one of its name too, so
	// loading it by the name says what is wrong with hers.
	if _, err := lib.Catalog.Get(ctx, aliceID, "translate"); !errors.Is(err, skills.ErrInvalidSkill) || !strings.Contains(err.Error(), "/skills/drafts/translate") {
		t.Errorf("Get(translate) = %v, want alice's invalid draft", err)
	}
	if _, err := fs.Read(ctx, aliceID, "/skills/lang/translate/SKILL.md", 0, 0, false); !errors.Is(err, errkind.NotFound) {
		t.Errorf("the shared translate skill is readable: %v", err)
	}
	if _, err := fs.Read(ctx, bobID, "/skills/review/code-review/SKILL.md", 0, 0, false); err != nil {
		t.Errorf("bob reads the shared code-review: %v", err)
	}
	if d, err := lib.Catalog.Get(ctx, bobID, "code-review"); err != nil || d.Layer != skillview.LayerShared {
		t.Errorf("bob's code-review = %+v, %v", d.Skill, err)
	}
}

// testDuplicateNames: two folders of one layer with one name are both
// listed, both warned about, and the name picks the same one every time.
func testDuplicateNames(t *testing.T, newBucket newBucketFunc) {
	lib, _, _ := namingLibrary(t, newBucket)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		name string
		want []string // substrings of the warnings
	}{
		{"fmt/one", "fmt", []string{`name "fmt" is also declared by /skills/fmt/two; the name refers to this skill`}},
		{"fmt/two", "fmt", []string{`name "fmt" is also declared by /skills/fmt/one, which the name refers to; refer to this skill by its path /skills/fmt/two`}},
		// A valid skill whose folder has the name wins over one listed first.
		{"tools/lint", "lint", []string{"also declared by /skills/misc/lint, /skills/tools/a-lint; the name refers to this skill"}},
		{"tools/a-lint", "lint", []string{"declared by /skills/tools/lint, which the name refers to", "by its path /skills/tools/a-lint"}},
		// Even though its folder has the name too, an invalid skill loses.
		{"misc/lint", "lint", []string{"declared by /skills/tools/lint, which the name refers to"}},
		{"a/dup", "shared-dup", []string{"also declared by /skills/b/dup; the name refers to this skill"}},
		{"b/dup", "shared-dup", []string{"declared by /skills/a/dup, which the name refers to"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s := skillByDir(t, list, tc.dir)
			if s.Name != tc.name {
				t.Errorf("name %q, want %q", s.Name, tc.name)
			}
			w := strings.Join(s.Warnings, "\n")
			for _, want := range tc.want {
				if !strings.Contains(w, want) {
					t.Errorf("warnings %q lack %q", s.Warnings, want)
				}
			}
		})
	}
	// Warnings come with the loaded skill too.
	d, err := lib.Catalog.Get(ctx, aliceID, "/skills/fmt/two")
	if err != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), "which the name refers to") {
		t.Errorf("Get(fmt/two) warnings = %q, %v", d.Warnings, err)
	}
	// Each call builds the view afresh (IndexRefresh 0): the pick never varies.
	for range 20 {
		for name, want := range map[string]string{"fmt": "fmt/one", "lint": "tools/lint", "shared-dup": "a/dup"} {
			if d, err := lib.Catalog.Get(ctx, aliceID, name); err != nil || d.Dir != want {
				t.Fatalf("Get(%s) = %s, %v; want %s", name, d.Dir, err, want)
			}
		}
	}
	// A name that only one skill declares carries no such warning.
	if s := skillByDir(t, list, "writing/blog-post"); strings.Contains(strings.Join(s.Warnings, "\n"), "also declared") {
		t.Errorf("blog-post warnings = %q", s.Warnings)
	}
}

// testDisplayNames: a library written with display names is served, each
// skill under its folder's name with the display name kept.
func testDisplayNames(t *testing.T, newBucket newBucketFunc) {
	lib, _, _ := namingLibrary(t, newBucket)
	ctx := t.Context()
	list, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string][2]string{
		"legal/escritura-compraventa": {"escritura-compraventa", "Escritura de Compraventa"},
		"legal/contrato":              {"contrato", "Contrato de Arrendamiento"},
	} {
		s := skillByDir(t, list, dir)
		if s.Name != want[0] || s.DisplayName != want[1] || !s.Valid() {
			t.Errorf("%s: Name %q DisplayName %q errors %q", dir, s.Name, s.DisplayName, s.Errors)
		}
		if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "is not a skill name") {
			t.Errorf("%s: warnings %q", dir, s.Warnings)
		}
	}
	block, err := lib.Catalog.Prompt(ctx, aliceID, skillview.ListOptions{Category: "legal", FilterCategory: true}, skillmd.FormatOptions{})
	if err != nil || block.Included != 2 || !strings.Contains(block.Text, "<name>escritura-compraventa</name>") {
		t.Errorf("prompt block = %v\n%s", err, block.Text)
	}
	for _, q := range []string{"compraventa", "escritura", "arrendamiento contrato"} {
		hits, err := hitsOf(lib.Catalog.Search(ctx, aliceID, skillview.SearchOptions{Query: q}))
		if err != nil || len(hits) == 0 || hits[0].Category != "legal" {
			t.Errorf("Search(%q) = %v, %v", q, hits, err)
		}
	}
}

// testNested: SKILL.md files deeper than <category>/<skill> are reported,
// in the listing with IncludeInvalid and once in the log, not ignored.
func testNested(t *testing.T, newBucket newBucketFunc) {
	lib, _, logs := namingLibrary(t, newBucket)
	ctx := t.Context()
	for range 3 {
		if _, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := lib.Catalog.Skills(ctx, aliceID, skillview.ListOptions{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, all, slices.Sorted(slices.Values(append(slices.Clone(namingListed),
		"archive/2024/old@user", "deep/group/nested@shared", "drafts/translate@user", "misc/lint@user")))...)
	for _, dir := range []string{"archive/2024/old", "deep/group/nested"} {
		s := skillByDir(t, all, dir)
		if s.Valid() || !strings.Contains(strings.Join(s.Errors, "\n"), "nested deeper than <category>/<skill>") {
			t.Errorf("%s: errors %q", dir, s.Errors)
		}
		if _, err := lib.Catalog.Get(ctx, aliceID, s.Path); !errors.Is(err, skills.ErrInvalidSkill) {
			t.Errorf("Get(%s) = %v, want ErrInvalidSkill", s.Path, err)
		}
		if n := strings.Count(logs.String(), "skill="+dir+" "); n != 1 {
			t.Errorf("%s logged %d times, want once:\n%s", dir, n, logs.String())
		}
	}
	// A SKILL.md inside a skill's folder is one of its files.
	if strings.Contains(logs.String(), "examples/demo") {
		t.Errorf("a file of blog-post was reported as nested:\n%s", logs.String())
	}
	d, err := lib.Catalog.Get(ctx, aliceID, "blogging")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range d.Files {
		files = append(files, f.Path)
	}
	if want := []string{"examples/demo/SKILL.md", "references/style.md"}; !reflect.DeepEqual(files, want) {
		t.Errorf("blog-post files = %q, want %q", files, want)
	}
	// Bob sees the shared nested folder too, and its files.
	bob, err := lib.Catalog.Skills(ctx, bobID, skillview.ListOptions{IncludeInvalid: true})
	if err != nil || !slices.Contains(dirs(bob), "deep/group/nested@shared") {
		t.Errorf("bob's listing = %q, %v", dirs(bob), err)
	}
}

// testDisableByName: settings keep the name a skill is listed under, so
// every spelling of a reference disables the same skill.
func testDisableByName(t *testing.T, newBucket newBucketFunc) {
	lib, b, _ := namingLibrary(t, newBucket)
	ctx := t.Context()
	disabled := func() map[string]bool {
		t.Helper()
		return listedBy(t, lib, skillview.ListOptions{IncludeDisabled: true}, func(s skillview.Skill) bool { return s.Disabled })
	}
	steps := []struct {
		ref     string
		enabled bool
		stored  []string
		dirs    []string // disabled afterwards
	}{
		{"/skills/writing/blog-post", false, []string{"blogging"}, []string{"writing/blog-post"}},
		{"Escritura de Compraventa", false, []string{"blogging", "escritura-compraventa"}, []string{"legal/escritura-compraventa", "writing/blog-post"}},
		{"blog-post", true, []string{"escritura-compraventa"}, []string{"legal/escritura-compraventa"}},
		// Settings are by name: a name two folders declare is disabled as one.
		{"/skills/fmt/two", false, []string{"escritura-compraventa", "fmt"}, []string{"fmt/one", "fmt/two", "legal/escritura-compraventa"}},
		{"fmt", true, []string{"escritura-compraventa"}, []string{"legal/escritura-compraventa"}},
		{"escritura-compraventa", true, nil, nil},
	}
	for i, st := range steps {
		t.Run(fmt.Sprintf("%d %s %v", i, st.ref, st.enabled), func(t *testing.T) {
			if _, err := lib.Catalog.SetEnabled(ctx, aliceID, st.ref, st.enabled); err != nil {
				t.Fatal(err)
			}
			if got := readSettings(t, b, "alice"); !slices.Equal(got, st.stored) && len(got)+len(st.stored) > 0 {
				t.Errorf("stored %q, want %q", got, st.stored)
			}
			var got []string
			for dir, d := range disabled() {
				if d {
					got = append(got, dir)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, st.dirs) {
				t.Errorf("disabled %q, want %q", got, st.dirs)
			}
		})
	}
	// A name no skill has any more can still be enabled, whatever it looks like.
	if err := putSettings(t, b, "alice", `{"disabled":["Old Display Name","gone-skill"]}`); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"Old Display Name", "gone-skill"} {
		if _, err := lib.Catalog.SetEnabled(ctx, aliceID, ref, true); err != nil {
			t.Errorf("enable %q: %v", ref, err)
		}
	}
	if got := readSettings(t, b, "alice"); len(got) != 0 {
		t.Errorf("stored %q after enabling both", got)
	}
}

func putSettings(t *testing.T, b objstore.Bucket, user, data string) error {
	t.Helper()
	_, err := b.Put(t.Context(), user+"/settings/skills.json", strings.NewReader(data), int64(len(data)), objstore.PutOptions{})
	return err
}
