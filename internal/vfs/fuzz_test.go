package vfs_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillsvc/skillsvc/internal/alloctest"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// fuzzLimits are small limits, so the properties below are cheap to check
// and the bounds tight.
func fuzzLimits(c *vfs.Config) {
	c.MaxWriteBytes = 4 << 10
	c.MaxReadBytes = 8 << 10
	c.MaxReadResponse = 1 << 10
	c.MaxPatternBytes = 256
	c.MaxGlobAlternatives = 16
	c.MaxRegexInsts = 200
}

// FuzzEdit: an Edit either fails, or stores exactly the replacement within
// MaxWriteBytes; the memory it takes is bounded by the limits, never by the
// product of occurrences and new_string.
func FuzzEdit(f *testing.F) {
	f.Add("aaaa", "a", "bbbbbbbb", true)
	f.Add("x = 1\ny = 2\n", "= 1", "= 10", false)
	f.Add(strings.Repeat("ab", 1000), "ab", strings.Repeat("z", 4000), true)
	f.Fuzz(func(t *testing.T, content, oldString, newString string, replaceAll bool) {
		if len(content) > 4<<10 || len(newString) > 64<<10 {
			t.Skip() // the handler gets at most MaxWriteBytes and one request
		}
		e := newEnv(t, objstoretest.NewBucket(t, map[string]string{"alice/threads/t1/f.txt": content}), fuzzLimits)
		var res vfs.EditResult
		var err error
		used := alloctest.Bytes(func() { res, err = e.fs.Edit(t.Context(), alice, "/workspace/f.txt", oldString, newString, replaceAll) })
		// Unbounded would be occurrences × new_string: up to 4 Ki × 64 KiB here.
		if bound := uint64(8 << 20); used > bound {
			t.Errorf("Edit allocated %d bytes, want at most %d", used, bound)
		}
		if err != nil {
			if errkind.Of(err) == errkind.Unknown {
				t.Errorf("Edit err = %v has no kind", err)
			}
			return
		}
		want := strings.Replace(content, oldString, newString, 1)
		if replaceAll {
			want = strings.ReplaceAll(content, oldString, newString)
		}
		if got := e.read(t, alice, "/workspace/f.txt"); got != want || len(got) > 4<<10 || res.Info.Size != int64(len(want)) {
			t.Errorf("stored %d bytes, want the %d-byte replacement within the limit", len(got), len(want))
		}
	})
}

