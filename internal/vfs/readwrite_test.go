package vfs_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func testRead(t *testing.T, s suite) {
	e := s.env(t, nil)
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	info := e.write(t, alice, "/workspace/lines.txt", b.String())
	for _, tc := range []struct {
		name          string
		offset, limit int64
		numbers       bool
		want          string
		next          int64
		err           error
		eol           bool // the window ends the file, after a line break
	}{
		{"everything", 0, 0, false, strings.TrimSuffix(b.String(), "\n"), 10, nil, true},
		{"window", 2, 3, false, "line 3\nline 4\nline 5", 5, nil, false},
		{"window past the end is cut", 8, 5, false, "line 9\nline 10", 10, nil, true},
		{"last line", 9, 1, false, "line 10", 10, nil, true},
		{"first line", 0, 1, false, "line 1", 1, nil, false},
		{"line numbers", 1, 2, true, "     2\tline 2\n     3\tline 3", 3, nil, false},
		{"line numbers to the end", 8, 0, true, "     9\tline 9\n    10\tline 10", 10, nil, true},
		{"offset at the end", 10, 1, false, "", 0, errkind.OutOfRange, false},
		{"offset past the end", 11, 1, false, "", 0, errkind.OutOfRange, false},
		{"negative offset", -1, 1, false, "", 0, errkind.InvalidArgument, false},
		{"negative limit", 0, -1, false, "", 0, errkind.InvalidArgument, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.Read(t.Context(), alice, "/workspace/lines.txt", tc.offset, tc.limit, tc.numbers)
			wantErr(t, "Read", err, tc.err)
			if tc.err != nil {
				return
			}
			if res.Content != tc.want {
				t.Errorf("Content = %q, want %q", res.Content, tc.want)
			}
			if res.TotalLines != 10 || res.NextOffset != tc.next {
				t.Errorf("TotalLines, NextOffset = %d, %d, want 10, %d", res.TotalLines, res.NextOffset, tc.next)
			}
			if res.Path != "/workspace/lines.txt" || res.ETag != info.ETag {
				t.Errorf("Path, ETag = %q, %q, want %q, %q", res.Path, res.ETag, "/workspace/lines.txt", info.ETag)
			}
			if res.EndsWithNewline != tc.eol {
				t.Errorf("EndsWithNewline = %v, want %v", res.EndsWithNewline, tc.eol)
			}
		})
	}
	// Without a final line break, the last line ends the file unterminated.
	e.write(t, alice, "/workspace/open.txt", "a\nb")
	if res, err := e.fs.Read(t.Context(), alice, "/workspace/open.txt", 0, 0, false); err != nil || res.Content != "a\nb" || res.EndsWithNewline {
		t.Errorf("Read(open.txt) = %+v, %v; want a, b without a final line break", res, err)
	}
	e.write(t, alice, "/workspace/blank.txt", "\n")
	if res, err := e.fs.Read(t.Context(), alice, "/workspace/blank.txt", 0, 0, false); err != nil || res.Content != "" || res.TotalLines != 1 || !res.EndsWithNewline {
		t.Errorf("Read(blank.txt) = %+v, %v; want one empty line, terminated", res, err)
	}
}

