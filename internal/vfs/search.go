package vfs

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// errStop ends a walk early without being an error.
var errStop = errors.New("stop")

// candidate is a file found by walking: its virtual path, the path relative
// to the search base (what patterns match), its object, and the Tree that
// serves it (nil: read obj from the bucket).
type candidate struct {
	vpath, rel string
	obj        objstore.Object
	tree       Tree
}

// searchRoot is one listing a walk makes.
type searchRoot struct {
	vpath, prefix string // prefix of the objects, ending in "/"
	rel           string // path of vpath's mount root relative to the search base
	tree          Tree   // when set, walk it from treeRel instead of listing prefix
	treeRel       string
}

// walkFiles calls fn for every file below vpath (a directory, a mount or
// "/"), in path order, listing at most MaxScanObjects objects. It reports
// whether the budget ran out. subdir narrows the listing to the static
// leading directories of a pattern.
func (fs *FS) walkFiles(ctx context.Context, id mounts.Caller, vpath, subdir string, fn func(candidate) error) (truncated bool, err error) {
	roots, err := fs.searchRoots(id, vpath)
	if err != nil {
		return false, err
	}
	scanned := 0
	budgeted := func(c candidate) error {
		if scanned++; scanned > fs.cfg.MaxScanObjects {
			truncated = true
			return errStop
		}
		return fn(c)
	}
	for _, rt := range roots {
		listPrefix, ok := rt.narrow(subdir)
		if !ok {
			continue
		}
		err := fs.walkRoot(ctx, id, rt, listPrefix, budgeted)
		if errors.Is(err, errStop) {
			return truncated, nil
		}
		if err != nil {
			return false, storeErr(vpath, err)
		}
	}
	return false, nil
}

// searchRoots returns the listings below vpath: one per mount for "/".
func (fs *FS) searchRoots(id mounts.Caller, vpath string) ([]searchRoot, error) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return nil, err
	}
	switch {
	case isRoot:
		var roots []searchRoot
		for _, m := range fs.mounts.Mounts(id) {
			mr, err := fs.mounts.Resolve(id, m.Path)
			if err != nil {
				return nil, err
			}
			roots = append(roots, searchRoot{vpath: m.Path, prefix: mr.Prefix, rel: strings.TrimPrefix(m.Path, "/") + "/", tree: fs.tree(mr)})
		}
		return roots, nil
	case r.Rel == "":
		return []searchRoot{{vpath: vpath, prefix: r.Prefix, tree: fs.tree(r)}}, nil
	}
	return []searchRoot{{vpath: vpath, prefix: r.Key + "/", tree: fs.tree(r), treeRel: r.Rel}}, nil
}

// narrow returns the prefix to list for subdir (relative to the search
// base), or ok=false when subdir lies outside rt.
func (rt searchRoot) narrow(subdir string) (listPrefix string, ok bool) {
	if subdir == "" {
		return rt.prefix, true
	}
	if sub, ok := strings.CutPrefix(subdir+"/", rt.rel); ok {
		return rt.prefix + sub, true
	}
	return rt.prefix, strings.HasPrefix(rt.rel, subdir+"/")
}

func (fs *FS) walkRoot(ctx context.Context, id mounts.Caller, rt searchRoot, listPrefix string, fn func(candidate) error) error {
	if rt.tree != nil {
		return walkTree(ctx, rt.tree, id, rt.treeRel, rt.vpath, rt.rel, fn)
	}
	return objstore.Walk(ctx, fs.bucket, listPrefix, func(o objstore.Object) error {
		name := strings.TrimPrefix(o.Key, rt.prefix)
		if !mounts.Addressable(name) {
			return nil // written by another tool; no virtual path names it
		}
		return fn(candidate{vpath: join(rt.vpath, name), rel: rt.rel + name, obj: o})
	})
}

// GlobResult lists the files matching a pattern.
type GlobResult struct {
	Matches   []Info
	Truncated bool
}

// Glob returns the files below base whose path relative to base (or base
// name, with BaseName) matches the doublestar pattern (e.g. "**/*.md").
func (fs *FS) Glob(ctx context.Context, id mounts.Caller, base string, opts GlobOptions) (GlobResult, error) {
	if base == "" {
		base = "/"
	}
	m, err := fs.compileGlob(opts)
	if err != nil {
		return GlobResult{}, err
	}
	maxResults, err := limits.Count("max_results", opts.MaxResults, fs.cfg.MaxGlobResults, fs.cfg.MaxGlobResults)
	if err != nil {
		return GlobResult{}, err
	}
	// Listing only below the pattern's static directories saves the object
	// budget for them; a backslash escape there would need unescaping first.
	static, _ := doublestar.SplitPattern(opts.Pattern)
	if static == "." || strings.ContainsAny(static, `\`) || opts.BaseName {
		static = ""
	}
	if static != "" && opts.Hidden != HiddenExplicit && m.match(static) {
		// doublestar's "a/b/**" matches a file at "a/b" itself: list its
		// folder. Explicit mode (deepagents') matches only below "a/b".
		if static = path.Dir(static); static == "." {
			static = ""
		}
	}
	var out GlobResult
	truncated, err := fs.walkFiles(ctx, id, base, static, func(c candidate) error {
		if !m.match(c.rel) {
			return nil
		}
		if len(out.Matches) == maxResults {
			out.Truncated = true
			return errStop
		}
		out.Matches = append(out.Matches, fileInfo(c.vpath, c.obj.Attributes))
		return nil
	})
	if err != nil {
		return GlobResult{}, err
	}
	out.Truncated = out.Truncated || truncated
	return out, nil
}
