package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func seedGlob(t *testing.T, e env) {
	for _, p := range []string{"a.md", "b.go", "docs/c.md", "docs/deep/d.md", "src/main.go", "src/x/y.go", "src/x/notes.txt"} {
		e.write(t, alice, "/workspace/"+p, p)
	}
	e.write(t, aliceTicket, "/ticket/t.md", "ticket")
	e.write(t, aliceT2, "/workspace/other-thread.md", "t2")
	e.write(t, bob, "/workspace/bob.md", "bob")
	e.putRaw(t, "alice/skills/pdf/SKILL.md", "skill")
	e.putRaw(t, "bob/skills/bob/SKILL.md", "skill")
}

func testGlob(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxGlobResults = 4 })
	seedGlob(t, e)
	for _, tc := range []struct {
		name      string
		id        mounts.Caller
		base      string
		pattern   string
		max       int
		want      []string
		truncated bool
		err       error
	}{
		{"recursive", alice, "/workspace", "**/*.md", 0,
			[]string{"/workspace/a.md", "/workspace/docs/c.md", "/workspace/docs/deep/d.md"}, false, nil},
		{"one level", alice, "/workspace", "*.md", 0, []string{"/workspace/a.md"}, false, nil},
		{"static directory", alice, "/workspace", "docs/*.md", 0, []string{"/workspace/docs/c.md"}, false, nil},
		{"static directory recursive", alice, "/workspace", "src/**", 0,
			[]string{"/workspace/src/main.go", "/workspace/src/x/notes.txt", "/workspace/src/x/y.go"}, false, nil},
		{"exact name", alice, "/workspace", "src/x/y.go", 0, []string{"/workspace/src/x/y.go"}, false, nil},
		{"alternatives", alice, "/workspace", "{a.md,b.go}", 0, []string{"/workspace/a.md", "/workspace/b.go"}, false, nil},
		{"from a subdirectory", alice, "/workspace/docs", "**", 0,
			[]string{"/workspace/docs/c.md", "/workspace/docs/deep/d.md"}, false, nil},
		{"from the root with the mount in the pattern", alice, "/", "workspace/**/*.go", 0,
			[]string{"/workspace/b.go", "/workspace/src/main.go", "/workspace/src/x/y.go"}, false, nil},
		{"from the root across mounts", aliceTicket, "/", "*/*.md", 0,
			[]string{"/ticket/t.md", "/workspace/a.md"}, false, nil},
		{"from the root, empty base", aliceTicket, "", "**/SKILL.md", 0, []string{"/skills/pdf/SKILL.md"}, false, nil},
		{"from the root, no ticket mount", alice, "/", "ticket/**", 0, nil, false, nil},
		{"no match", alice, "/workspace", "**/*.rs", 0, nil, false, nil},
		{"max results", alice, "/workspace", "**/*.md", 2,
			[]string{"/workspace/a.md", "/workspace/docs/c.md"}, true, nil},
		{"max results exactly reached", alice, "/workspace", "**/*.md", 3,
			[]string{"/workspace/a.md", "/workspace/docs/c.md", "/workspace/docs/deep/d.md"}, false, nil},
		{"capped at MaxGlobResults", alice, "/workspace", "**", 100,
			[]string{"/workspace/a.md", "/workspace/b.go", "/workspace/docs/c.md", "/workspace/docs/deep/d.md"}, true, nil},
		{"unclosed bracket", alice, "/workspace", "[a-", 0, nil, false, errkind.InvalidArgument},
		{"unclosed brace", alice, "/workspace", "{a,b", 0, nil, false, errkind.InvalidArgument},
		{"empty pattern", alice, "/workspace", "", 0, nil, false, errkind.InvalidArgument},
		{"absolute pattern", alice, "/workspace", "/workspace/*.md", 0, nil, false, errkind.InvalidArgument},
		{"base is no mount", alice, "/etc", "**", 0, nil, false, errkind.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.Glob(t.Context(), tc.id, tc.base, vfs.GlobOptions{Pattern: tc.pattern, MaxResults: tc.max})
			wantErr(t, "Glob", err, tc.err)
			if tc.err != nil {
				return
			}
			if got := paths(res.Matches); !slices.Equal(got, tc.want) {
				t.Errorf("Glob(%q, %q) = %v, want %v", tc.base, tc.pattern, got, tc.want)
			}
			if res.Truncated != tc.truncated {
				t.Errorf("Truncated = %v, want %v", res.Truncated, tc.truncated)
			}
			for _, m := range res.Matches {
				if m.IsDir || m.ETag == "" || m.Size == 0 || m.Name != m.Path[strings.LastIndexByte(m.Path, '/')+1:] {
					t.Errorf("match %+v: want a file with name, size and etag", m)
				}
			}
		})
	}
}