func testReadDefaultLimit(t *testing.T, s suite) {
	e := s.env(t, nil)
	lines := make([]string, 2500)
	for i := range lines {
		lines[i] = fmt.Sprintf("row %04d", i)
	}
	e.write(t, alice, "/workspace/long.txt", strings.Join(lines, "\n")+"\n")
	if vfs.DefaultReadLimit != 2000 {
		t.Errorf("DefaultReadLimit = %d, want 2000 as documented in the API", vfs.DefaultReadLimit)
	}
	res, err := e.fs.Read(t.Context(), alice, "/workspace/long.txt", 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(res.Content, "\n"); !slices.Equal(got, lines[:2000]) {
		t.Errorf("first page has %d lines (%q…%q), want rows 0000 to 1999", len(got), got[0], got[len(got)-1])
	}
	if res.TotalLines != 2500 || res.NextOffset != 2000 {
		t.Errorf("TotalLines, NextOffset = %d, %d, want 2500, 2000", res.TotalLines, res.NextOffset)
	}
	res, err = e.fs.Read(t.Context(), alice, "/workspace/long.txt", res.NextOffset, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(res.Content, "\n"); !slices.Equal(got, lines[2000:]) {
		t.Errorf("second page has %d lines, want rows 2000 to 2499", len(got))
	}
	if res.NextOffset != res.TotalLines {
		t.Errorf("NextOffset = %d after the last page, want TotalLines %d", res.NextOffset, res.TotalLines)
	}
}

func testReadSpecialFiles(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxReadBytes = 64 })
	e.write(t, alice, "/workspace/empty.txt", "")
	e.write(t, alice, "/workspace/no-newline.txt", "a\nb")
	e.write(t, alice, "/workspace/blank-lines.txt", "\n\n")
	e.write(t, alice, "/workspace/exactly-64.txt", strings.Repeat("x", 63)+"\n")
	e.write(t, alice, "/workspace/dir/inner.txt", "x")
	e.upload(t, alice, "/workspace/nul.bin", []byte("text\x00more"))
	e.upload(t, alice, "/workspace/latin1.txt", []byte("caf\xe9"))
	e.upload(t, alice, "/workspace/big.txt", []byte(strings.Repeat("y", 65)))
	for _, tc := range []struct {
		name   string
		vpath  string
		offset int64
		want   string
		total  int64
		err    error
	}{
		{"empty file", "/workspace/empty.txt", 0, "", 0, nil},
		{"offset past an empty file", "/workspace/empty.txt", 1, "", 0, errkind.OutOfRange},
		{"no final newline", "/workspace/no-newline.txt", 0, "a\nb", 2, nil},
		{"blank lines", "/workspace/blank-lines.txt", 0, "\n", 2, nil},
		{"exactly MaxReadBytes", "/workspace/exactly-64.txt", 0, strings.Repeat("x", 63), 1, nil},
		{"contains NUL", "/workspace/nul.bin", 0, "", 0, textfile.ErrBinary},
		{"invalid UTF-8", "/workspace/latin1.txt", 0, "", 0, textfile.ErrBinary},
		{"over MaxReadBytes", "/workspace/big.txt", 0, "", 0, errkind.ResourceExhausted},
		{"implicit directory", "/workspace/dir", 0, "", 0, vfs.ErrIsDir},
		{"mount root", "/workspace", 0, "", 0, vfs.ErrIsDir},
		{"root", "/", 0, "", 0, vfs.ErrIsDir},
		{"missing", "/workspace/missing.txt", 0, "", 0, errkind.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.Read(t.Context(), alice, tc.vpath, tc.offset, 0, false)
			wantErr(t, "Read("+tc.vpath+")", err, tc.err)
			noKeyLeak(t, "Read("+tc.vpath+")", err)
			if tc.err != nil {
				return
			}
			if res.Content != tc.want || res.TotalLines != tc.total || res.NextOffset != tc.total {
				t.Errorf("Read(%s) = %q, %d lines, next %d; want %q, %d lines, next %d",
					tc.vpath, res.Content, res.TotalLines, res.NextOffset, tc.want, tc.total, tc.total)
			}
		})
	}
}

func testReadMarkdownFallback(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/notes.md", "notes in markdown")
	e.write(t, alice, "/workspace/plan.txt.md", "only with .md appended")
	e.write(t, alice, "/workspace/both", "the file itself")
	e.write(t, alice, "/workspace/both.md", "the markdown twin")
	e.write(t, alice, "/workspace/folder/x.md", "x")
	e.write(t, alice, "/workspace/folder.md", "a twin of a directory")
	e.putRaw(t, "alice/skills/pdf/reference.md", "# Reference")
	for _, tc := range []struct {
		name  string
		vpath string
		path  string // the path Read reports
		want  string
		err   error
	}{
		{"falls back to .md", "/workspace/notes", "/workspace/notes.md", "notes in markdown", nil},
		{"skill reference", "/skills/pdf/reference", "/skills/pdf/reference.md", "# Reference", nil},
		{"the exact file wins", "/workspace/both", "/workspace/both", "the file itself", nil},
		{"no fallback with an extension", "/workspace/plan.txt", "", "", errkind.NotFound},
		{"no fallback for a directory", "/workspace/folder", "", "", vfs.ErrIsDir},
		{"neither exists", "/workspace/nothing", "", "", errkind.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.Read(t.Context(), alice, tc.vpath, 0, 0, false)
			wantErr(t, "Read("+tc.vpath+")", err, tc.err)
			if tc.err != nil {
				return
			}
			if res.Path != tc.path || res.Content != tc.want {
				t.Errorf("Read(%s) = path %q content %q, want path %q content %q", tc.vpath, res.Path, res.Content, tc.path, tc.want)
			}
		})
	}
}

