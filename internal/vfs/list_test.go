package vfs_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func testListRoot(t *testing.T, s suite) {
	e := s.env(t, nil)
	for _, tc := range []struct {
		name string
		id   mounts.Caller
		want []string
	}{
		{"without ticket", alice, []string{"/skills", "/workspace"}},
		{"with ticket", aliceTicket, []string{"/skills", "/ticket", "/workspace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.List(t.Context(), tc.id, "/", 0, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(res.Entries); !slices.Equal(got, tc.want) {
				t.Errorf("List(/) = %v, want %v", got, tc.want)
			}
			for _, en := range res.Entries {
				if !en.IsDir || en.Name != en.Path[1:] {
					t.Errorf("mount entry %+v: want a directory named %q", en, en.Path[1:])
				}
			}
			if res.NextPageToken != "" {
				t.Errorf("List(/) NextPageToken = %q, want none", res.NextPageToken)
			}
		})
	}
}

// seedListDir fills /workspace/d with 5 files and 2 subdirectories and
// returns the expected listing: S3 key order, in which a directory sorts as
// its name followed by "/" (so "a.md" comes before the directory "a"). Only
// that order can be paged consistently.
func seedListDir(t *testing.T, e env) []vfs.Info {
	files := map[string]string{"a.md": "alpha", "b.txt": "bravo!", "c": "", "e-1": "echo", "f": "foxtrot"}
	infos := map[string]vfs.Info{}
	for name, content := range files {
		infos[name] = e.write(t, alice, "/workspace/d/"+name, content)
	}
	e.write(t, alice, "/workspace/d/a/inner.md", "in a")
	e.write(t, alice, "/workspace/d/d/deep/x", "deep")
	// Neighbours that must not show up.
	e.write(t, alice, "/workspace/dd", "not in d")
	e.write(t, aliceT2, "/workspace/d/other-thread", "t2")

	var want []vfs.Info
	for _, name := range []string{"a.md", "a/", "b.txt", "c", "d/", "e-1", "f"} {
		if name[len(name)-1] == '/' {
			dir := name[:len(name)-1]
			want = append(want, vfs.Info{Path: "/workspace/d/" + dir, Name: dir, IsDir: true})
			continue
		}
		want = append(want, infos[name])
	}
	return want
}

func testListDir(t *testing.T, s suite) {
	e := s.env(t, nil)
	start := time.Now()
	want := seedListDir(t, e)
	res, err := e.fs.List(t.Context(), alice, "/workspace/d", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.NextPageToken != "" {
		t.Errorf("NextPageToken = %q for a listing that fits one page", res.NextPageToken)
	}
	if got, wantPaths := paths(res.Entries), paths(want); !slices.Equal(got, wantPaths) {
		t.Fatalf("List(/workspace/d) = %v, want %v", got, wantPaths)
	}
	for i, got := range res.Entries {
		w := want[i]
		if got.Name != w.Name || got.IsDir != w.IsDir {
			t.Errorf("entry %s: name %q dir %v, want %q dir %v", got.Path, got.Name, got.IsDir, w.Name, w.IsDir)
		}
		if w.IsDir {
			if got.Size != 0 || got.ETag != "" || !got.ModTime.IsZero() {
				t.Errorf("directory %s: size %d etag %q modtime %v, want zero values", got.Path, got.Size, got.ETag, got.ModTime)
			}
			continue
		}
		if got.Size != w.Size || got.ETag != w.ETag || got.ETag == "" {
			t.Errorf("file %s: size %d etag %q, want size %d etag %q (from Write)", got.Path, got.Size, got.ETag, w.Size, w.ETag)
		}
		// S3 keeps second precision; allow for that and for clock skew.
		if got.ModTime.Before(start.Add(-time.Minute)) || got.ModTime.After(time.Now().Add(time.Minute)) {
			t.Errorf("file %s: modtime %v, want about %v", got.Path, got.ModTime, start)
		}
	}
}

func testListPaging(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxListPage = 3 })
	want := paths(seedListDir(t, e))
	for _, tc := range []struct {
		name     string
		pageSize int
		minPages int
		maxPage  int
	}{
		{"page size 2", 2, 4, 2},
		{"page size 1", 1, 7, 1},
		{"default is the configured maximum", 0, 3, 3},
		{"capped at the configured maximum", 500, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, pages := listAll(t, e.fs, alice, "/workspace/d", tc.pageSize, tc.maxPage)
			if pages < tc.minPages {
				t.Errorf("%d pages, want at least %d", pages, tc.minPages)
			}
			if got := paths(entries); !slices.Equal(got, want) {
				t.Errorf("paged listing = %v, want each of %v exactly once", got, want)
			}
		})
	}

	t.Run("token bound to its directory", func(t *testing.T) {
		res, err := e.fs.List(t.Context(), alice, "/workspace/d", 2, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.NextPageToken == "" {
			t.Fatal("no NextPageToken for a listing of 7 entries in pages of 2")
		}
		for _, other := range []string{"/workspace/d/a", "/workspace", "/workspace/d/d"} {
			_, err := e.fs.List(t.Context(), alice, other, 2, res.NextPageToken)
			wantErr(t, "List("+other+") with a token of /workspace/d", err, errkind.InvalidArgument)
		}
		_, err = e.fs.List(t.Context(), alice, "/workspace/d", 2, "garbage")
		wantErr(t, "List with a garbage token", err, errkind.InvalidArgument)
	})
}

