package vfs

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
)

// ListResult is one page of a directory.
type ListResult struct {
	Entries       []Info
	NextPageToken string
}

// listScope binds a page token to the directory it continues, so it cannot
// be replayed against another path.
func listScope(vpath string) string {
	return fmt.Sprintf("list %q", vpath)
}

// validName reports whether a listed name can be addressed as a path
// segment. Keys written by other S3 tools may not be (e.g. "a//b").
func validName(name string) bool {
	return !strings.Contains(name, "/") && mounts.Addressable(name)
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// List returns one page of the directory vpath; "/" lists the mounts.
func (fs *FS) List(ctx context.Context, id mounts.Caller, vpath string, pageSize int, pageToken string) (ListResult, error) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return ListResult{}, err
	}
	if isRoot {
		var out ListResult
		for _, m := range fs.mounts.Mounts(id) {
			out.Entries = append(out.Entries, dirInfo(m.Path))
		}
		return out, nil
	}
	token, err := pagetoken.Decode(listScope(vpath), pageToken)
	if err != nil {
		return ListResult{}, err
	}
	pageSize, err = limits.Count("page_size", pageSize, fs.cfg.MaxListPage, fs.cfg.MaxListPage)
	if err != nil {
		return ListResult{}, err
	}
	if t := fs.tree(r); t != nil {
		return fs.listTree(ctx, id, vpath, r, t, pageSize, token)
	}
	prefix := r.Prefix
	if r.Rel != "" {
		prefix = r.Key + "/"
	}
	page, err := fs.bucket.List(ctx, objstore.ListOptions{Prefix: prefix, Delimiter: "/", Token: token, MaxKeys: pageSize})
	if err != nil {
		return ListResult{}, storeErr(vpath, err)
	}
	dirs, err := fs.liveDirs(ctx, prefix, token == "", page.CommonPrefixes)
	if err != nil {
		return ListResult{}, storeErr(vpath, err)
	}
	var out ListResult
	// Objects and prefixes each come sorted; merge them into one name order.
	objs := page.Objects
	for len(objs) > 0 || len(dirs) > 0 {
		if len(dirs) == 0 || (len(objs) > 0 && objs[0].Key < dirs[0]) {
			o := objs[0]
			objs = objs[1:]
			if name := strings.TrimPrefix(o.Key, prefix); validName(name) {
				out.Entries = append(out.Entries, fileInfo(join(vpath, name), o.Attributes))
			}
			continue
		}
		d := dirs[0]
		dirs = dirs[1:]
		if name := strings.TrimSuffix(strings.TrimPrefix(d, prefix), "/"); validName(name) {
			out.Entries = append(out.Entries, dirInfo(join(vpath, name)))
		}
	}
	out.NextPageToken = pagetoken.Encode(listScope(vpath), page.NextToken)
	if len(out.Entries) == 0 && token == "" && r.Rel != "" {
		// Nothing below: a file, or nothing at all.
		if _, err := fs.bucket.Stat(ctx, r.Key); err == nil {
			return ListResult{}, fmt.Errorf("%w: %q is a file", ErrNotDir, vpath)
		} else if !objstore.IsNotFound(err) {
			return ListResult{}, storeErr(vpath, err)
		}
		if page.NextToken == "" {
			return ListResult{}, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
		}
	}
	return out, nil
}

// dirChecks bounds the one-key listings liveDirs runs at once.
const dirChecks = 8

// liveDirs returns the common prefixes of a listing of prefix that hold an
// object. A store may list a prefix whose objects are all gone as a common
// prefix for a while (SeaweedFS does for a minute or two after they are
// deleted), and a directory holding nothing does not exist. One listing of
// prefix without a delimiter settles every directory it reaches (on a
// listing's first page, those holding the directory's first keys: all of
// them when it holds at most a page of objects); each directory beyond it
// costs a one-key listing of its own, in parallel.
func (fs *FS) liveDirs(ctx context.Context, prefix string, firstPage bool, dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return dirs, nil
	}
	live := make([]bool, len(dirs))
	pending := 0 // dirs[pending:] are not settled (but those live already)
	if firstPage {
		page, err := fs.bucket.List(ctx, objstore.ListOptions{Prefix: prefix})
		if err != nil {
			return nil, err
		}
		// Keys and dirs both come sorted, and a directory's keys follow
		// one another: a key past a directory, not in it, settles it.
		for _, o := range page.Objects {
			for pending < len(dirs) && dirs[pending] < o.Key && !strings.HasPrefix(o.Key, dirs[pending]) {
				pending++
			}
			if pending < len(dirs) && strings.HasPrefix(o.Key, dirs[pending]) {
				live[pending] = true
			}
		}
		if page.NextToken == "" {
			pending = len(dirs) // every key seen: the rest hold none
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(dirChecks)
	for i := pending; i < len(dirs); i++ {
		if live[i] {
			continue
		}
		g.Go(func() error {
			page, err := fs.bucket.List(gctx, objstore.ListOptions{Prefix: dirs[i], MaxKeys: 1})
			live[i] = len(page.Objects) > 0
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(dirs))
	for i, d := range dirs {
		if live[i] {
			out = append(out, d)
		}
	}
	return out, nil
}

// Delete removes the file vpath, or with recursive the directory vpath and
// everything below it. It returns the number of files removed.
func (fs *FS) Delete(ctx context.Context, id mounts.Caller, vpath string, recursive bool) (int64, error) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return 0, err
	}
	if isRoot {
		return 0, fmt.Errorf("%w: the root cannot be deleted", errkind.InvalidArgument)
	}
	if r.Mount.Mode != mounts.ReadWrite {
		return 0, fmt.Errorf("%w: %s is mounted read-only", errkind.PermissionDenied, r.Mount.Path)
	}
	if r.Rel != "" {
		_, err := fs.bucket.Stat(ctx, r.Key)
		if err == nil {
			if err := fs.bucket.Delete(ctx, r.Key); err != nil {
				return 0, storeErr(vpath, err)
			}
			return 1, nil
		}
		if !objstore.IsNotFound(err) {
			return 0, storeErr(vpath, err)
		}
	}
	prefix := r.Prefix
	if r.Rel != "" {
		prefix = r.Key + "/"
		dir, err := fs.isDir(ctx, prefix)
		if err != nil {
			return 0, storeErr(vpath, err)
		}
		if !dir {
			return 0, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
		}
	}
	if !recursive {
		return 0, fmt.Errorf("%w: %q; set recursive to delete it with its contents", ErrIsDir, vpath)
	}
	return fs.deleteAll(ctx, vpath, prefix)
}

func (fs *FS) deleteAll(ctx context.Context, vpath, prefix string) (int64, error) {
	var deleted int64
	err := objstore.Walk(ctx, fs.bucket, prefix, func(o objstore.Object) error {
		if err := fs.bucket.Delete(ctx, o.Key); err != nil {
			return err
		}
		deleted++
		return nil
	})
	return deleted, storeErr(vpath, err)
}