// testGlobHidden: names starting with "." under each hidden-entry mode, and
// base-name matching. The tree and the explicit cases are deepagents'
// cross-backend glob matrix (tests/unit_tests/backends/test_glob_semantics.py),
// which its Python client sends as: a pattern without "/" matched by base
// name, one with "/" by relative path, dot-names explicit.
func testGlobHidden(t *testing.T, s suite) {
	e := s.env(t, nil)
	for _, p := range []string{"a.py", "sub/b.py", "sub/nested/c.py", "readme.md", ".hidden.py", ".hidden/x.py",
		".hidden/nested/y.py", ".github/workflows/ci.yml", ".env"} {
		e.write(t, alice, "/workspace/"+p, p)
	}
	const (
		inc = vfs.HiddenInclude
		exp = vfs.HiddenExplicit
	)
	ws := func(ps ...string) []string {
		for i, p := range ps {
			ps[i] = "/workspace/" + p
		}
		return ps
	}
	bare := ws("a.py", ".hidden/nested/y.py", ".hidden/x.py", "sub/b.py", "sub/nested/c.py")
	for _, tc := range []struct {
		name     string
		base     string
		pattern  string
		hidden   vfs.Hidden
		baseName bool
		want     []string
	}{
		// Explicit, by base name: hidden directories on the way do not count,
		// a hidden base name needs a pattern starting with ".".
		{"bare *.py", "/workspace", "*.py", exp, true, bare},
		{"bare *.md", "/workspace", "*.md", exp, true, ws("readme.md")},
		{"bare *.yml reaches into .github", "/workspace", "*.yml", exp, true, ws(".github/workflows/ci.yml")},
		{"bare exact dot-name", "/workspace", ".hidden.py", exp, true, ws(".hidden.py")},
		{"bare .*.py", "/workspace", ".*.py", exp, true, ws(".hidden.py")},
		{"bare .*", "/workspace", ".*", exp, true, ws(".env", ".hidden.py")},
		{"bare escaped dot", "/workspace", `\.env`, exp, true, ws(".env")},
		{"bare class is no explicit dot", "/workspace", "[.]env", exp, true, nil},
		{"bare *", "/workspace", "*", exp, true, ws(".github/workflows/ci.yml", ".hidden/nested/y.py", ".hidden/x.py", "a.py", "readme.md", "sub/b.py", "sub/nested/c.py")},
		{"bare braces", "/workspace", "*.{py,md}", exp, true, ws("a.py", ".hidden/nested/y.py", ".hidden/x.py", "readme.md", "sub/b.py", "sub/nested/c.py")},
		{"bare braces with a dot alternative", "/workspace", "{.env,*.md}", exp, true, ws(".env", "readme.md")},
		{"bare ?", "/workspace", "?.py", exp, true, bare},
		{"bare class", "/workspace", "[ab].py", exp, true, ws("a.py", "sub/b.py")},
		{"bare negated class", "/workspace", "[!a].py", exp, true, ws(".hidden/nested/y.py", ".hidden/x.py", "sub/b.py", "sub/nested/c.py")},
		{"bare negated class with ^", "/workspace", "[^a].py", exp, true, ws(".hidden/nested/y.py", ".hidden/x.py", "sub/b.py", "sub/nested/c.py")},
		{"bare from a subdirectory", "/workspace/sub", "*.py", exp, true, ws("sub/b.py", "sub/nested/c.py")},
		// Explicit, by relative path: "**" and "*" do not enter dot-names.
		{"**/*.py", "/workspace", "**/*.py", exp, false, ws("a.py", "sub/b.py", "sub/nested/c.py")},
		{"**/*.yml", "/workspace", "**/*.yml", exp, false, nil},
		{"**/**/*.yml", "/workspace", "**/**/*.yml", exp, false, nil},
		{"anchored *.py", "/workspace", "*.py", exp, false, ws("a.py")},
		{"sub/*.py", "/workspace", "sub/*.py", exp, false, ws("sub/b.py")},
		{"sub/**/*.py", "/workspace", "sub/**/*.py", exp, false, ws("sub/b.py", "sub/nested/c.py")},
		{"a.py/**", "/workspace", "a.py/**", exp, false, nil},
		{"named dot directory", "/workspace", ".github/**/*.yml", exp, false, ws(".github/workflows/ci.yml")},
		{"named dot directory, one level", "/workspace", ".hidden/*.py", exp, false, ws(".hidden/x.py")},
		{"named dot directory, recursive", "/workspace", ".hidden/**/*.py", exp, false, ws(".hidden/nested/y.py", ".hidden/x.py")},
		{"dot wildcard directory", "/workspace", ".*/**/*.yml", exp, false, ws(".github/workflows/ci.yml")},
		{"brace alternative across segments", "/workspace", "{.github/**,sub}/*.{yml,py}", exp, false, ws(".github/workflows/ci.yml", "sub/b.py")},
		{"** alone", "/workspace", "**", exp, false, ws("a.py", "readme.md", "sub/b.py", "sub/nested/c.py")},
		{"base inside a dot directory", "/workspace/.hidden", "**/*.py", exp, false, ws(".hidden/nested/y.py", ".hidden/x.py")},
		{"from the root", "/", "workspace/**/*.yml", exp, false, nil},
		// Include (the default): dot-names match like any other.
		{"include **/*.yml", "/workspace", "**/*.yml", inc, false, ws(".github/workflows/ci.yml")},
		{"include *", "/workspace", "*", inc, false, ws(".env", ".hidden.py", "a.py", "readme.md")},
		{"include bare *.py", "/workspace", "*.py", inc, true, ws(".hidden.py", "a.py", ".hidden/nested/y.py", ".hidden/x.py", "sub/b.py", "sub/nested/c.py")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fs.Glob(t.Context(), alice, tc.base, vfs.GlobOptions{Pattern: tc.pattern, Hidden: tc.hidden, BaseName: tc.baseName})
			if err != nil {
				t.Fatal(err)
			}
			got, want := paths(res.Matches), slices.Clone(tc.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("Glob(%q, %q, hidden %d, base name %v) = %q, want %q", tc.base, tc.pattern, tc.hidden, tc.baseName, got, want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		opts vfs.GlobOptions
	}{
		{"base name with a slash", vfs.GlobOptions{Pattern: "sub/*.py", BaseName: true}},
		{"unknown hidden mode", vfs.GlobOptions{Pattern: "*.py", Hidden: 7}},
		{"bad pattern, explicit", vfs.GlobOptions{Pattern: "{a,b", Hidden: exp}},
		{"slash in a class, explicit", vfs.GlobOptions{Pattern: "a[/]b", Hidden: exp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.fs.Glob(t.Context(), alice, "/workspace", tc.opts)
			wantErr(t, "Glob", err, errkind.InvalidArgument)
		})
	}
}

func testGlobScanLimit(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxScanObjects = 3 })
	for i := range 5 {
		e.write(t, alice, fmt.Sprintf("/workspace/f%d.md", i), "x")
	}
	res, err := e.fs.Glob(t.Context(), alice, "/workspace", vfs.GlobOptions{Pattern: "**/*.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated {
		t.Error("Glob over more objects than MaxScanObjects: Truncated not set")
	}
	if want := []string{"/workspace/f0.md", "/workspace/f1.md", "/workspace/f2.md"}; !slices.Equal(paths(res.Matches), want) {
		t.Errorf("Glob = %v, want the first MaxScanObjects files %v", paths(res.Matches), want)
	}
	// Narrowing the listing to a static directory keeps the budget for it.
	e.write(t, alice, "/workspace/z/only.md", "x")
	res, err = e.fs.Glob(t.Context(), alice, "/workspace", vfs.GlobOptions{Pattern: "z/*.md"})
	if err != nil || res.Truncated || !slices.Equal(paths(res.Matches), []string{"/workspace/z/only.md"}) {
		t.Errorf("Glob(z/*.md) = %v truncated %v, %v; want the one file, complete", paths(res.Matches), res.Truncated, err)
	}
}

type grepCase struct {
	name      string
	id        mounts.Caller
	base      string
	opts      vfs.GrepOptions
	want      []string // "path:line:text"
	truncated bool
	scanned   int64 // checked when not -1
	skipped   int64 // checked when not -1
	err       error
}

func runGrep(t *testing.T, e env, tc grepCase) {
	t.Helper()
	res, err := e.fs.Grep(t.Context(), tc.id, tc.base, tc.opts)
	wantErr(t, "Grep", err, tc.err)
	noKeyLeak(t, "Grep", err)
	if tc.err != nil {
		return
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text))
	}
	if !slices.Equal(got, tc.want) {
		t.Errorf("Grep(%q, %+v) =\n%q\nwant\n%q", tc.base, tc.opts, got, tc.want)
	}
	if res.Truncated != tc.truncated {
		t.Errorf("Truncated = %v, want %v", res.Truncated, tc.truncated)
	}
	if tc.scanned >= 0 && res.FilesScanned != tc.scanned {
		t.Errorf("FilesScanned = %d, want %d", res.FilesScanned, tc.scanned)
	}
	if tc.skipped >= 0 && res.FilesSkipped != tc.skipped {
		t.Errorf("FilesSkipped = %d, want %d", res.FilesSkipped, tc.skipped)
	}
}

