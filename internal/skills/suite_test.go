package skills_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

var (
	aliceID = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	bobID   = mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1"})
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
		{"RenderBaseDir", testRenderBaseDir},
		{"ReadFile", testReadFile},
		{"ReadFileHints", testReadFileHints},
		{"PageTokens", testPageTokens},
		{"Export", testExport},
		{"ExportModes", testExportModes},
		{"Search", testSearch},
		{"SearchOptions", testSearchOptions},
		{"IndexRefresh", testIndexRefresh},
		{"ParseCache", testParseCache},
		{"VFSList", testVFSList},
		{"VFSReadStat", testVFSReadStat},
		{"VFSGlobGrep", testVFSGlobGrep},
		{"VFSLocationsReadable", testVFSLocationsReadable},
		{"NameLookup", testNameLookup},
		{"NameOverride", testNameOverride},
		{"DuplicateNames", testDuplicateNames},
		{"DisplayNames", testDisplayNames},
		{"Nested", testNested},
		{"DisableByName", testDisableByName},
		{"Manifest", testManifest},
		{"LibraryDigest", testLibraryDigest},
		{"Scopes", testScopes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, newBucket)
		})
	}
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

// fixtureSkills holds every object of the fixture that lies in a skills
// library.
var fixtureSkills = func() *skillstest.Builder {
	f := skillstest.New()
	f.User("alice").
		File("docs/pdf/SKILL.md", pdfMD).
		FileMode("docs/pdf/scripts/run.sh", runSh, 0o755).
		File("docs/pdf/scripts/x.py", xPy).
		File("docs/pdf/references/forms.md", formsMD).
		File("docs/pdf/assets/logo.png", logoPNG).
		File("docs/docx/SKILL.md", docxMD).
		Skill("git-helper", "", "Write commit messages and resolve merge conflicts.", "# Git\n").
		File("git-helper/reference.md", "# Git reference\n").
		Skill("git-helper/sub", "", "Not a skill: inside a flat skill.", "sub\n").
		Skill("tools/a/b", "", "Not a skill: too deep.", "b\n").
		File("broken/SKILL.md", "# Broken\n\nNo frontmatter here.\n").
		Skill("misc/warned", "other-name", warnedDesc, "# Warned\n").
		File("review/style/notes.md", "alice's own notes shadow the shared style skill\n").
		Skill("guide", "", "Alice's guide to the team.", "# Guide\n").
		File("notes.md", "library notes\n")
	f.User("bob").File(".keep", "")
	f.Shared().
		Skill("docs/pdf", "", "SHARED pdf skill, overridden by alice.", "# Shared PDF\n").
		File("data/csv/SKILL.md", csvMD).
		File("data/csv/references/format.md", csvRef).
		Skill("docs/xlsx", "", "Build spreadsheets with formulas and charts.", "# XLSX\n").
		Skill("office/docx", "", "SHARED docx, overridden by alice's docs/docx.", "# Shared DOCX\n").
		Skill("lint", "", "Lint code and fix style issues.", "# Lint\n").
		Skill("review/style", "", "Shared style guide reviews.", "shadowed style guide\n").
		Skill("guide/intro", "", "Shared introduction.", "shared intro text\n").
		File("README.md", "not part of any skill\n")
	return f
}()

// fixture is the skills objects of the fixture by key, for tests that
// compare against their content.
var fixture = fixtureSkills.Files()

// The one fixture object outside every skills library: a catalog must never
// resolve it.
const workspaceKey, workspaceMD = "alice/threads/t1/workspace.md", "not a skill\n"

// fixtureLibrary seeds the fixture into a fresh bucket.
func fixtureLibrary(t *testing.T, newBucket newBucketFunc, tune func(*skills.Config)) (*skills.Library, objstore.Bucket) {
	t.Helper()
	b := newBucket(t)
	fixtureSkills.Put(t, b)
	if _, err := b.Put(t.Context(), workspaceKey, strings.NewReader(workspaceMD), int64(len(workspaceMD)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return skillstest.Library(t, b, tune), b
}

// putAliceSkill writes dir/SKILL.md into alice's library, as an upload
// after the library was built would.
func putAliceSkill(t *testing.T, b objstore.Bucket, dir, desc, body string) {
	t.Helper()
	s := skillstest.New()
	s.User("alice").Skill(dir, "", desc, body)
	s.Put(t, b)
}

// dirs lists the Dir of each skill, with its layer: "docs/pdf@user".
func dirs(list []skillview.Skill) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Dir + "@" + s.Layer
	}
	return out
}

func wantDirs(t *testing.T, list []skillview.Skill, want ...string) {
	t.Helper()
	if got := dirs(list); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("skills =\n  %q\nwant\n  %q", got, want)
	}
}

// listedBy lists alice's skills as Dir → what field says of each.
func listedBy[V any](t *testing.T, lib *skills.Library, opts skillview.ListOptions, field func(skillview.Skill) V) map[string]V {
	t.Helper()
	list, err := lib.Catalog.Skills(t.Context(), aliceID, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]V{}
	for _, s := range list {
		out[s.Dir] = field(s)
	}
	return out
}

var aliceSkills = []string{
	"data/csv@shared", "docs/docx@user", "docs/pdf@user", "docs/xlsx@shared",
	"git-helper@user", "guide@user", "lint@shared", "misc/warned@user",
}
