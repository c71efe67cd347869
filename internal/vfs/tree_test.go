package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// indexTree is a vfs.Tree over the objects below base, listed once when it
// is made, as the skills library serves /skills from a cached index:
// Stat, List and Walk make no requests, Open one GetRange of its bucket.
// Every caller sees the same files.
type indexTree struct {
	b     objstore.Bucket
	base  string
	files []objstore.Object // in key order
}

var _ vfs.Tree = (*indexTree)(nil)

func newIndexTree(t *testing.T, b objstore.Bucket, base string) *indexTree {
	t.Helper()
	tr := &indexTree{b: b, base: base}
	err := objstore.Walk(t.Context(), b, base, func(o objstore.Object) error {
		tr.files = append(tr.files, o)
		return nil
	})
	if err != nil {
		t.Fatalf("indexing %s: %v", base, err)
	}
	return tr
}

// below returns the files whose keys start with prefix.
func (tr *indexTree) below(prefix string) []objstore.Object {
	start := sort.Search(len(tr.files), func(i int) bool { return tr.files[i].Key >= prefix })
	end := start
	for end < len(tr.files) && strings.HasPrefix(tr.files[end].Key, prefix) {
		end++
	}
	return tr.files[start:end]
}

func (tr *indexTree) dir(rel string) string {
	if rel == "" {
		return tr.base
	}
	return tr.base + rel + "/"
}

func (tr *indexTree) Stat(_ context.Context, _ mounts.Caller, rel string) (objstore.Object, error) {
	key := tr.base + rel
	if fs := tr.below(key); len(fs) > 0 && fs[0].Key == key {
		return fs[0], nil
	}
	return objstore.Object{}, fmt.Errorf("%w: %s is no file of the index", objstore.ErrNotFound, key)
}

func (tr *indexTree) List(_ context.Context, _ mounts.Caller, rel string) ([]vfs.TreeEntry, error) {
	prefix := tr.dir(rel)
	var out []vfs.TreeEntry
	for _, o := range tr.below(prefix) {
		name, _, isDir := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		if !isDir {
			out = append(out, vfs.TreeEntry{Name: name, Object: o})
		} else if n := len(out); n == 0 || !out[n-1].IsDir || out[n-1].Name != name {
			out = append(out, vfs.TreeEntry{Name: name, IsDir: true})
		}
	}
	if len(out) == 0 && rel != "" {
		return nil, fmt.Errorf("%w: %s is no directory of the index", objstore.ErrNotFound, prefix)
	}
	return out, nil
}

func (tr *indexTree) Walk(ctx context.Context, _ mounts.Caller, rel string, fn func(string, objstore.Object) error) error {
	for _, o := range tr.below(tr.dir(rel)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(strings.TrimPrefix(o.Key, tr.base), o); err != nil {
			return err
		}
	}
	return nil
}

func (tr *indexTree) Open(ctx context.Context, o objstore.Object, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	return tr.b.GetRange(ctx, o.Key, offset, length)
}

// errFSBucket fails every request a tree mount must not make.
var errFSBucket = errors.New("request to the FS's bucket")

// treeFixture is served at /skills from "_shared/skills/", a prefix the
// mount's own ("alice/skills/") is not, as a merged library's files are.
var treeFixture = map[string]string{
	"_shared/skills/docs/pdf/SKILL.md":     "# PDF\nFill the form.\n",
	"_shared/skills/docs/pdf/reference.md": "The spec.\nA needle here.\n",
	"_shared/skills/docs/pdf/logo.png":     "\x89PNG\x00\x00\x00",
	"_shared/skills/lint/SKILL.md":         "# Lint\nneedle\n",
	"_shared/skills/notes.md":              "top-level notes\n",
}

