package vfs_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func testEdit(t *testing.T, s suite) {
	const original = "alpha beta\ngamma beta\ndelta\n"
	e := s.env(t, func(c *vfs.Config) { c.MaxWriteBytes = 256 })
	e.upload(t, alice, "/workspace/nul.bin", []byte("beta\x00beta"))
	e.putRaw(t, "alice/skills/pdf/SKILL.md", "beta")
	for _, tc := range []struct {
		name       string
		vpath      string
		old, new   string
		replaceAll bool
		want       string // content afterwards
		count      int64
		err        error
	}{
		{"unique", "/workspace/e.txt", "delta", "DELTA", false, "alpha beta\ngamma beta\nDELTA\n", 1, nil},
		{"unique with context", "/workspace/e.txt", "gamma beta", "gamma BETA", false, "alpha beta\ngamma BETA\ndelta\n", 1, nil},
		{"across lines", "/workspace/e.txt", "beta\ngamma", "beta\n\ngamma", false, "alpha beta\n\ngamma beta\ndelta\n", 1, nil},
		{"delete text", "/workspace/e.txt", "alpha ", "", false, "beta\ngamma beta\ndelta\n", 1, nil},
		{"replace all", "/workspace/e.txt", "beta", "BETA", true, "alpha BETA\ngamma BETA\ndelta\n", 2, nil},
		{"replace all of one", "/workspace/e.txt", "delta", "DELTA", true, "alpha beta\ngamma beta\nDELTA\n", 1, nil},
		{"ambiguous", "/workspace/e.txt", "beta", "BETA", false, original, 0, vfs.ErrEditMismatch},
		{"not found", "/workspace/e.txt", "zeta", "ZETA", false, original, 0, vfs.ErrEditMismatch},
		{"not found with replace all", "/workspace/e.txt", "zeta", "ZETA", true, original, 0, vfs.ErrEditMismatch},
		{"empty old_string", "/workspace/e.txt", "", "x", false, original, 0, errkind.InvalidArgument},
		{"identical strings", "/workspace/e.txt", "beta", "beta", true, original, 0, errkind.InvalidArgument},
		{"result over MaxWriteBytes", "/workspace/e.txt", "delta", strings.Repeat("d", 300), false, original, 0, errkind.ResourceExhausted},
		{"read-only skills", "/skills/pdf/SKILL.md", "beta", "BETA", false, "", 0, errkind.PermissionDenied},
		{"missing file", "/workspace/missing.txt", "beta", "BETA", false, "", 0, errkind.NotFound},
		{"binary file", "/workspace/nul.bin", "beta", "BETA", false, "", 0, textfile.ErrBinary},
		{"directory", "/workspace", "beta", "BETA", false, "", 0, vfs.ErrIsDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.write(t, alice, "/workspace/e.txt", original)
			res, err := e.fs.Edit(t.Context(), alice, tc.vpath, tc.old, tc.new, tc.replaceAll)
			wantErr(t, "Edit", err, tc.err)
			noKeyLeak(t, "Edit", err)
			if tc.want != "" {
				if got := e.read(t, alice, tc.vpath); got != tc.want {
					t.Errorf("content after Edit = %q, want %q", got, tc.want)
				}
			}
			if tc.err != nil {
				return
			}
			if res.Occurrences != tc.count {
				t.Errorf("Occurrences = %d, want %d", res.Occurrences, tc.count)
			}
			stat, err := e.fs.Stat(t.Context(), alice, tc.vpath)
			if err != nil {
				t.Fatal(err)
			}
			if res.Info.Path != tc.vpath || res.Info.Size != int64(len(tc.want)) || res.Info.ETag != stat.ETag || res.Info.ETag == before.ETag {
				t.Errorf("Edit Info = %+v, want path %s, size %d and the new etag %q", res.Info, tc.vpath, len(tc.want), stat.ETag)
			}
		})
	}
	if got := e.read(t, alice, "/skills/pdf/SKILL.md"); got != "beta" {
		t.Errorf("read-only skill changed to %q", got)
	}
}

// testEditConcurrent runs many edits of one file at once. Each replaces the
// marker and puts it back, so each one's old_string is present whenever it
// reads; a lost update would drop a line, which only the conditional write
// (If-Match on the etag read) prevents.
func testEditConcurrent(t *testing.T, s suite) {
	const writers = 20
	e := s.env(t, func(c *vfs.Config) {
		c.EditBackoff = time.Millisecond
		c.EditAttempts = 10 * writers * writers
	})
	const vpath = "/workspace/log.txt"
	e.write(t, alice, vpath, "START\nEND\n")
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			res, err := e.fs.Edit(t.Context(), alice, vpath, "END", fmt.Sprintf("line-%d\nEND", i), false)
			if err != nil {
				t.Errorf("edit %d: %v", i, err)
				return
			}
			if res.Occurrences != 1 {
				t.Errorf("edit %d: Occurrences = %d, want 1", i, res.Occurrences)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(e.read(t, alice, vpath), "\n"), "\n")
	if len(lines) != writers+2 || lines[0] != "START" || lines[len(lines)-1] != "END" {
		t.Fatalf("after %d concurrent edits the file has %d lines: %q", writers, len(lines), lines)
	}
	got := slices.Clone(lines[1 : len(lines)-1])
	slices.Sort(got)
	var want []string
	for i := range writers {
		want = append(want, fmt.Sprintf("line-%d", i))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("lines after concurrent edits = %q, want each of %q once", got, want)
	}
}