func testListErrors(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/file.txt", "x")
	e.write(t, alice, "/workspace/dir/inner", "x")
	for _, tc := range []struct {
		name  string
		id    mounts.Caller
		vpath string
		want  error
		empty bool
	}{
		{"a file", alice, "/workspace/file.txt", vfs.ErrNotDir, false},
		{"a missing directory", alice, "/workspace/nope", errkind.NotFound, false},
		{"below a missing directory", alice, "/workspace/nope/deeper", errkind.NotFound, false},
		{"a prefix of a name is no directory", alice, "/workspace/di", errkind.NotFound, false},
		{"empty workspace of another thread", aliceT2, "/workspace", nil, true},
		{"empty skills", alice, "/skills", nil, true},
		{"empty ticket", aliceTicket, "/ticket", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.List(t.Context(), tc.id, tc.vpath, 0, "")
			wantErr(t, "List("+tc.vpath+")", err, tc.want)
			noKeyLeak(t, "List("+tc.vpath+")", err)
			if tc.empty && (len(res.Entries) != 0 || res.NextPageToken != "") {
				t.Errorf("List(%s) = %+v, want an empty listing", tc.vpath, res)
			}
		})
	}
}

func testStat(t *testing.T, s suite) {
	e := s.env(t, nil)
	file := e.write(t, alice, "/workspace/notes/todo.md", "- one\n- two\n")
	e.putRaw(t, "alice/skills/pdf/SKILL.md", "# PDF")
	for _, tc := range []struct {
		name  string
		vpath string
		want  vfs.Info
		err   error
	}{
		{"file", "/workspace/notes/todo.md", file, nil},
		{"file in skills", "/skills/pdf/SKILL.md", vfs.Info{Path: "/skills/pdf/SKILL.md", Name: "SKILL.md", Size: 5}, nil},
		{"implicit directory", "/workspace/notes", vfs.Info{Path: "/workspace/notes", Name: "notes", IsDir: true}, nil},
		{"implicit directory in skills", "/skills/pdf", vfs.Info{Path: "/skills/pdf", Name: "pdf", IsDir: true}, nil},
		{"mount root", "/workspace", vfs.Info{Path: "/workspace", Name: "workspace", IsDir: true}, nil},
		{"empty mount root", "/skills", vfs.Info{Path: "/skills", Name: "skills", IsDir: true}, nil},
		{"root", "/", vfs.Info{Path: "/", Name: "/", IsDir: true}, nil},
		{"missing", "/workspace/notes/gone.md", vfs.Info{}, errkind.NotFound},
		{"missing directory", "/workspace/gone", vfs.Info{}, errkind.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.fs.Stat(t.Context(), alice, tc.vpath)
			wantErr(t, "Stat("+tc.vpath+")", err, tc.err)
			if tc.err != nil {
				return
			}
			if got.Path != tc.want.Path || got.Name != tc.want.Name || got.IsDir != tc.want.IsDir || got.Size != tc.want.Size {
				t.Errorf("Stat(%s) = %+v, want %+v", tc.vpath, got, tc.want)
			}
			if tc.want.ETag != "" && got.ETag != tc.want.ETag {
				t.Errorf("Stat(%s).ETag = %q, want %q (from Write)", tc.vpath, got.ETag, tc.want.ETag)
			}
			if !got.IsDir && (got.ETag == "" || got.ModTime.IsZero()) {
				t.Errorf("Stat(%s) = %+v, want an etag and a modtime", tc.vpath, got)
			}
		})
	}
	// Another thread sees none of it.
	if _, err := e.fs.Stat(t.Context(), aliceT2, "/workspace/notes"); !errors.Is(err, errkind.NotFound) {
		t.Errorf("Stat from thread t2: err = %v, want errkind.NotFound", err)
	}
}