func testGrep(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxGrepFileBytes = 4096 })
	e.write(t, alice, "/workspace/a.txt", "hello world\na.b literal\naxb regex only\nHELLO upper\n")
	e.write(t, alice, "/workspace/src/m.go", "package main\n// hello from go\n")
	e.write(t, alice, "/workspace/z.txt", "hello z")
	e.write(t, alice, "/workspace/long.txt", "hello "+strings.Repeat("é", 1000)+"\n")
	e.upload(t, alice, "/workspace/nul.bin", []byte("hello\x00world"))
	e.upload(t, alice, "/workspace/latin1.txt", []byte("hello caf\xe9"))
	e.write(t, alice, "/workspace/big.txt", "hello\n"+strings.Repeat("big\n", 1100))
	e.write(t, aliceTicket, "/ticket/t.md", "hello ticket")
	e.putRaw(t, "alice/skills/s/SKILL.md", "say hello")
	e.write(t, aliceT2, "/workspace/a.txt", "hello from t2")
	longText := "hello " + strings.Repeat("é", 497) + "…" // 1000 bytes, then the marker

	const (
		a1 = "/workspace/a.txt:1:hello world"
		a2 = "/workspace/a.txt:2:a.b literal"
		a3 = "/workspace/a.txt:3:axb regex only"
		a4 = "/workspace/a.txt:4:HELLO upper"
		m2 = "/workspace/src/m.go:2:// hello from go"
		z1 = "/workspace/z.txt:1:hello z"
	)
	l1 := "/workspace/long.txt:1:" + longText
	for _, tc := range []grepCase{
		{name: "literal", base: "/workspace", opts: vfs.GrepOptions{Pattern: "hello"},
			want: []string{a1, l1, m2, z1}, scanned: 4, skipped: 3},
		{name: "literal treats metacharacters literally", base: "/workspace", opts: vfs.GrepOptions{Pattern: "a.b"},
			want: []string{a2}, scanned: -1, skipped: -1},
		{name: "regex", base: "/workspace", opts: vfs.GrepOptions{Pattern: "a.b", Regex: true},
			want: []string{a2, a3}, scanned: -1, skipped: -1},
		{name: "regex anchors", base: "/workspace", opts: vfs.GrepOptions{Pattern: `^hello \w$`, Regex: true},
			want: []string{z1}, scanned: -1, skipped: -1},
		{name: "case insensitive", base: "/workspace", opts: vfs.GrepOptions{Pattern: "HeLLo", CaseInsensitive: true},
			want: []string{a1, a4, l1, m2, z1}, scanned: -1, skipped: -1},
		{name: "case insensitive regex", base: "/workspace", opts: vfs.GrepOptions{Pattern: "^h.llo (w|u)", Regex: true, CaseInsensitive: true},
			want: []string{a1, a4}, scanned: -1, skipped: -1},
		{name: "glob filter", base: "/workspace", opts: vfs.GrepOptions{Pattern: "hello", Glob: "**/*.go"},
			want: []string{m2}, scanned: 1, skipped: 0},
		{name: "glob filter one level", base: "/workspace", opts: vfs.GrepOptions{Pattern: "hello", Glob: "*.txt"},
			want: []string{a1, l1, z1}, scanned: -1, skipped: 2}, // latin1.txt and big.txt
		{name: "single file", base: "/workspace/z.txt", opts: vfs.GrepOptions{Pattern: "hello"},
			want: []string{z1}, scanned: 1, skipped: 0},
		{name: "single binary file", base: "/workspace/nul.bin", opts: vfs.GrepOptions{Pattern: "hello"},
			want: nil, scanned: 0, skipped: 1},
		{name: "single file over MaxGrepFileBytes", base: "/workspace/big.txt", opts: vfs.GrepOptions{Pattern: "hello"},
			want: nil, scanned: 0, skipped: 1},
		{name: "subdirectory", base: "/workspace/src", opts: vfs.GrepOptions{Pattern: "hello"},
			want: []string{m2}, scanned: 1, skipped: 0},
		{name: "max matches", base: "/workspace", opts: vfs.GrepOptions{Pattern: "hello", MaxMatches: 2},
			want: []string{a1, l1}, truncated: true, scanned: -1, skipped: -1},
		{name: "max matches within one file", base: "/workspace/a.txt", opts: vfs.GrepOptions{Pattern: "l", MaxMatches: 2},
			want: []string{a1, a2}, truncated: true, scanned: -1, skipped: -1},
		{name: "from the root across mounts", id: aliceTicket, base: "/", opts: vfs.GrepOptions{Pattern: "hello"},
			want: []string{"/skills/s/SKILL.md:1:say hello", "/ticket/t.md:1:hello ticket", a1, l1, m2, z1}, scanned: -1, skipped: 3},
		{name: "from the root, empty base", base: "", opts: vfs.GrepOptions{Pattern: "say"},
			want: []string{"/skills/s/SKILL.md:1:say hello"}, scanned: -1, skipped: -1},
		{name: "no match", base: "/workspace", opts: vfs.GrepOptions{Pattern: "absent"}, want: nil, scanned: -1, skipped: -1},
		{name: "parenthesis as literal", base: "/workspace", opts: vfs.GrepOptions{Pattern: "("}, want: nil, scanned: -1, skipped: -1},
		{name: "bad regex", base: "/workspace", opts: vfs.GrepOptions{Pattern: "(", Regex: true}, err: errkind.InvalidArgument},
		{name: "empty pattern", base: "/workspace", opts: vfs.GrepOptions{}, err: errkind.InvalidArgument},
		{name: "bad glob", base: "/workspace", opts: vfs.GrepOptions{Pattern: "x", Glob: "[a-"}, err: errkind.InvalidArgument},
		{name: "missing base", base: "/workspace/missing", opts: vfs.GrepOptions{Pattern: "x"}, err: errkind.NotFound},
	} {
		if tc.id == (mounts.Caller{}) {
			tc.id = alice
		}
		t.Run(tc.name, func(t *testing.T) { runGrep(t, e, tc) })
	}
}