// TestTreeMountMakesNoBucketRequests: with the index warm, every read-only
// operation on a tree mount is served by the Tree alone; the FS's bucket,
// which fails every request, is never asked, and the Tree's own bucket
// only for file contents.
func TestTreeMountMakesNoBucketRequests(t *testing.T) {
	store := objstoretest.NewBucket(t, treeFixture)
	treeBucket := objstoretest.NewFaulty(store)
	tree := newIndexTree(t, treeBucket, "_shared/skills/")
	indexLists := treeBucket.Calls(objstore.OpList)
	fsBucket := objstoretest.NewFaulty(store)
	fsBucket.Fail("", "", errFSBucket)
	fs, err := vfs.New(fsBucket, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", tree))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	skillMD := treeFixture["_shared/skills/docs/pdf/SKILL.md"]
	skillAttrs, err := store.Stat(ctx, "_shared/skills/docs/pdf/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("List", func(t *testing.T) {
		for _, tc := range []struct {
			name, dir string
			want      []string // names, directories with a trailing "/"
			err       error
		}{
			{"mount", "/skills", []string{"docs/", "lint/", "notes.md"}, nil},
			{"directory", "/skills/docs/pdf", []string{"SKILL.md", "logo.png", "reference.md"}, nil},
			{"file", "/skills/lint/SKILL.md", nil, vfs.ErrNotDir},
			{"missing", "/skills/nope", nil, errkind.NotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := fs.List(ctx, alice, tc.dir, 0, "")
				wantErr(t, "List", err, tc.err)
				var got []string
				for _, e := range res.Entries {
					if e.IsDir {
						got = append(got, e.Name+"/")
					} else {
						got = append(got, e.Name)
					}
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("List(%s) = %q, want %q", tc.dir, got, tc.want)
				}
			})
		}
	})

	t.Run("Stat", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
			want       vfs.Info
			err        error
		}{
			{"file", "/skills/docs/pdf/SKILL.md", vfs.Info{Path: "/skills/docs/pdf/SKILL.md", Name: "SKILL.md",
				Size: skillAttrs.Size, ModTime: skillAttrs.ModTime, ETag: skillAttrs.ETag}, nil},
			{"directory", "/skills/docs", vfs.Info{Path: "/skills/docs", Name: "docs", IsDir: true}, nil},
			{"mount", "/skills", vfs.Info{Path: "/skills", Name: "skills", IsDir: true}, nil},
			{"missing", "/skills/docs/nope.md", vfs.Info{}, errkind.NotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := fs.Stat(ctx, alice, tc.path)
				wantErr(t, "Stat", err, tc.err)
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("Stat(%s) = %+v, want %+v", tc.path, got, tc.want)
				}
			})
		}
	})

	t.Run("Read", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
			wantPath   string
			want       string
			err        error
		}{
			{"file", "/skills/lint/SKILL.md", "/skills/lint/SKILL.md", "# Lint\nneedle", nil},
			{"markdown fallback", "/skills/docs/pdf/reference", "/skills/docs/pdf/reference.md", "The spec.\nA needle here.", nil},
			{"directory", "/skills/docs/pdf", "", "", vfs.ErrIsDir},
			{"binary", "/skills/docs/pdf/logo.png", "", "", textfile.ErrBinary},
			{"missing", "/skills/docs/nope", "", "", errkind.NotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := fs.Read(ctx, alice, tc.path, 0, 0, false)
				wantErr(t, "Read", err, tc.err)
				if res.Path != tc.wantPath || res.Content != tc.want {
					t.Errorf("Read(%s) = %q at %q, want %q at %q", tc.path, res.Content, res.Path, tc.want, tc.wantPath)
				}
				if err != nil && strings.Contains(err.Error(), "_shared/") {
					t.Errorf("Read(%s): error %q leaks a storage key", tc.path, err)
				}
			})
		}
		if res, err := fs.Read(ctx, alice, "/skills/docs/pdf/SKILL.md", 0, 0, false); err != nil || res.ETag != skillAttrs.ETag {
			t.Errorf("Read ETag = %q, %v; want %q", res.ETag, err, skillAttrs.ETag)
		}
	})

	t.Run("Download", func(t *testing.T) {
		for _, tc := range []struct {
			name, path     string
			offset, length int64
			want           string
			err            error
		}{
			{"whole", "/skills/docs/pdf/SKILL.md", 0, 0, skillMD, nil},
			{"window", "/skills/docs/pdf/SKILL.md", 2, 3, skillMD[2:5], nil},
			{"to the end", "/skills/docs/pdf/SKILL.md", 6, 0, skillMD[6:], nil},
			{"directory", "/skills/docs", 0, 0, "", vfs.ErrIsDir},
			{"missing", "/skills/docs/nope", 0, 0, "", errkind.NotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rc, info, err := fs.Download(ctx, alice, tc.path, tc.offset, tc.length)
				wantErr(t, "Download", err, tc.err)
				if err != nil {
					return
				}
				if got := string(readAllClose(t, rc)); got != tc.want {
					t.Errorf("Download = %q, want %q", got, tc.want)
				}
				if info.Path != tc.path || info.Size != skillAttrs.Size || info.ETag != skillAttrs.ETag {
					t.Errorf("Download Info = %+v, want the whole file's size %d and etag %q", info, skillAttrs.Size, skillAttrs.ETag)
				}
			})
		}
	})

	t.Run("Glob", func(t *testing.T) {
		for _, tc := range []struct {
			name, base, pattern string
			want                []string
		}{
			{"mount", "/skills", "**/SKILL.md", []string{"/skills/docs/pdf/SKILL.md", "/skills/lint/SKILL.md"}},
			{"directory", "/skills/docs", "**", []string{"/skills/docs/pdf/SKILL.md", "/skills/docs/pdf/logo.png", "/skills/docs/pdf/reference.md"}},
			{"static prefix", "/skills", "docs/pdf/*.md", []string{"/skills/docs/pdf/SKILL.md", "/skills/docs/pdf/reference.md"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := fs.Glob(ctx, alice, tc.base, vfs.GlobOptions{Pattern: tc.pattern})
				if err != nil {
					t.Fatal(err)
				}
				if got := paths(res.Matches); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("Glob(%s, %s) = %q, want %q", tc.base, tc.pattern, got, tc.want)
				}
			})
		}
	})

	t.Run("Grep", func(t *testing.T) {
		for _, tc := range []struct {
			name, base, glob string
			want             []vfs.GrepMatch
			skipped          int64
		}{
			{"mount", "/skills", "", []vfs.GrepMatch{
				{Path: "/skills/docs/pdf/reference.md", Line: 2, Text: "A needle here."},
				{Path: "/skills/lint/SKILL.md", Line: 2, Text: "needle"},
			}, 1},
			{"directory with a glob", "/skills/docs", "**/*.md", []vfs.GrepMatch{
				{Path: "/skills/docs/pdf/reference.md", Line: 2, Text: "A needle here."},
			}, 0},
			{"one file", "/skills/lint/SKILL.md", "", []vfs.GrepMatch{
				{Path: "/skills/lint/SKILL.md", Line: 2, Text: "needle"},
			}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := fs.Grep(ctx, alice, tc.base, vfs.GrepOptions{Pattern: "needle", Glob: tc.glob})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(res.Matches, tc.want) || res.FilesSkipped != tc.skipped || res.Truncated {
					t.Errorf("Grep(%s) = %+v, want matches %+v, %d skipped", tc.base, res, tc.want, tc.skipped)
				}
			})
		}
	})

	if n := fsBucket.Calls(""); n != 0 {
		t.Errorf("the tree mount made %d requests to the FS's bucket, want 0", n)
	}
	for _, op := range []string{objstore.OpGet, objstore.OpStat, objstore.OpPut, objstore.OpDelete} {
		if n := treeBucket.Calls(op); n != 0 {
			t.Errorf("the tree's bucket saw %d %s requests, want only GetRange from Open", n, op)
		}
	}
	if n := treeBucket.Calls(objstore.OpList); n != indexLists {
		t.Errorf("the tree's bucket was listed %d times after indexing, want 0", n-indexLists)
	}
}