func testWrite(t *testing.T, s suite) {
	const limit = 32
	staleTag := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name    string
		vpath   string
		content string
		opts    func(tag string) vfs.WriteOptions // tag: the etag of /workspace/a
		err     error
	}{
		{"create", "/workspace/new/file.md", "hello", nil, nil},
		{"overwrite", "/workspace/a", "two", nil, nil},
		{"empty content", "/workspace/empty", "", nil, nil},
		{"exactly MaxWriteBytes", "/workspace/full", strings.Repeat("z", limit), nil, nil},
		{"if_match current", "/workspace/a", "two", func(tag string) vfs.WriteOptions { return vfs.WriteOptions{IfMatch: tag} }, nil},
		{"if_match stale", "/workspace/a", "two", func(string) vfs.WriteOptions { return vfs.WriteOptions{IfMatch: staleTag} }, errkind.FailedPrecondition},
		{"if_match missing file", "/workspace/nope", "two", func(tag string) vfs.WriteOptions { return vfs.WriteOptions{IfMatch: tag} }, errkind.FailedPrecondition},
		{"must_not_exist new", "/workspace/fresh", "two", func(string) vfs.WriteOptions { return vfs.WriteOptions{MustNotExist: true} }, nil},
		{"must_not_exist existing", "/workspace/a", "two", func(string) vfs.WriteOptions { return vfs.WriteOptions{MustNotExist: true} }, errkind.AlreadyExists},
		{"both conditions", "/workspace/fresh", "two", func(tag string) vfs.WriteOptions {
			return vfs.WriteOptions{IfMatch: tag, MustNotExist: true}
		}, errkind.InvalidArgument},
		{"over MaxWriteBytes", "/workspace/huge", strings.Repeat("z", limit+1), nil, errkind.ResourceExhausted},
		{"read-only skills", "/skills/x.md", "two", nil, errkind.PermissionDenied},
		{"read-only skills root", "/skills", "two", nil, errkind.PermissionDenied},
		{"root", "/", "two", nil, vfs.ErrIsDir},
		{"mount root", "/workspace", "two", nil, vfs.ErrIsDir},
		{"below a file", "/workspace/a/b", "two", nil, vfs.ErrNotDir},
		{"deep below a file", "/workspace/a/b/c", "two", nil, vfs.ErrNotDir},
		{"onto a directory", "/workspace/dir", "two", nil, vfs.ErrIsDir},
		{"invalid UTF-8", "/workspace/latin1", "caf\xe9", nil, errkind.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.env(t, func(c *vfs.Config) { c.MaxWriteBytes = limit })
			tag := e.write(t, alice, "/workspace/a", "one").ETag
			e.write(t, alice, "/workspace/dir/x", "x")
			before := e.keys(t)
			var opts vfs.WriteOptions
			if tc.opts != nil {
				opts = tc.opts(tag)
			}
			info, err := e.fs.Write(t.Context(), alice, tc.vpath, tc.content, opts)
			wantErr(t, "Write("+tc.vpath+")", err, tc.err)
			noKeyLeak(t, "Write("+tc.vpath+")", err)
			if tc.err != nil {
				if after := e.keys(t); !slices.Equal(after, before) {
					t.Errorf("a failed Write changed the bucket: keys %v, were %v", after, before)
				}
				if got := e.read(t, alice, "/workspace/a"); got != "one" {
					t.Errorf("a failed Write changed /workspace/a to %q", got)
				}
				return
			}
			if info.Path != tc.vpath || info.IsDir || info.Size != int64(len(tc.content)) || info.ETag == "" {
				t.Errorf("Write returned %+v", info)
			}
			if got := e.read(t, alice, tc.vpath); got != tc.content {
				t.Errorf("read back %q, want %q", got, tc.content)
			}
			stat, err := e.fs.Stat(t.Context(), alice, tc.vpath)
			if err != nil || stat.ETag != info.ETag {
				t.Errorf("Stat after Write = %+v, %v; want the etag %q that Write returned", stat, err, info.ETag)
			}
			if tc.vpath == "/workspace/a" && info.ETag == tag {
				t.Errorf("overwriting with new content kept the etag %q", info.ETag)
			}
		})
	}
}
