// Package objstoretest holds the acceptance suite that every objstore.Bucket
// implementation (and every wrapper around one) must pass.
package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// AcceptanceTest runs the suite. newBucket must return an empty bucket; it is
// called once per subtest.
func AcceptanceTest(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, newBucket(t)) })
	t.Run("PutGetStat", func(t *testing.T) { testPutGetStat(t, newBucket(t)) })
	t.Run("GetRange", func(t *testing.T) { testGetRange(t, newBucket(t)) })
	t.Run("EmptyObject", func(t *testing.T) { testEmpty(t, newBucket(t)) })
	t.Run("UnseekableBody", func(t *testing.T) { testUnseekable(t, newBucket(t)) })
	t.Run("Conditional", func(t *testing.T) { testConditional(t, newBucket(t)) })
	t.Run("ConcurrentIfMatch", func(t *testing.T) { testConcurrentIfMatch(t, newBucket(t)) })
	t.Run("ConcurrentCreate", func(t *testing.T) { testConcurrentCreate(t, newBucket(t)) })
	t.Run("List", func(t *testing.T) { testList(t, newBucket(t)) })
	t.Run("ListPaged", func(t *testing.T) { testListPaged(t, newBucket(t)) })
	t.Run("DeleteVisibleInList", func(t *testing.T) { testDelete(t, newBucket(t)) })
	t.Run("LargeObject", func(t *testing.T) { testLarge(t, newBucket(t)) })
	t.Run("Mode", func(t *testing.T) { testMode(t, newBucket(t)) })
}

// testMode: a mode put with an object is read back by Get, GetRange and
// Stat (and returned by the Put), and replaced by the next Put's.
func testMode(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	put := func(key, body string, mode fs.FileMode) objstore.Attributes {
		t.Helper()
		a, err := b.Put(c, key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{Mode: mode})
		if err != nil {
			t.Fatalf("Put(%q, mode %#o): %v", key, mode, err)
		}
		return a
	}
	check := func(key string, want fs.FileMode) {
		t.Helper()
		rc, ga, err := b.Get(c, key)
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		rc, ra, err := b.GetRange(c, key, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		sa, err := b.Stat(c, key)
		if err != nil {
			t.Fatal(err)
		}
		for name, a := range map[string]objstore.Attributes{"Get": ga, "GetRange": ra, "Stat": sa} {
			if a.Mode != want {
				t.Errorf("%s(%q) mode = %#o, want %#o", name, key, a.Mode, want)
			}
		}
	}
	if a := put("scripts/run.sh", "#!/bin/sh\necho hi\n", 0o755); a.Mode != 0o755 {
		t.Errorf("Put mode 0755 returned mode %#o", a.Mode)
	}
	check("scripts/run.sh", 0o755)
	put("lib.py", "import os\n", 0o644)
	check("lib.py", 0o644)
	// Replacing the object replaces its mode.
	put("scripts/run.sh", "#!/bin/sh\necho bye\n", 0o644)
	check("scripts/run.sh", 0o644)
	put("lib.py", "import sys\n", 0o755)
	check("lib.py", 0o755)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func read(t *testing.T, rc io.ReadCloser) string {
	t.Helper()
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(data)
}

func testNotFound(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	if _, _, err := b.Get(c, "missing/key"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get missing: err = %v, want ErrNotFound", err)
	}
	if _, _, err := b.GetRange(c, "missing/key", 1, 2); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("GetRange missing: err = %v, want ErrNotFound", err)
	}
	if _, err := b.Stat(c, "missing/key"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat missing: err = %v, want ErrNotFound", err)
	}
	if err := b.Delete(c, "missing/key"); err != nil {
		t.Errorf("Delete missing: %v, want nil", err)
	}
	// A "directory" (a prefix of other keys) is not an object.
	Put(t, b, "dir/file", "x")
	if _, err := b.Stat(c, "dir"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat of a prefix: err = %v, want ErrNotFound", err)
	}
}

func testPutGetStat(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	before := time.Now().Add(-time.Minute)
	a1 := Put(t, b, "a/b/c.txt", "hello")
	if a1.Size != 5 || a1.ETag == "" {
		t.Fatalf("Put attrs = %+v, want size 5 and an etag", a1)
	}
	rc, ga, err := b.Get(c, "a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); got != "hello" {
		t.Errorf("Get = %q, want hello", got)
	}
	sa, err := b.Stat(c, "a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]objstore.Attributes{"Get": ga, "Stat": sa} {
		if a.Size != 5 || a.ETag != a1.ETag {
			t.Errorf("%s attrs = %+v, want size 5 etag %q", name, a, a1.ETag)
		}
		if a.ModTime.Before(before) || a.ModTime.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s modtime %v not recent", name, a.ModTime)
		}
	}
	a2 := Put(t, b, "a/b/c.txt", "hello, world")
	if a2.ETag == a1.ETag {
		t.Errorf("overwrite kept etag %q", a2.ETag)
	}
	rc, _, err = b.Get(c, "a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); got != "hello, world" {
		t.Errorf("Get after overwrite = %q", got)
	}
	// Keys with characters that need escaping in URLs and shells.
	for _, key := range []string{"sp ace/f+i%le?.md", "ünï/cødé.txt", "q&a=1#frag"} {
		Put(t, b, key, key)
		rc, _, err := b.Get(c, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if got := read(t, rc); got != key {
			t.Errorf("Get(%q) = %q", key, got)
		}
	}
}

func testGetRange(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	Put(t, b, "r", "0123456789")
	for _, tc := range []struct {
		name        string
		off, length int64
		want        string
	}{
		{"middle", 2, 3, "234"},
		{"to end", 7, -1, "789"},
		{"length past end", 8, 100, "89"},
		{"whole", 0, 10, "0123456789"},
		{"at end", 10, 5, ""},
		{"past end", 50, -1, ""},
		{"zero length", 3, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, a, err := b.GetRange(c, "r", tc.off, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, rc); got != tc.want {
				t.Errorf("GetRange(%d,%d) = %q, want %q", tc.off, tc.length, got, tc.want)
			}
			if a.Size != 10 {
				t.Errorf("attrs size = %d, want object size 10", a.Size)
			}
		})
	}
}

