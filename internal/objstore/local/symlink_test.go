package local_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
)

// linkFixture is a bucket directory where alice's folders hold links to
// bob's files and to files outside the bucket.
type linkFixture struct {
	data, outside string
	bucket        *local.Bucket
}

const (
	bobSecret     = "bob's secret"
	outsideSecret = "outside secret"
)

// targets are the files that links point to, relative to data or outside.
var (
	bobTargets     = []string{"bob/threads/t1/secret.md", "bob/skills/x/SKILL.md"}
	outsideTargets = []string{"secret.md", "dir/secret.md"}
)

func newLinkFixture(t *testing.T, link, target string) linkFixture {
	t.Helper()
	f := linkFixture{data: t.TempDir(), outside: t.TempDir()}
	write := func(root string, rels []string, content string) {
		for _, rel := range rels {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(f.data, bobTargets, bobSecret)
	write(f.data, []string{"alice/threads/t1/own.md"}, "alice's own")
	write(f.outside, outsideTargets, outsideSecret)
	target = strings.ReplaceAll(target, "$OUTSIDE", f.outside)
	target = strings.ReplaceAll(target, "$DATA", f.data)
	lp := filepath.Join(f.data, link)
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, lp); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(f.data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	f.bucket = b
	return f
}

// checkTargets fails unless every link target still holds its bytes.
func (f linkFixture) checkTargets(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		root, want string
		rels       []string
	}{{f.data, bobSecret, bobTargets}, {f.outside, outsideSecret, outsideTargets}} {
		for _, rel := range tc.rels {
			got, err := os.ReadFile(filepath.Join(tc.root, rel))
			if err != nil || string(got) != tc.want {
				t.Errorf("link target %s = %q, %v; want %q unchanged", rel, got, err, tc.want)
			}
		}
	}
}

// isLink reports whether the bucket path rel is (still) a symlink.
func (f linkFixture) isLink(t *testing.T, rel string) bool {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(f.data, rel))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// linkCases plant one link each. key reaches a target through the link;
// leaf says the link is the key itself rather than a directory on its path.
var linkCases = []struct {
	name, link, target, key string
	leaf                    bool
}{
	{"file link to another tenant", "alice/threads/t1/evil.md", "../../../bob/threads/t1/secret.md", "alice/threads/t1/evil.md", true},
	{"absolute file link into the root", "alice/threads/t1/evil.md", "$DATA/bob/threads/t1/secret.md", "alice/threads/t1/evil.md", true},
	{"file link out of the root", "alice/threads/t1/evil.md", "$OUTSIDE/secret.md", "alice/threads/t1/evil.md", true},
	{"directory link to another tenant", "alice/threads/t1/d", "../../../bob/threads/t1", "alice/threads/t1/d/secret.md", false},
	{"directory link out of the root", "alice/threads/t1/d", "$OUTSIDE/dir", "alice/threads/t1/d/secret.md", false},
	{"directory link high on the path", "alice/skills", "../bob/skills", "alice/skills/x/SKILL.md", false},
	{"a whole thread linked", "alice/threads/t2", "../../bob/threads/t1", "alice/threads/t2/secret.md", false},
	{"top-level link", "mallory", "bob", "mallory/threads/t1/secret.md", false},
	{"directory link as the key", "alice/threads/t1/d", "../../../bob/threads/t1", "alice/threads/t1/d", true},
}

// TestSymlinksAreNeverFollowed plants each link and runs every operation
// through it: the link must be absent and its target neither read, changed
// nor deleted.
func TestSymlinksAreNeverFollowed(t *testing.T) {
	for _, lc := range linkCases {
		t.Run(lc.name, func(t *testing.T) {
			ops := []struct {
				name string
				run  func(t *testing.T, f linkFixture)
			}{
				{"Get", func(t *testing.T, f linkFixture) {
					rc, _, err := f.bucket.Get(t.Context(), lc.key)
					if err == nil {
						data, _ := io.ReadAll(rc)
						rc.Close()
						t.Errorf("Get read %q through the link", data)
					}
					wantIs(t, "Get", err, objstore.ErrNotFound)
				}},
				{"GetRange", func(t *testing.T, f linkFixture) {
					rc, _, err := f.bucket.GetRange(t.Context(), lc.key, 1, 3)
					if err == nil {
						rc.Close()
					}
					wantIs(t, "GetRange", err, objstore.ErrNotFound)
				}},
				{"Stat", func(t *testing.T, f linkFixture) {
					_, err := f.bucket.Stat(t.Context(), lc.key)
					wantIs(t, "Stat", err, objstore.ErrNotFound)
				}},
				{"Delete", func(t *testing.T, f linkFixture) {
					if err := f.bucket.Delete(t.Context(), lc.key); err != nil {
						t.Errorf("Delete: %v, want a no-op", err)
					}
					if !f.isLink(t, lc.link) {
						t.Error("Delete removed the link")
					}
				}},
				{"Put", func(t *testing.T, f linkFixture) {
					testPutThroughLink(t, f, lc.key, lc.link, lc.leaf, objstore.PutOptions{})
				}},
				{"PutIfNoneMatch", func(t *testing.T, f linkFixture) {
					testPutThroughLink(t, f, lc.key, lc.link, lc.leaf, objstore.PutOptions{IfNoneMatch: true})
				}},
				{"PutIfMatch", func(t *testing.T, f linkFixture) {
					// The target's ETag: equal bytes have equal ETags.
					a, err := f.bucket.Put(t.Context(), "scratch", strings.NewReader(bobSecret), -1, objstore.PutOptions{})
					if err != nil {
						t.Fatal(err)
					}
					_, err = f.bucket.Put(t.Context(), lc.key, strings.NewReader("pwned"), -1, objstore.PutOptions{IfMatch: a.ETag})
					wantIs(t, "Put with the target's ETag", err, objstore.ErrPrecondition)
				}},
				{"List", func(t *testing.T, f linkFixture) {
					testListSkipsLink(t, f, lc.link)
				}},
			}
			for _, op := range ops {
				t.Run(op.name, func(t *testing.T) {
					f := newLinkFixture(t, lc.link, lc.target)
					op.run(t, f)
					f.checkTargets(t)
				})
			}
		})
	}
}

func wantIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

// testPutThroughLink: a link as the key is replaced by the new object (the
// key was absent); a link on the key's path refuses the write.
func testPutThroughLink(t *testing.T, f linkFixture, key, link string, leaf bool, opts objstore.PutOptions) {
	_, err := f.bucket.Put(t.Context(), key, strings.NewReader("pwned"), -1, opts)
	if !leaf {
		wantIs(t, "Put below a link", err, objstore.ErrInvalidKey)
		if !f.isLink(t, link) {
			t.Error("Put below a link replaced the link")
		}
		return
	}
	if err != nil {
		t.Fatalf("Put over a link: %v, want the link replaced", err)
	}
	if f.isLink(t, link) {
		t.Error("Put over a link left the link")
	}
	rc, _, err := f.bucket.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, _ := io.ReadAll(rc); string(got) != "pwned" {
		t.Errorf("Get after Put = %q", got)
	}
}

// testListSkipsLink lists every prefix on the link's path, recursively and
// by directory: the link is never an entry and nothing below it shows.
func testListSkipsLink(t *testing.T, f linkFixture, link string) {
	var prefixes []string
	for i := range len(link) {
		if link[i] == '/' {
			prefixes = append(prefixes, link[:i+1])
		}
	}
	prefixes = append(prefixes, "", link, link+"/")
	for _, prefix := range prefixes {
		for _, delim := range []string{"", "/"} {
			opts := objstore.ListOptions{Prefix: prefix, Delimiter: delim, MaxKeys: 2}
			for range 100 {
				page, err := f.bucket.List(t.Context(), opts)
				if err != nil {
					t.Fatalf("List(%+v): %v", opts, err)
				}
				for _, o := range page.Objects {
					if strings.HasPrefix(o.Key, link) {
						t.Errorf("List(%+v) returned %q through the link", opts, o.Key)
					}
				}
				for _, cp := range page.CommonPrefixes {
					if strings.HasPrefix(cp, link) {
						t.Errorf("List(%+v) returned prefix %q of the link", opts, cp)
					}
				}
				if page.NextToken == "" {
					break
				}
				opts.Token = page.NextToken
			}
		}
	}
	// alice's own file is still listed.
	page, err := f.bucket.List(t.Context(), objstore.ListOptions{Prefix: "alice/threads/t1/"})
	if err != nil || len(page.Objects) == 0 {
		t.Errorf("List(alice/threads/t1/) = %+v, %v; want alice's own file", page, err)
	}
}