// TestTreeMountFromRoot: a search from "/" walks a tree mount through its
// Tree and lists only the plain mounts' prefixes in the bucket.
func TestTreeMountFromRoot(t *testing.T) {
	files := map[string]string{"alice/threads/t1/a.md": "needle in the workspace\n"}
	for k, v := range treeFixture {
		files[k] = v
	}
	store := objstoretest.NewBucket(t, files)
	tree := newIndexTree(t, store, "_shared/skills/")
	fsBucket := objstoretest.NewFaulty(store)
	fsBucket.Before("", func(_ context.Context, c objstoretest.Call) error {
		if !strings.HasPrefix(c.Key, "alice/threads/") {
			return fmt.Errorf("%w: %s %s", errFSBucket, c.Op, c.Key)
		}
		return nil
	})
	fs, err := vfs.New(fsBucket, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", tree))
	if err != nil {
		t.Fatal(err)
	}
	glob, err := fs.Glob(t.Context(), alice, "/", vfs.GlobOptions{Pattern: "**/*.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/workspace/a.md", "/skills/docs/pdf/SKILL.md", "/skills/docs/pdf/reference.md", "/skills/lint/SKILL.md", "/skills/notes.md"}
	if got := paths(glob.Matches); !reflect.DeepEqual(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("Glob(/) = %q, want %q", got, want)
	}
	grep, err := fs.Grep(t.Context(), alice, "/", vfs.GrepOptions{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range grep.Matches {
		got = append(got, m.Path)
	}
	if want := []string{"/workspace/a.md", "/skills/docs/pdf/reference.md", "/skills/lint/SKILL.md"}; !reflect.DeepEqual(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("Grep(/) matched in %q, want %q", got, want)
	}
}

// TestTreeOpenErrors: a failure of Tree.Open reaches the caller as the
// same failure of the bucket does on a plain mount, for every operation
// that reads a file.
func TestTreeOpenErrors(t *testing.T) {
	const (
		plainKey = "alice/threads/t1/docs/f.md"
		treeKey  = "_shared/skills/docs/f.md"
	)
	type op struct {
		name string
		run  func(fs *vfs.FS, mount string) error
	}
	ops := []op{
		{"Read", func(fs *vfs.FS, mount string) error {
			_, err := fs.Read(t.Context(), alice, mount+"/docs/f.md", 0, 0, false)
			return err
		}},
		{"Read with fallback", func(fs *vfs.FS, mount string) error {
			_, err := fs.Read(t.Context(), alice, mount+"/docs/f", 0, 0, false)
			return err
		}},
		{"Download", func(fs *vfs.FS, mount string) error {
			rc, _, err := fs.Download(t.Context(), alice, mount+"/docs/f.md", 0, 0)
			if err == nil {
				rc.Close()
			}
			return err
		}},
		{"Grep one file", func(fs *vfs.FS, mount string) error {
			res, err := fs.Grep(t.Context(), alice, mount+"/docs/f.md", vfs.GrepOptions{Pattern: "x"})
			if err == nil && len(res.Matches) > 0 {
				return fmt.Errorf("unexpected matches %+v", res.Matches)
			}
			return err
		}},
		{"Grep directory", func(fs *vfs.FS, mount string) error {
			res, err := fs.Grep(t.Context(), alice, mount+"/docs", vfs.GrepOptions{Pattern: "x"})
			if err == nil && len(res.Matches) > 0 {
				return fmt.Errorf("unexpected matches %+v", res.Matches)
			}
			return err
		}},
	}
	for _, fault := range []struct {
		name string
		err  error
		// want is what each op returns; Grep leaves out a file gone since
		// it was listed.
		want map[string]error
	}{
		{"not found", objstore.ErrNotFound, map[string]error{
			"Read": errkind.NotFound, "Read with fallback": errkind.NotFound, "Download": errkind.NotFound,
			"Grep one file": nil, "Grep directory": nil,
		}},
		{"unavailable", objstore.ErrUnavailable, map[string]error{
			"Read": objstore.ErrUnavailable, "Read with fallback": objstore.ErrUnavailable, "Download": objstore.ErrUnavailable,
			"Grep one file": objstore.ErrUnavailable, "Grep directory": objstore.ErrUnavailable,
		}},
	} {
		for _, o := range ops {
			t.Run(fault.name+"/"+o.name, func(t *testing.T) {
				failing := func(key string) error { return fmt.Errorf("%w: get %s", fault.err, key) }
				files := map[string]string{plainKey: "x\n", treeKey: "x\n"}

				plainBucket := objstoretest.NewFaulty(objstoretest.NewBucket(t, files))
				plainBucket.Fail(objstore.OpGet, plainKey, failing(plainKey))
				plainBucket.Fail(objstore.OpGetRange, plainKey, failing(plainKey))
				plain, err := vfs.New(plainBucket, mounts.Default(), vfs.DefaultConfig())
				if err != nil {
					t.Fatal(err)
				}
				plainErr := o.run(plain, "/workspace")

				store := objstoretest.NewBucket(t, files)
				treeBucket := objstoretest.NewFaulty(store)
				tree := newIndexTree(t, treeBucket, "_shared/skills/")
				treeBucket.Fail("", treeKey, failing(treeKey))
				fsBucket := objstoretest.NewFaulty(store)
				fsBucket.Fail("", "", errFSBucket)
				treeFS, err := vfs.New(fsBucket, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", tree))
				if err != nil {
					t.Fatal(err)
				}
				treeErr := o.run(treeFS, "/skills")

				want := fault.want[o.name]
				wantErr(t, "plain mount", plainErr, want)
				wantErr(t, "tree mount", treeErr, want)
				if errkind.Of(plainErr) != errkind.Of(treeErr) || errkind.IsInternal(plainErr) != errkind.IsInternal(treeErr) {
					t.Errorf("tree mount: %v (kind %v), plain mount: %v (kind %v); want the same kind", treeErr, errkind.Of(treeErr), plainErr, errkind.Of(plainErr))
				}
				if n := fsBucket.Calls(""); n != 0 {
					t.Errorf("the tree mount made %d requests to the FS's bucket, want 0", n)
				}
				if n := treeBucket.Calls(objstore.OpGetRange); n == 0 {
					t.Error("Tree.Open was never called: the fault was not exercised")
				}
			})
		}
	}
}

// TestPlainMountRequests pins the requests a plain mount makes per
// operation, which serving trees must not change.
func TestPlainMountRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(fs *vfs.FS) error
		want map[string]int64 // per objstore.Op*; others 0
	}{
		{"Stat file", func(fs *vfs.FS) error {
			_, err := fs.Stat(t.Context(), alice, "/workspace/docs/f.md")
			return err
		}, map[string]int64{objstore.OpStat: 1}},
		{"Stat directory", func(fs *vfs.FS) error {
			_, err := fs.Stat(t.Context(), alice, "/workspace/docs")
			return err
		}, map[string]int64{objstore.OpStat: 1, objstore.OpList: 1}},
		{"Read", func(fs *vfs.FS) error {
			_, err := fs.Read(t.Context(), alice, "/workspace/docs/f.md", 0, 0, false)
			return err
		}, map[string]int64{objstore.OpGet: 1}},
		{"Read with fallback", func(fs *vfs.FS) error {
			_, err := fs.Read(t.Context(), alice, "/workspace/docs/f", 0, 0, false)
			return err
		}, map[string]int64{objstore.OpGet: 2, objstore.OpList: 1}},
		{"Download", func(fs *vfs.FS) error {
			rc, _, err := fs.Download(t.Context(), alice, "/workspace/docs/f.md", 0, 0)
			if err == nil {
				rc.Close()
			}
			return err
		}, map[string]int64{objstore.OpGetRange: 1}},
		{"List file", func(fs *vfs.FS) error {
			_, err := fs.List(t.Context(), alice, "/workspace/docs/f.md", 0, "")
			if !errors.Is(err, vfs.ErrNotDir) {
				return fmt.Errorf("List of a file: %v, want ErrNotDir", err)
			}
			return nil
		}, map[string]int64{objstore.OpList: 1, objstore.OpStat: 1}},
		{"Grep one file", func(fs *vfs.FS) error {
			_, err := fs.Grep(t.Context(), alice, "/workspace/docs/f.md", vfs.GrepOptions{Pattern: "x"})
			return err
		}, map[string]int64{objstore.OpStat: 1, objstore.OpGet: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"alice/threads/t1/docs/f.md": "x\n"}))
			fs, err := vfs.New(b, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", &indexTree{}))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.run(fs); err != nil {
				t.Fatal(err)
			}
			for _, op := range []string{objstore.OpGet, objstore.OpGetRange, objstore.OpStat, objstore.OpPut, objstore.OpDelete, objstore.OpList} {
				if got := b.Calls(op); got != tc.want[op] {
					t.Errorf("%s requests = %d, want %d", op, got, tc.want[op])
				}
			}
		})
	}
}
