package skills_test

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// fixtureFS serves the fixture through the VFS, with the library as the
// /skills tree.
func fixtureFS(t *testing.T, newBucket newBucketFunc) (*vfs.FS, *skills.Library, objstore.Bucket) {
	t.Helper()
	lib, b := fixtureLibrary(t, newBucket, nil)
	fs, err := vfs.New(b, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", lib.Tree))
	if err != nil {
		t.Fatal(err)
	}
	return fs, lib, b
}

// entryNames lists a directory as names, directories with a trailing "/".
func entryNames(t *testing.T, fs *vfs.FS, id mounts.Caller, dir string) ([]string, error) {
	t.Helper()
	var out []string
	token := ""
	for {
		// A small page size exercises paging through the tree.
		res, err := fs.List(t.Context(), id, dir, 3, token)
		if err != nil {
			return nil, err
		}
		for _, e := range res.Entries {
			name := e.Name
			if e.IsDir {
				name += "/"
			}
			out = append(out, name)
		}
		if token = res.NextPageToken; token == "" {
			return out, nil
		}
	}
}

func testVFSList(t *testing.T, newBucket newBucketFunc) {
	fs, _, _ := fixtureFS(t, newBucket)
	for _, tc := range []struct {
		name string
		id   mounts.Caller
		dir  string
		want []string
		err  error
	}{
		{"alice's merged root", aliceID, "/skills",
			[]string{"broken/", "data/", "docs/", "git-helper/", "guide/", "lint/", "misc/", "notes.md", "review/", "tools/"}, nil},
		{"category with user and shared skills", aliceID, "/skills/docs", []string{"docx/", "pdf/", "xlsx/"}, nil},
		{"user skill folder, not the shared one", aliceID, "/skills/docs/pdf", []string{"SKILL.md", "assets/", "references/", "scripts/"}, nil},
		{"shared skill folder", aliceID, "/skills/data/csv", []string{"SKILL.md", "references/"}, nil},
		{"shadowed shared skill", aliceID, "/skills/review/style", []string{"notes.md"}, nil},
		{"flat user skill hides shared skill inside it", aliceID, "/skills/guide", []string{"SKILL.md"}, nil},
		{"overridden shared category", aliceID, "/skills/office", nil, errkind.NotFound},
		{"file", aliceID, "/skills/data/csv/SKILL.md", nil, vfs.ErrNotDir},
		{"missing", aliceID, "/skills/nope", nil, errkind.NotFound},
		{"bob sees only the shared library", bobID, "/skills",
			[]string{".keep", "data/", "docs/", "guide/", "lint/", "office/", "review/"}, nil},
		{"bob's docs", bobID, "/skills/docs", []string{"pdf/", "xlsx/"}, nil},
		{"bob's guide", bobID, "/skills/guide", []string{"intro/"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := entryNames(t, fs, tc.id, tc.dir)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("err = %v, want %v (entries %q)", err, tc.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entries = %q, want %q", got, tc.want)
			}
		})
	}
}

func testVFSReadStat(t *testing.T, newBucket newBucketFunc) {
	fs, _, _ := fixtureFS(t, newBucket)
	ctx := t.Context()
	for _, tc := range []struct {
		name, path string
		id         mounts.Caller
		want       string // content; "" with err set
		err        error
	}{
		{"shared skill", "/skills/data/csv/SKILL.md", aliceID, csvMD, nil},
		{"shared reference", "/skills/data/csv/references/format.md", aliceID, csvRef, nil},
		{"markdown fallback in a shared skill", "/skills/data/csv/references/format", aliceID, csvRef, nil},
		{"user override wins", "/skills/docs/pdf/SKILL.md", aliceID, pdfMD, nil},
		{"bob reads the shared pdf", "/skills/docs/pdf/SKILL.md", bobID, fixture["_shared/skills/docs/pdf/SKILL.md"], nil},
		{"flat shared skill", "/skills/lint/SKILL.md", aliceID, fixture["_shared/skills/lint/SKILL.md"], nil},
		{"shadowed shared file", "/skills/review/style/SKILL.md", aliceID, "", errkind.NotFound},
		{"overridden shared skill", "/skills/office/docx/SKILL.md", aliceID, "", errkind.NotFound},
		{"shared skill inside a user's flat skill", "/skills/guide/intro/SKILL.md", aliceID, "", errkind.NotFound},
		{"shared file outside any skill", "/skills/README.md", aliceID, "", errkind.NotFound},
		{"alice's skill for bob", "/skills/docs/docx/SKILL.md", bobID, "", errkind.NotFound},
		{"binary", "/skills/docs/pdf/assets/logo.png", aliceID, "", textfile.ErrBinary},
		{"directory", "/skills/data/csv", aliceID, "", vfs.ErrIsDir},
		{"escape", "/skills/../_shared/skills/lint/SKILL.md", aliceID, "", errkind.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := fs.Read(ctx, tc.id, tc.path, 0, 0, false)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("err = %v, want %v (content %q)", err, tc.err, res.Content)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Content != strings.TrimSuffix(tc.want, "\n") {
				t.Errorf("content = %q, want %q", res.Content, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, path string
		dir        bool
		size       int
		err        error
	}{
		{"shared skill folder", "/skills/data/csv", true, 0, nil},
		{"shared flat skill folder", "/skills/lint", true, 0, nil},
		{"category of shared skills", "/skills/data", true, 0, nil},
		{"shared file", "/skills/data/csv/SKILL.md", false, len(csvMD), nil},
		{"user file", "/skills/docs/pdf/scripts/run.sh", false, len(runSh), nil},
		{"shadowed", "/skills/review/style/SKILL.md", false, 0, errkind.NotFound},
		{"overridden", "/skills/office", false, 0, errkind.NotFound},
	} {
		t.Run("stat "+tc.name, func(t *testing.T) {
			info, err := fs.Stat(ctx, aliceID, tc.path)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.IsDir != tc.dir || !tc.dir && info.Size != int64(tc.size) {
				t.Errorf("info = %+v, want dir %v size %d", info, tc.dir, tc.size)
			}
		})
	}
	// The mount stays read-only, shared skills included.
	if _, err := fs.Write(ctx, aliceID, "/skills/data/csv/SKILL.md", "x", vfs.WriteOptions{}); !errors.Is(err, errkind.PermissionDenied) {
		t.Errorf("write to a shared skill: %v, want ErrReadOnly", err)
	}
}

func testVFSGlobGrep(t *testing.T, newBucket newBucketFunc) {
	fs, _, _ := fixtureFS(t, newBucket)
	ctx := t.Context()
	globs := []struct {
		name, base, pattern string
		want                []string
	}{
		{"every SKILL.md in the merged view", "/skills", "**/SKILL.md", []string{
			"/skills/broken/SKILL.md", "/skills/data/csv/SKILL.md", "/skills/docs/docx/SKILL.md",
			"/skills/docs/pdf/SKILL.md", "/skills/docs/xlsx/SKILL.md", "/skills/git-helper/SKILL.md",
			"/skills/git-helper/sub/SKILL.md", "/skills/guide/SKILL.md", "/skills/lint/SKILL.md",
			"/skills/misc/warned/SKILL.md", "/skills/tools/a/b/SKILL.md",
		}},
		{"within a category", "/skills/docs", "*/SKILL.md", []string{
			"/skills/docs/docx/SKILL.md", "/skills/docs/pdf/SKILL.md", "/skills/docs/xlsx/SKILL.md",
		}},
		{"static prefix in the pattern", "/skills", "data/**", []string{
			"/skills/data/csv/SKILL.md", "/skills/data/csv/references/format.md",
		}},
		{"from the root", "/", "skills/*/SKILL.md", []string{
			"/skills/broken/SKILL.md", "/skills/git-helper/SKILL.md", "/skills/guide/SKILL.md", "/skills/lint/SKILL.md",
		}},
	}
	for _, tc := range globs {
		t.Run("glob "+tc.name, func(t *testing.T) {
			res, err := fs.Glob(ctx, aliceID, tc.base, vfs.GlobOptions{Pattern: tc.pattern})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Matches {
				got = append(got, m.Path)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("matches =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
	greps := []struct {
		name, base, pattern string
		want                []string // paths with matches
	}{
		{"text in a shared skill", "/skills", "Quote fields", []string{"/skills/data/csv/SKILL.md"}},
		{"text in a shared reference", "/skills/data", "RFC 4180", []string{"/skills/data/csv/references/format.md"}},
		{"text of a shadowed shared skill", "/skills", "shadowed style guide", nil},
		{"text of an overridden shared skill", "/skills", "SHARED", nil},
		{"text of a shared skill inside a flat skill", "/skills", "shared intro text", nil},
		{"user text", "/skills", "Fill the form", []string{"/skills/docs/pdf/references/forms.md"}},
	}
	for _, tc := range greps {
		t.Run("grep "+tc.name, func(t *testing.T) {
			res, err := fs.Grep(ctx, aliceID, tc.base, vfs.GrepOptions{Pattern: tc.pattern})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Matches {
				got = append(got, m.Path)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("matches in %q, want %q", got, tc.want)
			}
		})
	}
}

// testVFSLocationsReadable: every location a listing hands out can be read
// through the filesystem, for every user.
func testVFSLocationsReadable(t *testing.T, newBucket newBucketFunc) {
	fs, lib, _ := fixtureFS(t, newBucket)
	ctx := t.Context()
	for _, id := range []mounts.Caller{aliceID, bobID} {
		list, err := lib.Catalog.Skills(ctx, id, skillview.ListOptions{IncludeInvalid: true, IncludeDisabled: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			t.Run(id.User()+s.Location(), func(t *testing.T) {
				res, err := fs.Read(ctx, id, s.Location(), 0, 0, false)
				if err != nil {
					t.Fatalf("listed at %s but unreadable: %v", s.Location(), err)
				}
				if !s.Valid() {
					return
				}
				d, err := lib.Catalog.Get(ctx, id, s.Location())
				if err != nil {
					t.Fatal(err)
				}
				if res.Content != strings.TrimSuffix(d.Raw, "\n") {
					t.Errorf("VFS shows %q, Get %q", res.Content, d.Raw)
				}
				if info, err := fs.Stat(ctx, id, s.Path); err != nil || !info.IsDir {
					t.Errorf("Stat(%s) = %+v, %v; want a directory", s.Path, info, err)
				}
				for _, f := range d.Files {
					if _, err := fs.Stat(ctx, id, s.Path+"/"+f.Path); err != nil {
						t.Errorf("file %s of %s: %v", f.Path, s.Path, err)
					}
				}
			})
		}
	}
}

// TestSkillFileOneLimit: a skill file has one size limit as text,
// --skills.max-file-bytes, whether ReadSkillFile or the VFS's Read of its
// /skills path reads it; both read the same bytes.
func TestSkillFileOneLimit(t *testing.T) {
	b := skillstest.New()
	b.User("alice").Skill("big", "", "Holds files of two sizes.", "# Big\n").
		File("big/small.md", strings.Repeat("s", 100)+"\n").
		File("big/large.md", strings.Repeat("l", 300)+"\n")
	bucket := b.Bucket(t)
	lib := skillstest.Library(t, bucket, func(c *skills.Config) { c.MaxFileBytes = 200 })
	fs, err := vfs.New(bucket, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", lib.Tree))
	if err != nil {
		t.Fatal(err)
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	for _, tc := range []struct {
		file string
		err  error
	}{
		{"small.md", nil},
		{"small", nil}, // the .md fallback, on both paths
		{"large.md", errkind.ResourceExhausted},
	} {
		t.Run(tc.file, func(t *testing.T) {
			text, vpath, rerr := lib.Catalog.ReadFile(t.Context(), alice, "big", tc.file, skillview.ReadOptions{})
			res, verr := fs.Read(t.Context(), alice, "/skills/big/"+tc.file, 0, 0, false)
			if tc.err != nil {
				if !errors.Is(rerr, tc.err) || !errors.Is(verr, tc.err) {
					t.Errorf("ReadFile: %v; VFS Read: %v; want %v from both", rerr, verr, tc.err)
				}
				return
			}
			if rerr != nil || verr != nil {
				t.Fatalf("ReadFile: %v; VFS Read: %v", rerr, verr)
			}
			if vpath != res.Path || strings.TrimSuffix(text, "\n") != res.Content {
				t.Errorf("ReadFile = %s %q, VFS Read = %s %q; want the same file", vpath, text, res.Path, res.Content)
			}
		})
	}
}
