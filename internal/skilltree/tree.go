package skilltree

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/views"
)

// Tree serves the merged library at the skills mount of the VFS, so every
// path a listing returns can be read with FilesystemService.
type Tree struct {
	views *views.Builder
	files *libindex.Files
	// maxTextBytes is --skills.max-file-bytes: the one limit of a skill
	// file read as text, by GetSkill, RenderSkill, ReadSkillFile and the
	// VFS's Read alike.
	maxTextBytes int64
}

// New is the tree of the views vs, reading files through fs.
func New(vs *views.Builder, fs *libindex.Files, maxTextBytes int64) *Tree {
	return &Tree{views: vs, files: fs, maxTextBytes: maxTextBytes}
}

var (
	_ vfs.Tree      = (*Tree)(nil)
	_ vfs.TextLimit = (*Tree)(nil)
)

// MaxTextBytes implements vfs.TextLimit.
func (t *Tree) MaxTextBytes() int64 { return t.maxTextBytes }

// SetScanner makes every layer the tree's views build carry the scan
// policy's notes (views.Scanner); call it before the first call is served.
func (t *Tree) SetScanner(s views.Scanner) { t.views.Scan = s }

// ReadText reads o, the file at vpath, as text through the file cache,
// within MaxTextBytes: the same bytes and limit the VFS's Read of vpath
// gets. hint says what to do instead with a file refused as binary or too
// large.
func (t *Tree) ReadText(ctx context.Context, o objstore.Object, vpath, hint string) ([]byte, objstore.Attributes, error) {
	r := textfile.Reader{MaxBytes: t.maxTextBytes, Hint: hint}
	data, a, err := r.Read(ctx, t.files.Getter(o), o.Key, vpath)
	if objstore.IsNotFound(err) {
		return nil, a, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
	}
	return data, a, err
}

// Stat implements vfs.Tree: the view holds every file it shows, from
// whichever layer, so it answers without a storage request. A file uploaded
// since the index was listed shows up when it is revalidated, as it does in
// the catalog.
func (t *Tree) Stat(ctx context.Context, id mounts.Caller, rel string) (objstore.Object, error) {
	v, err := t.views.Get(ctx, id)
	if err != nil {
		return objstore.Object{}, err
	}
	if e, ok := v.File(rel); ok {
		return e.Obj, nil
	}
	return objstore.Object{}, fmt.Errorf("%w: no file", objstore.ErrNotFound)
}

// Open implements vfs.Tree through the file cache.
func (t *Tree) Open(ctx context.Context, o objstore.Object, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	return t.files.Open(ctx, o, offset, length)
}

// List implements vfs.Tree.
func (t *Tree) List(ctx context.Context, id mounts.Caller, rel string) ([]vfs.TreeEntry, error) {
	v, err := t.views.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	prefix := dirPrefix(rel)
	// The view is sorted by path and a directory's files are contiguous in
	// it, so entries come out in the key order vfs.Tree asks for.
	var out []vfs.TreeEntry
	for e := range v.Files(prefix) {
		name, _, isDir := strings.Cut(e.Rel[len(prefix):], "/")
		if isDir {
			if n := len(out); n > 0 && out[n-1].IsDir && out[n-1].Name == name {
				continue
			}
			out = append(out, vfs.TreeEntry{Name: name, IsDir: true})
			continue
		}
		out = append(out, vfs.TreeEntry{Name: name, Object: e.Obj})
	}
	if len(out) == 0 && rel != "" {
		return nil, fmt.Errorf("%w: not a directory", objstore.ErrNotFound)
	}
	return out, nil
}

// Walk implements vfs.Tree.
func (t *Tree) Walk(ctx context.Context, id mounts.Caller, rel string, fn func(string, objstore.Object) error) error {
	v, err := t.views.Get(ctx, id)
	if err != nil {
		return err
	}
	for e := range v.Files(dirPrefix(rel)) {
		// fn may be costly (a pattern match): stop with the caller.
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e.Rel, e.Obj); err != nil {
			return err
		}
	}
	return nil
}

// dirPrefix is what the paths below directory rel start with.
func dirPrefix(rel string) string {
	if rel == "" {
		return ""
	}
	return rel + "/"
}
