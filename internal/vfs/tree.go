package vfs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
)

// Tree serves a read-only mount from a computed view instead of the mount's
// own prefix. The skills library uses it to show the user's library merged
// with the shared one. rel is a path inside the mount, "" for its root.
type Tree interface {
	// Key maps the file rel to the object that holds it.
	Key(ctx context.Context, id mounts.Identity, rel string) (string, error)
	// List returns the entries of directory rel in key order (a directory
	// sorts as its name + "/"), or an error wrapping objstore.ErrNotFound
	// when rel is not a directory.
	List(ctx context.Context, id mounts.Identity, rel string) ([]TreeEntry, error)
	// Walk calls fn, in path order, for every file below directory rel.
	Walk(ctx context.Context, id mounts.Identity, rel string, fn func(rel string, o objstore.Object) error) error
}

// TreeEntry is one entry of a Tree directory.
type TreeEntry struct {
	Name   string
	IsDir  bool
	Object objstore.Object // files only
}

// Option configures an FS.
type Option func(*FS)

// WithTree serves the read-only mount at mountPath from t.
func WithTree(mountPath string, t Tree) Option {
	return func(fs *FS) { fs.trees[mountPath] = t }
}

func (fs *FS) tree(r mounts.Resolved) Tree { return fs.trees[r.Mount.Path] }

// key returns the object key of the file r.
func (fs *FS) key(ctx context.Context, id mounts.Identity, r mounts.Resolved) (string, error) {
	if t := fs.tree(r); t != nil {
		return t.Key(ctx, id, r.Rel)
	}
	return r.Key, nil
}

// dirAt reports whether r is a directory.
func (fs *FS) dirAt(ctx context.Context, id mounts.Identity, r mounts.Resolved) (bool, error) {
	if r.Rel == "" {
		return true, nil
	}
	if t := fs.tree(r); t != nil {
		_, err := t.List(ctx, id, r.Rel)
		if objstore.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	return fs.isDir(ctx, r.Key+"/")
}

// withExt returns r for the path with ext appended.
func withExt(r mounts.Resolved, ext string) mounts.Resolved {
	r.Rel += ext
	r.Key += ext
	return r
}

// listTree pages through a Tree directory; the token is the order key of
// the last entry sent.
func (fs *FS) listTree(ctx context.Context, id mounts.Identity, vpath string, r mounts.Resolved, t Tree, pageSize int, token string) (ListResult, error) {
	entries, err := t.List(ctx, id, r.Rel)
	if objstore.IsNotFound(err) {
		if k, kerr := t.Key(ctx, id, r.Rel); kerr == nil {
			if _, serr := fs.bucket.Stat(ctx, k); serr == nil {
				return ListResult{}, fmt.Errorf("%w: %q is a file", ErrNotDir, vpath)
			}
		}
		return ListResult{}, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
	}
	if err != nil {
		return ListResult{}, storeErr(vpath, err)
	}
	// Entries are in key order, where a directory sorts as its name + "/",
	// as in listings of plain mounts; tokens compare the same way.
	start := sort.Search(len(entries), func(i int) bool { return orderKey(entries[i]) > token })
	page := entries[start:]
	var out ListResult
	if len(page) > pageSize {
		page = page[:pageSize]
		out.NextPageToken = pagetoken.Encode(listScope(vpath), orderKey(page[pageSize-1]))
	}
	for _, e := range page {
		if e.IsDir {
			out.Entries = append(out.Entries, dirInfo(join(vpath, e.Name)))
		} else {
			out.Entries = append(out.Entries, fileInfo(join(vpath, e.Name), e.Object.Attributes))
		}
	}
	return out, nil
}

func orderKey(e TreeEntry) string {
	if e.IsDir {
		return e.Name + "/"
	}
	return e.Name
}

// walkTree adapts Tree.Walk to walkFiles' callback.
func walkTree(ctx context.Context, t Tree, id mounts.Identity, rel, vpath, baseRel string, fn func(candidate) error) error {
	return t.Walk(ctx, id, rel, func(fileRel string, o objstore.Object) error {
		name := strings.TrimPrefix(strings.TrimPrefix(fileRel, rel), "/")
		return fn(candidate{vpath: join(vpath, name), rel: baseRel + name, obj: o})
	})
}
