package vfs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func testDelete(t *testing.T, s suite) {
	for _, tc := range []struct {
		name      string
		vpath     string
		recursive bool
		count     int64
		err       error
		gone      []string // keys removed, relative to alice/threads/t1/
	}{
		{"file", "/workspace/f.txt", false, 1, nil, []string{"f.txt"}},
		{"file with recursive", "/workspace/f.txt", true, 1, nil, []string{"f.txt"}},
		{"nested file", "/workspace/d/sub/c", false, 1, nil, []string{"d/sub/c"}},
		{"missing", "/workspace/missing", false, 0, errkind.NotFound, nil},
		{"missing with recursive", "/workspace/missing", true, 0, errkind.NotFound, nil},
		{"directory without recursive", "/workspace/d", false, 0, vfs.ErrIsDir, nil},
		{"directory", "/workspace/d", true, 3, nil, []string{"d/a", "d/b", "d/sub/c"}},
		{"subdirectory", "/workspace/d/sub", true, 1, nil, []string{"d/sub/c"}},
		{"mount root without recursive", "/workspace", false, 0, vfs.ErrIsDir, nil},
		{"mount root", "/workspace", true, 6, nil, []string{"d.txt", "d/a", "d/b", "d/sub/c", "dd", "f.txt"}},
		{"read-only skills file", "/skills/pdf/SKILL.md", false, 0, errkind.PermissionDenied, nil},
		{"read-only skills", "/skills", true, 0, errkind.PermissionDenied, nil},
		{"root", "/", true, 0, errkind.InvalidArgument, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.env(t, nil)
			for _, p := range []string{"f.txt", "d/a", "d/b", "d/sub/c", "dd", "d.txt"} {
				e.write(t, alice, "/workspace/"+p, p)
			}
			e.write(t, aliceT2, "/workspace/d/a", "another thread")
			e.putRaw(t, "alice/skills/pdf/SKILL.md", "skill")
			before := e.keys(t)

			n, err := e.fs.Delete(t.Context(), alice, tc.vpath, tc.recursive)
			wantErr(t, "Delete("+tc.vpath+")", err, tc.err)
			noKeyLeak(t, "Delete("+tc.vpath+")", err)
			if n != tc.count {
				t.Errorf("Delete(%s) = %d, want %d", tc.vpath, n, tc.count)
			}
			var want []string
			for _, k := range before {
				if rel, ours := strings.CutPrefix(k, "alice/threads/t1/"); !ours || !slices.Contains(tc.gone, rel) {
					want = append(want, k)
				}
			}
			if got := e.keys(t); !slices.Equal(got, want) {
				t.Errorf("bucket after Delete(%s) = %v, want %v", tc.vpath, got, want)
			}
			if tc.err != nil {
				return
			}
			if _, err := e.fs.Stat(t.Context(), alice, tc.vpath); tc.vpath != "/workspace" {
				wantErr(t, "Stat after Delete", err, errkind.NotFound)
			}
			// The listing of the parent no longer shows it.
			res, err := e.fs.List(t.Context(), alice, "/workspace", 0, "")
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(paths(res.Entries), tc.vpath) {
				t.Errorf("List(/workspace) after Delete(%s) = %v", tc.vpath, paths(res.Entries))
			}
		})
	}
}