// testGrepSorted greps many files at once; results come back in path and
// line order whatever order the parallel fetches finish in.
func testGrepSorted(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.GrepConcurrency = 8 })
	var want []string
	for i := range 30 {
		p := fmt.Sprintf("/workspace/many/f%02d.txt", i)
		e.write(t, alice, p, strings.Repeat(fmt.Sprintf("%d filler\n", i), i%4)+"hit one\nmiss\nhit two\n")
		want = append(want, fmt.Sprintf("%s:%d:hit one", p, i%4+1), fmt.Sprintf("%s:%d:hit two", p, i%4+3))
	}
	runGrep(t, e, grepCase{id: alice, base: "/workspace/many", opts: vfs.GrepOptions{Pattern: "hit"}, want: want, scanned: 30, skipped: 0})
}

func testGrepScanBudget(t *testing.T, s suite) {
	e := s.env(t, func(c *vfs.Config) { c.MaxGrepScanBytes = 20 })
	e.write(t, alice, "/workspace/a.txt", "hello a\n") // 8 bytes
	e.write(t, alice, "/workspace/b.txt", "hello b\n") // 16
	e.write(t, alice, "/workspace/c.txt", "hello c\n") // 24: over the budget
	e.write(t, alice, "/workspace/d.txt", "hello d\n") // not reached
	runGrep(t, e, grepCase{id: alice, base: "/workspace", opts: vfs.GrepOptions{Pattern: "hello"},
		want: []string{"/workspace/a.txt:1:hello a", "/workspace/b.txt:1:hello b"}, truncated: true, scanned: 2, skipped: 0})
}