func testEmpty(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	a := Put(t, b, "empty", "")
	if a.Size != 0 {
		t.Errorf("size = %d", a.Size)
	}
	rc, _, err := b.Get(c, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); got != "" {
		t.Errorf("Get = %q", got)
	}
	rc, _, err = b.GetRange(c, "empty", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); got != "" {
		t.Errorf("GetRange = %q", got)
	}
}

type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func testUnseekable(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	body := bytes.Repeat([]byte("abc"), 1000)
	for _, size := range []int64{int64(len(body)), -1} {
		key := fmt.Sprintf("unseekable-%d", size)
		if _, err := b.Put(c, key, onlyReader{bytes.NewReader(body)}, size, objstore.PutOptions{}); err != nil {
			t.Fatalf("Put(size %d): %v", size, err)
		}
		rc, a, err := b.Get(c, key)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, rc); got != string(body) || a.Size != int64(len(body)) {
			t.Errorf("size %d: got %d bytes, attrs %+v", size, len(got), a)
		}
	}
}

func testConditional(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	putOpts := func(key, body string, o objstore.PutOptions) (objstore.Attributes, error) {
		return b.Put(c, key, bytes.NewReader([]byte(body)), int64(len(body)), o)
	}
	a, err := putOpts("k", "v1", objstore.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatalf("create with IfNoneMatch: %v", err)
	}
	if _, err := putOpts("k", "v2", objstore.PutOptions{IfNoneMatch: true}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Errorf("IfNoneMatch on existing: err = %v, want ErrPrecondition", err)
	}
	if _, err := putOpts("k", "v2", objstore.PutOptions{IfMatch: "0123456789abcdef0123456789abcdef"}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Errorf("IfMatch wrong etag: err = %v, want ErrPrecondition", err)
	}
	if _, err := putOpts("missing", "v", objstore.PutOptions{IfMatch: a.ETag}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Errorf("IfMatch on missing key: err = %v, want ErrPrecondition", err)
	}
	a2, err := putOpts("k", "v2", objstore.PutOptions{IfMatch: a.ETag})
	if err != nil {
		t.Fatalf("IfMatch right etag: %v", err)
	}
	if _, err := putOpts("k", "v3", objstore.PutOptions{IfMatch: a.ETag}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Errorf("IfMatch stale etag: err = %v, want ErrPrecondition", err)
	}
	rc, got, err := b.Get(c, "k")
	if err != nil {
		t.Fatal(err)
	}
	if body := read(t, rc); body != "v2" || got.ETag != a2.ETag {
		t.Errorf("after conditional writes: %q etag %q, want v2 etag %q", body, got.ETag, a2.ETag)
	}
	if _, err := b.Stat(c, "missing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("failed IfMatch created the key: %v", err)
	}
}

