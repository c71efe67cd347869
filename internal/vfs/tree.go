package vfs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// Tree serves a read-only mount from a computed view instead of the mount's
// own prefix. The skills library uses it to show the user's library merged
// with the shared one. Every operation on such a mount goes through the
// Tree, never to the FS's bucket, so a Tree over a cached index decides
// which requests a warm mount makes. rel is a path inside the mount, "" for
// its root.
type Tree interface {
	// Stat returns the file at rel (its key and attributes), or an error
	// wrapping objstore.ErrNotFound when rel is no file of the tree (a
	// directory or nothing). Its Object is what the FS hands back to Open.
	Stat(ctx context.Context, id mounts.Caller, rel string) (objstore.Object, error)
	// List returns the entries of directory rel in key order (a directory
	// sorts as its name + "/"), or an error wrapping objstore.ErrNotFound
	// when rel is not a directory.
	List(ctx context.Context, id mounts.Caller, rel string) ([]TreeEntry, error)
	// Walk calls fn, in path order, for every file below directory rel.
	Walk(ctx context.Context, id mounts.Caller, rel string, fn func(rel string, o objstore.Object) error) error
	// Open reads o, a file that Stat, List or Walk returned, from offset
	// for length bytes (length < 0: to the end), with the semantics of
	// objstore.Bucket.GetRange: the attributes are the whole file's, and a
	// file gone since the view was built is objstore.ErrNotFound. It is the
	// Tree's, not the FS's, because only the Tree knows where its files
	// live and may serve them from a cache.
	Open(ctx context.Context, o objstore.Object, offset, length int64) (io.ReadCloser, objstore.Attributes, error)
}

// TextLimit is implemented by a Tree whose files have a limit of their own
// for being read as text: Read then refuses a larger file of the tree as it
// refuses one over MaxReadBytes. The skills library's files are also read
// as text by its own RPCs, and a file must not be readable one way and
// refused the other.
type TextLimit interface {
	// MaxTextBytes is the largest file of the tree read as text.
	MaxTextBytes() int64
}

// ReadObserver is implemented by a Tree told of each file Read returns
// from its start: the skills tree counts such a read as a use of the skill
// (internal/skilltree). A window after the first (offset > 0) continues a
// read already told of.
type ReadObserver interface {
	// ReadDone is told of the file at rel, read by id. It must not block.
	ReadDone(ctx context.Context, id mounts.Caller, rel string)
}

// ReadDone tells the tree serving vpath, if a ReadObserver, that id read
// the file at vpath whole another way than Read (MCP's resources/read
// downloads it).
func (fs *FS) ReadDone(ctx context.Context, id mounts.Caller, vpath string) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil || isRoot {
		return
	}
	if o, ok := fs.tree(r).(ReadObserver); ok {
		o.ReadDone(ctx, id, r.Rel)
	}
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

// statFile returns the file r: from its mount's Tree, or with one Stat of
// the bucket.
func (fs *FS) statFile(ctx context.Context, id mounts.Caller, r mounts.Resolved) (objstore.Object, error) {
	if t := fs.tree(r); t != nil {
		return t.Stat(ctx, id, r.Rel)
	}
	a, err := fs.bucket.Stat(ctx, r.Key)
	return objstore.Object{Key: r.Key, Attributes: a}, err
}

// open reads the file r from offset for length bytes (length < 0: to the
// end): through its mount's Tree, or with one GetRange of the bucket.
func (fs *FS) open(ctx context.Context, id mounts.Caller, r mounts.Resolved, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	t := fs.tree(r)
	if t == nil {
		return fs.bucket.GetRange(ctx, r.Key, offset, length)
	}
	o, err := t.Stat(ctx, id, r.Rel)
	if err != nil {
		return nil, objstore.Attributes{}, err
	}
	return t.Open(ctx, o, offset, length)
}

// getter returns what reads o, a file of t (nil: of a plain mount), for
// textfile.
func (fs *FS) getter(t Tree, o objstore.Object) textfile.Getter {
	if t == nil {
		return fs.bucket
	}
	return treeFile{tree: t, obj: o}
}

// treeFile lets textfile read one file of a Tree, with the same size limit
// and binary check as an object of the bucket. It serves only obj, whatever
// key it is asked for.
type treeFile struct {
	tree Tree
	obj  objstore.Object
}

func (f treeFile) Get(ctx context.Context, _ string) (io.ReadCloser, objstore.Attributes, error) {
	return f.tree.Open(ctx, f.obj, 0, -1)
}

// dirAt reports whether r is a directory.
func (fs *FS) dirAt(ctx context.Context, id mounts.Caller, r mounts.Resolved) (bool, error) {
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
func (fs *FS) listTree(ctx context.Context, id mounts.Caller, vpath string, r mounts.Resolved, t Tree, pageSize int, token string) (ListResult, error) {
	entries, err := t.List(ctx, id, r.Rel)
	if objstore.IsNotFound(err) {
		// Nothing below: a file, or nothing at all.
		_, serr := t.Stat(ctx, id, r.Rel)
		switch {
		case serr == nil:
			return ListResult{}, fmt.Errorf("%w: %q is a file", ErrNotDir, vpath)
		case !objstore.IsNotFound(serr):
			return ListResult{}, storeErr(vpath, serr)
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
func walkTree(ctx context.Context, t Tree, id mounts.Caller, rel, vpath, baseRel string, fn func(candidate) error) error {
	return t.Walk(ctx, id, rel, func(fileRel string, o objstore.Object) error {
		name := strings.TrimPrefix(strings.TrimPrefix(fileRel, rel), "/")
		return fn(candidate{vpath: join(vpath, name), rel: baseRel + name, obj: o, tree: t})
	})
}