// testGrepDeadlinePassed: with the caller's deadline already gone there is
// no time left to answer in, so Grep fails with the context's error, which
// the gRPC edge maps to DEADLINE_EXCEEDED.
func testGrepDeadlinePassed(t *testing.T, s suite) {
	e := s.env(t, nil)
	e.write(t, alice, "/workspace/a.txt", "hello\n")
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	for _, base := range []string{"/", "/workspace", "/workspace/a.txt"} {
		_, err := e.fs.Grep(ctx, alice, base, vfs.GrepOptions{Pattern: "hello"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Grep(%s) after the deadline: err = %v, want context.DeadlineExceeded", base, err)
		}
	}
}

// TestGrepNearDeadline: a backend that stops answering holds the search up;
// Grep stops shortly before the caller's deadline and returns what it found
// with Truncated set, instead of failing with DeadlineExceeded. It runs in a
// synctest bubble, whose clock moves only when every goroutine waits (here,
// on the stalled call), so the outcome never depends on how loaded the
// machine is; the stall comes from the wrapper, so one backend is enough.
func TestGrepNearDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bucket func(t *testing.T) objstore.Bucket
		want   []string
	}{
		{"stalled fetch", func(t *testing.T) objstore.Bucket {
			return stalled(objstoretest.NewBucket(t, nil), "/b.txt", 0)
		}, []string{"/workspace/a.txt", "/workspace/c.txt", "/workspace/d.txt"}},
		{"stalled listing", func(t *testing.T) objstore.Bucket {
			return stalled(objstoretest.NewBucket(t, nil), "", 2)
		}, []string{"/workspace/a.txt", "/workspace/b.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, tc.bucket(t), nil)
				for _, name := range []string{"a", "b", "c", "d"} {
					e.write(t, alice, "/workspace/"+name+".txt", "hello "+name+"\n")
				}
				ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
				defer cancel()
				res, err := e.fs.Grep(ctx, alice, "/workspace", vfs.GrepOptions{Pattern: "hello"})
				if err != nil {
					t.Fatalf("Grep with a stalled backend: %v, want partial results", err)
				}
				var got []string
				for _, m := range res.Matches {
					got = append(got, m.Path)
				}
				if !slices.Equal(got, tc.want) || !res.Truncated {
					t.Errorf("Grep = %v truncated %v, want %v truncated", got, res.Truncated, tc.want)
				}
			})
		})
	}
}
