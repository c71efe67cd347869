package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
)

// BenchmarkListAll pages through every key of a tree, 1000 keys a page, as
// objstore.Walk does for a recursive Glob. Its cost per key (ns/key) must
// stay flat as the tree grows, not grow with the number of pages. Both
// nested sizes exceed the ETag cache, so every file is hashed in each op of
// either and the sizes compare like for like.
func BenchmarkListAll(b *testing.B) {
	for _, layout := range []struct {
		name       string
		dirs, subs int
		files      int
	}{
		{"nested-20000", 20, 20, 50}, // 20×20 directories of 50 files
		{"nested-40000", 20, 40, 50}, // 20×40 directories of 50 files
		{"flat-20000", 1, 1, 20000},  // one directory of 20,000 files
	} {
		b.Run(layout.name, func(b *testing.B) {
			dir := b.TempDir()
			n := 0
			for i := range layout.dirs {
				for j := range layout.subs {
					d := filepath.Join(dir, "u", fmt.Sprintf("d%02d", i), fmt.Sprintf("s%02d", j))
					if err := os.MkdirAll(d, 0o755); err != nil {
						b.Fatal(err)
					}
					for k := range layout.files {
						if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.md", k)), []byte("x"), 0o644); err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
			}
			bkt, err := local.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { bkt.Close() })
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				got := 0
				if err := objstore.Walk(ctx, bkt, "u/", func(objstore.Object) error { got++; return nil }); err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("listed %d keys, want %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// TestListOrderAndPaging pages through keys whose names hold characters
// that sort before "/" ("a-b" < "a/" < "a0") and compares every page
// sequence with the S3 answer computed from the sorted key list, for many
// prefixes, delimiters and page sizes.
func TestListOrderAndPaging(t *testing.T) {
	keys := []string{
		"a!", "a-b", "a-c/d", "a.b", "a/ ", "a/b-c", "a/b.c", "a/b/c-d/e", "a/b/c.d",
		"a/b/c/d", "a/b0", "a0/x", "a0x", "ab", "b-/c", "b./c", "b/c", "b/ä", "b/z", "b0",
	}
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("m/%02d", i))
		if i%5 == 0 {
			keys = append(keys, fmt.Sprintf("m/%02d-x/y", i))
		}
		if i%7 == 0 {
			keys = append(keys, fmt.Sprintf("m/%02d.d/z", i), fmt.Sprintf("m/%02d.d/z-/w", i))
		}
	}
	b := newBucket(t)
	ctx := t.Context()
	for _, k := range keys {
		if _, err := b.Put(ctx, k, strings.NewReader(k), -1, objstore.PutOptions{}); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	slices.Sort(keys)
	for _, prefix := range []string{"", "a", "a/", "a/b", "a/b/", "a/b/c", "a-", "b", "m/", "m/0", "m/05", "m/07.d/", "z", "a/b/c/d/"} {
		for _, delim := range []string{"", "/", "-", "."} {
			want := s3List(keys, prefix, delim)
			for _, maxKeys := range []int{1, 2, 3, 7, 1000} {
				opts := objstore.ListOptions{Prefix: prefix, Delimiter: delim, MaxKeys: maxKeys}
				var got []string
				for range 1000 {
					page, err := b.List(ctx, opts)
					if err != nil {
						t.Fatalf("List(%+v): %v", opts, err)
					}
					n := len(page.Objects) + len(page.CommonPrefixes)
					if n > maxKeys || (n == 0 && page.NextToken != "") {
						t.Fatalf("List(%+v): %d entries, token %q", opts, n, page.NextToken)
					}
					var entries []string
					for _, o := range page.Objects {
						entries = append(entries, o.Key)
					}
					entries = append(entries, page.CommonPrefixes...)
					slices.Sort(entries)
					got = append(got, entries...)
					if page.NextToken == "" {
						break
					}
					opts.Token = page.NextToken
				}
				if !slices.Equal(got, want) {
					t.Errorf("prefix %q delimiter %q max %d:\n got %q\nwant %q", prefix, delim, maxKeys, got, want)
				}
			}
		}
	}
}

// s3List is the listing S3 gives for keys: byte-wise order, keys under
// prefix, those holding the delimiter after it grouped into one prefix.
func s3List(sorted []string, prefix, delim string) []string {
	var out []string
	for _, k := range sorted {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		name := k
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				name = k[:len(prefix)+i+len(delim)]
			}
		}
		if len(out) == 0 || out[len(out)-1] != name {
			out = append(out, name)
		}
	}
	return out
}

// TestListSkipsUnaddressableNames: a file name that cannot be a key is no
// object, so it must not fail the listing of its directory, and a directory
// holding nothing else (or only links) is no common prefix.
func TestListSkipsUnaddressableNames(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := []string{"bad\\name.md", "bad\xffname.md", "ctl\x01.md", "new\nline.md", "del\x7f.md", "c1\u0085.md"}
	mk("lib/skills/ok.md")
	for _, name := range bad {
		mk("lib/skills/" + name)
		mk("lib/skills/" + name + "-dir/x.md") // a directory with a bad name
		mk("only-bad/" + name)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "only-link"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/skills/ok.md", filepath.Join(dir, "only-link", "l.md")); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	for _, tc := range []struct {
		opts           objstore.ListOptions
		keys, prefixes []string
	}{
		{objstore.ListOptions{Prefix: "lib/skills/"}, []string{"lib/skills/ok.md"}, nil},
		{objstore.ListOptions{Prefix: "lib/skills/", Delimiter: "/"}, []string{"lib/skills/ok.md"}, nil},
		{objstore.ListOptions{Prefix: "lib/skills/", MaxKeys: 1}, []string{"lib/skills/ok.md"}, nil},
		{objstore.ListOptions{Delimiter: "/"}, nil, []string{"lib/"}},
		{objstore.ListOptions{}, []string{"lib/skills/ok.md"}, nil},
		{objstore.ListOptions{Prefix: "only-bad/"}, nil, nil},
	} {
		page, err := b.List(ctx, tc.opts)
		if err != nil {
			t.Errorf("List(%+v): %v", tc.opts, err)
			continue
		}
		var keys []string
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		if !slices.Equal(keys, tc.keys) || !slices.Equal(page.CommonPrefixes, tc.prefixes) || page.NextToken != "" {
			t.Errorf("List(%+v) = %q %q %q, want %q %q", tc.opts, keys, page.CommonPrefixes, page.NextToken, tc.keys, tc.prefixes)
		}
	}
	for _, name := range bad {
		if _, err := b.Stat(ctx, "lib/skills/"+name); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Stat(%q) err = %v, want ErrInvalidKey", name, err)
		}
	}
}