// FuzzReadOffsets: any offset and limit give an answer within the response
// cap whose next_offset is between offset and the line count, or a kinded
// error.
func FuzzReadOffsets(f *testing.F) {
	f.Add("a\nb\nc\n", int64(1), int64(1), true)
	f.Add("", int64(0), int64(0), false)
	f.Add(strings.Repeat("long line ", 500)+"\nshort\n", int64(0), int64(1<<62), true)
	f.Fuzz(func(t *testing.T, content string, offset, limit int64, lineNumbers bool) {
		if len(content) > 8<<10 || strings.ContainsRune(content, 0) || !utf8Valid(content) {
			t.Skip()
		}
		e := newEnv(t, objstoretest.NewBucket(t, map[string]string{"alice/threads/t1/f.txt": content}), fuzzLimits)
		res, err := e.fs.Read(t.Context(), alice, "/workspace/f.txt", offset, limit, lineNumbers)
		if err != nil {
			if k := errkind.Of(err); k != errkind.InvalidArgument && k != errkind.OutOfRange {
				t.Errorf("Read(%d, %d) err = %v", offset, limit, err)
			}
			return
		}
		if res.NextOffset < offset || res.NextOffset > res.TotalLines || int64(len(res.Content)) > 1<<10 {
			t.Errorf("Read(%d, %d) = next %d of %d lines, %d bytes", offset, limit, res.NextOffset, res.TotalLines, len(res.Content))
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// FuzzGlobPattern: an accepted pattern is within the caps and matches like
// doublestar; a refused one is InvalidArgument and touches no storage. With
// hidden names explicit, a path without dot-names matches as with them
// included, and a path with one matches at most as then.
func FuzzGlobPattern(f *testing.F) {
	for _, p := range []string{"**/*.md", "{a,b}/{c,d}.txt", "../x", "a/**/b", "[a-c]*", `\{a,b\}`, "{a,{b,c}}{d,e}", ".*", "**/.git/*", "{.e*,docs/*}", "a[/]x/b", "{a/x/b,c.txt}", `a/x\/b`, "docs/{.b,b}.md", "**/{.git,x}/**", "*{}*", "*{,x}*/**", "*/**/**", "**{}", "{**,x}/*.md", "x/{**,}/b", "{*}*", "\x00"} {
		f.Add(p)
	}
	names := []string{"a.md", "docs/b.md", "a/x/b", "c.txt", "{a,b}", ".env", ".git/x.md", "docs/.b.md"}
	files := map[string]string{}
	for _, n := range names {
		files["alice/threads/t1/"+n] = "x"
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		bucket := objstoretest.NewFaulty(objstoretest.NewBucket(t, files))
		e := newEnv(t, bucket, fuzzLimits)
		res, err := e.fs.Glob(t.Context(), alice, "/workspace", vfs.GlobOptions{Pattern: pattern})
		if err != nil {
			if !errors.Is(err, errkind.InvalidArgument) {
				t.Fatalf("Glob(%q) err = %v, want InvalidArgument", pattern, err)
			}
			if n := bucket.Calls(""); n != 0 {
				t.Errorf("refused Glob(%q) made %d storage calls", pattern, n)
			}
			return
		}
		if len(pattern) > 256 {
			t.Errorf("accepted a %d-byte pattern", len(pattern))
		}
		want := map[string]bool{}
		for _, n := range names {
			if ok, _ := doublestar.Match(pattern, n); ok {
				want["/workspace/"+n] = true
			}
		}
		if got := paths(res.Matches); len(got) != len(want) {
			t.Errorf("Glob(%q) = %q, doublestar says %d matches", pattern, got, len(want))
		}
		explicit, err := e.fs.Glob(t.Context(), alice, "/workspace", vfs.GlobOptions{Pattern: pattern, Hidden: vfs.HiddenExplicit})
		if errors.Is(err, errkind.InvalidArgument) && strings.ContainsAny(pattern, "/\x00") {
			return // a "/" escaped or in a class, or a NUL, refused in this mode
		}
		if err != nil {
			t.Fatalf("Glob(%q) hidden explicit: %v", pattern, err)
		}
		// doublestar lets a trailing "/**/**" match one segment or more but
		// "/**" zero or more; explicit mode counts a run of "**" as one.
		// The reference matches each brace-free alternative segment by
		// segment, "**" spanning zero or more segments, as explicit mode
		// reads a pattern: doublestar on the whole pattern misreads a star's
		// empty tail before more pattern ("*d*{}", "*d*{*}", "*d***" and
		// "*d*/**" match nothing "*d*" does), on one segment it does not.
		// The pattern's literal folder is a folder in explicit mode, as in
		// deepagents' matrix ("a.py/**" matches no file a.py): only names
		// below it match.
		static, _ := doublestar.SplitPattern(pattern)
		if static == "." || strings.Contains(static, `\`) {
			static = ""
		}
		want = map[string]bool{}
		for _, alt := range vfs.ExpandBraces(collapseRuns(pattern)) {
			for _, n := range names {
				if static != "" && !strings.HasPrefix(n, static+"/") {
					continue
				}
				if segmentsMatch(strings.Split(alt, "/"), strings.Split(n, "/")) {
					want["/workspace/"+n] = true
				}
			}
		}
		got := map[string]bool{}
		for _, p := range paths(explicit.Matches) {
			got[p] = true
			if !want[p] {
				t.Errorf("Glob(%q) hidden explicit matches %s, which the reference does not", pattern, p)
			}
		}
		// Where a star meets a brace, doublestar's expansion may join stars
		// into a globstar ("{*}*" spans directories, "**{}" does not, nor
		// "{{*}}{*}" through two groups); explicit mode never makes one so,
		// and is held to matching less.
		if strings.Contains(pattern, "*{") || strings.Contains(pattern, "}*") || joinsStars(pattern) {
			return
		}
		for p := range want {
			if !strings.Contains(p, "/.") && !got[p] {
				t.Errorf("Glob(%q) hidden explicit misses %s, which has no dot-name", pattern, p)
			}
		}
	})
}

// joinsStars reports whether expanding pattern's braces puts side by side
// two of its stars that are not side by side in pattern ("{{*}}{*}",
// "{*,a}{*}"): each star outside a class and an escape is marked with its
// offset, and an expansion holding two marks in a row of offsets not
// adjacent joined them.
func joinsStars(pattern string) bool {
	if strings.ContainsAny(pattern, "\x01\x02") {
		return true // the marks would be ambiguous: held to the lesser check
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\' && i+1 < len(pattern):
			b.WriteString(pattern[i : i+2])
			i++
		case c == '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(pattern[i : i+j+2])
			i += j + 1
		case c == '*':
			fmt.Fprintf(&b, "\x01%d\x02", i)
		default:
			b.WriteByte(c)
		}
	}
	for _, alt := range vfs.ExpandBraces(b.String()) {
		prev := -1 // the offset of the star right before, if nothing came between
		for rest := alt; ; {
			k := strings.IndexByte(rest, '\x01')
			if k < 0 {
				break
			}
			if k > 0 {
				prev = -1
			}
			end := k + strings.IndexByte(rest[k:], '\x02')
			off, _ := strconv.Atoi(rest[k+1 : end])
			if prev >= 0 && off != prev+1 {
				return true
			}
			prev, rest = off, rest[end+1:]
		}
	}
	return false
}

// collapseRuns drops each "**" segment that follows another.
// segmentsMatch matches a brace-free pattern's segments against a path's:
// "**" any number of segments, every other segment by doublestar.
func segmentsMatch(pattern, name []string) bool {
	if len(pattern) == 0 {
		return len(name) == 0
	}
	if pattern[0] == "**" {
		for i := range len(name) + 1 {
			if segmentsMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := doublestar.Match(collapseStars(pattern[0]), name[0])
	return err == nil && ok && segmentsMatch(pattern[1:], name[1:])
}

// collapseStars reads each run of stars in a segment as one star, outside
// escapes and character classes (doublestar misreads "*d***").
func collapseStars(seg string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c == '\\' && i+1 < len(seg):
			b.WriteString(seg[i : i+2])
			i++
		case c == '[':
			j := strings.IndexByte(seg[i+1:], ']')
			if j < 0 {
				b.WriteString(seg[i:])
				return b.String()
			}
			b.WriteString(seg[i : i+j+2])
			i += j + 1
		case c == '*' && strings.HasSuffix(b.String(), "*") && !strings.HasSuffix(b.String(), "\\*"):
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func collapseRuns(pattern string) string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if seg == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/")
}

// FuzzGrepPattern: any pattern is refused with InvalidArgument or searched.
func FuzzGrepPattern(f *testing.F) {
	for _, p := range []string{"needle", `(a|b)*c`, `\w{1000}`, "(", "[[:alpha:]]+"} {
		f.Add(p, true, false)
	}
	f.Fuzz(func(t *testing.T, pattern string, regex, fold bool) {
		e := newEnv(t, objstoretest.NewBucket(t, map[string]string{"alice/threads/t1/f.txt": "a needle\nab abc\n"}), fuzzLimits)
		_, err := e.fs.Grep(t.Context(), alice, "/workspace", vfs.GrepOptions{Pattern: pattern, Regex: regex, CaseInsensitive: fold})
		if err != nil && !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("Grep(%q) err = %v", pattern, err)
		}
	})
}

// TestJoinsStars: the fuzz reference's exemption finds stars that only
// brace expansion puts side by side.
func TestJoinsStars(t *testing.T) {
	for pattern, want := range map[string]bool{
		"{{{*}}{*}}": true, "{*,a}{*}": true, "{*}*": true, "*{*}": true,
		"**": false, "a*b*": false, "{a}{b}": false, "{*,a}b*": false, `\*{\*}`: false, "[*]{*}": false, "{a,*}/{*}": false,
	} {
		if got := joinsStars(pattern); got != want {
			t.Errorf("joinsStars(%q) = %v, want %v", pattern, got, want)
		}
	}
}