func testConcurrentIfMatch(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	base := Put(t, b, "race", "base")
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf("writer-%d", i)
			_, errs[i] = b.Put(c, "race", bytes.NewReader([]byte(body)), int64(len(body)), objstore.PutOptions{IfMatch: base.ETag})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won with the same If-Match", winner, i)
		case err == nil:
			winner = i
		case !objstore.LostRace(err):
			t.Fatalf("writer %d: unexpected error %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	rc, _, err := b.Get(c, "race")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, rc), fmt.Sprintf("writer-%d", winner); got != want {
		t.Errorf("content %q, want the winner's %q", got, want)
	}
}

func testConcurrentCreate(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.Put(c, "once", bytes.NewReader([]byte("x")), 1, objstore.PutOptions{IfNoneMatch: true})
		})
	}
	wg.Wait()
	wins := 0
	for i, err := range errs {
		if err == nil {
			wins++
		} else if !objstore.LostRace(err) {
			t.Fatalf("creator %d: unexpected error %v", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creators won, want exactly 1", wins)
	}
}

func listAll(t *testing.T, b objstore.Bucket, opts objstore.ListOptions) (keys, prefixes []string) {
	t.Helper()
	for range 10000 {
		page, err := b.List(ctx(t), opts)
		if err != nil {
			t.Fatalf("List(%+v): %v", opts, err)
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		prefixes = append(prefixes, page.CommonPrefixes...)
		if page.NextToken == "" {
			return keys, prefixes
		}
		opts.Token = page.NextToken
	}
	t.Fatal("listing never ended")
	return nil, nil
}

func testList(t *testing.T, b objstore.Bucket) {
	for _, k := range []string{"d/a.txt", "d/b/1", "d/b/2", "d/c/x/y", "d-sibling", "d.txt", "e/z", "d/ä"} {
		Put(t, b, k, k)
	}
	page, err := b.List(ctx(t), objstore.ListOptions{Prefix: "d/", Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range page.Objects {
		keys = append(keys, o.Key)
		if o.Size != int64(len(o.Key)) || o.ETag == "" || o.ModTime.IsZero() {
			t.Errorf("object %q attrs %+v", o.Key, o.Attributes)
		}
	}
	if want := []string{"d/a.txt", "d/ä"}; !slices.Equal(keys, want) {
		t.Errorf("objects = %q, want %q", keys, want)
	}
	if want := []string{"d/b/", "d/c/"}; !slices.Equal(page.CommonPrefixes, want) {
		t.Errorf("prefixes = %q, want %q", page.CommonPrefixes, want)
	}
	if page.NextToken != "" {
		t.Errorf("NextToken = %q for a short listing", page.NextToken)
	}

	for _, tc := range []struct {
		name           string
		opts           objstore.ListOptions
		keys, prefixes []string
	}{
		{"recursive", objstore.ListOptions{Prefix: "d/"}, []string{"d/a.txt", "d/b/1", "d/b/2", "d/c/x/y", "d/ä"}, nil},
		{"partial segment", objstore.ListOptions{Prefix: "d"}, []string{"d-sibling", "d.txt", "d/a.txt", "d/b/1", "d/b/2", "d/c/x/y", "d/ä"}, nil},
		{"root delimited", objstore.ListOptions{Delimiter: "/"}, []string{"d-sibling", "d.txt"}, []string{"d/", "e/"}},
		{"nothing", objstore.ListOptions{Prefix: "nope/"}, nil, nil},
		{"deep", objstore.ListOptions{Prefix: "d/c/", Delimiter: "/"}, nil, []string{"d/c/x/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, prefixes := listAll(t, b, tc.opts)
			if !slices.Equal(keys, tc.keys) || !slices.Equal(prefixes, tc.prefixes) {
				t.Errorf("got %q %q, want %q %q", keys, prefixes, tc.keys, tc.prefixes)
			}
		})
	}
}

func testListPaged(t *testing.T, b objstore.Bucket) {
	var want []string
	for i := range 7 {
		k := fmt.Sprintf("p/f%02d", i)
		Put(t, b, k, "x")
		want = append(want, k)
	}
	for _, k := range []string{"p/dir1/a", "p/dir1/b", "p/dir2/a"} {
		Put(t, b, k, "x")
	}
	page, err := b.List(ctx(t), objstore.ListOptions{Prefix: "p/", Delimiter: "/", MaxKeys: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Objects) + len(page.CommonPrefixes); n != 3 || page.NextToken == "" {
		t.Fatalf("first page: %d entries, token %q; want 3 and a token", n, page.NextToken)
	}
	keys, prefixes := listAll(t, b, objstore.ListOptions{Prefix: "p/", Delimiter: "/", MaxKeys: 3})
	if !slices.Equal(keys, want) || !slices.Equal(prefixes, []string{"p/dir1/", "p/dir2/"}) {
		t.Errorf("paged delimited listing = %q %q", keys, prefixes)
	}
	keys, _ = listAll(t, b, objstore.ListOptions{Prefix: "p/", MaxKeys: 2})
	if len(keys) != 10 || !slices.IsSorted(keys) {
		t.Errorf("paged recursive listing = %q", keys)
	}
	// StartAfter resumes after a key of the caller's, listed or not.
	for _, after := range []string{keys[3], keys[3] + "!"} {
		page, err := b.List(ctx(t), objstore.ListOptions{Prefix: "p/", StartAfter: after, MaxKeys: 2})
		if err != nil || len(page.Objects) != 2 || page.Objects[0].Key != keys[4] || page.Objects[1].Key != keys[5] || page.NextToken == "" {
			t.Errorf("StartAfter %q = %+v, %v; want %q and a token", after, page, err, keys[4:6])
		}
	}
	var walked []string
	if err := objstore.Walk(ctx(t), b, "p/", func(o objstore.Object) error {
		walked = append(walked, o.Key)
		return nil
	}); err != nil || !slices.Equal(walked, keys) {
		t.Errorf("Walk = %q, %v; want %q", walked, err, keys)
	}
}

func testDelete(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	Put(t, b, "x/y/z", "1")
	Put(t, b, "x/w", "2")
	if err := b.Delete(c, "x/y/z"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stat(c, "x/y/z"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat after Delete: %v", err)
	}
	keys, prefixes := listAll(t, b, objstore.ListOptions{Prefix: "x/", Delimiter: "/"})
	if !slices.Equal(keys, []string{"x/w"}) || len(prefixes) != 0 {
		t.Errorf("list after delete = %q %q, want [x/w] and no prefixes", keys, prefixes)
	}
	if err := b.Delete(c, "x/y/z"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	// The key can be written again, and a former parent can become a key.
	Put(t, b, "x/y/z", "3")
	if err := b.Delete(c, "x/y/z"); err != nil {
		t.Fatal(err)
	}
	Put(t, b, "x/y", "file now")
}

func testLarge(t *testing.T, b objstore.Bucket) {
	c := ctx(t)
	data := make([]byte, 20<<20+123)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	a, err := b.Put(c, "big.bin", bytes.NewReader(data), int64(len(data)), objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Size != int64(len(data)) {
		t.Errorf("size = %d", a.Size)
	}
	rc, _, err := b.Get(c, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); !bytes.Equal([]byte(got), data) {
		t.Error("large object round trip differs")
	}
	off := int64(15 << 20)
	rc, _, err = b.GetRange(c, "big.bin", off, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, rc); !bytes.Equal([]byte(got), data[off:off+1<<20]) {
		t.Error("range of large object differs")
	}
}
