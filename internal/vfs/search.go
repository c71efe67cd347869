package vfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// errStop ends a walk early without being an error.
var errStop = errors.New("stop")

// candidate is a file found by walking: its virtual path, the path relative
// to the search base (what patterns match), and its object.
type candidate struct {
	vpath, rel string
	obj        objstore.Object
}

// walkFiles calls fn for every file below vpath (a directory, a mount or
// "/"), in path order, listing at most MaxScanObjects objects. It reports
// whether the budget ran out. subdir narrows the listing to the static
// leading directories of a pattern.
func (fs *FS) walkFiles(ctx context.Context, id mounts.Identity, vpath, subdir string, fn func(candidate) error) (truncated bool, err error) {
	type root struct {
		vpath, prefix string // prefix of the objects, ending in "/"
		rel           string // path of vpath's mount root relative to the search base
		tree          Tree   // when set, walk it from treeRel instead of listing prefix
		treeRel       string
	}
	var roots []root
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return false, err
	}
	switch {
	case isRoot:
		for _, m := range fs.mounts.Mounts(id) {
			mr, err := fs.mounts.Resolve(id, m.Path)
			if err != nil {
				return false, err
			}
			roots = append(roots, root{vpath: m.Path, prefix: mr.Prefix, rel: strings.TrimPrefix(m.Path, "/") + "/", tree: fs.tree(mr)})
		}
	case r.Rel == "":
		roots = append(roots, root{vpath: vpath, prefix: r.Prefix, tree: fs.tree(r)})
	default:
		roots = append(roots, root{vpath: vpath, prefix: r.Key + "/", tree: fs.tree(r), treeRel: r.Rel})
	}
	scanned := 0
	for _, rt := range roots {
		listPrefix := rt.prefix
		if subdir != "" {
			// subdir is relative to the search base; skip roots it excludes.
			sub, ok := strings.CutPrefix(subdir+"/", rt.rel)
			if !ok && !strings.HasPrefix(rt.rel, subdir+"/") {
				continue
			}
			if ok {
				listPrefix += sub
			}
		}
		budgeted := func(c candidate) error {
			if scanned++; scanned > fs.cfg.MaxScanObjects {
				truncated = true
				return errStop
			}
			return fn(c)
		}
		var err error
		if rt.tree != nil {
			err = walkTree(ctx, rt.tree, id, rt.treeRel, rt.vpath, rt.rel, budgeted)
		} else {
			err = objstore.Walk(ctx, fs.bucket, listPrefix, func(o objstore.Object) error {
				name := strings.TrimPrefix(o.Key, rt.prefix)
				if !mounts.Addressable(name) {
					return nil // not addressable (written by another tool)
				}
				return budgeted(candidate{vpath: join(rt.vpath, name), rel: rt.rel + name, obj: o})
			})
		}
		if errors.Is(err, errStop) {
			return truncated, nil
		}
		if err != nil {
			return false, storeErr(vpath, err)
		}
	}
	return false, nil
}

// GlobResult lists the files matching a pattern.
type GlobResult struct {
	Matches   []Info
	Truncated bool
}

// Glob returns the files below base whose path relative to base matches the
// doublestar pattern (e.g. "**/*.md").
func (fs *FS) Glob(ctx context.Context, id mounts.Identity, base, pattern string, maxResults int) (GlobResult, error) {
	if base == "" {
		base = "/"
	}
	if pattern == "" || !doublestar.ValidatePattern(pattern) || strings.HasPrefix(pattern, "/") {
		return GlobResult{}, fmt.Errorf("%w: invalid glob pattern %q (relative doublestar syntax, e.g. \"**/*.md\")", errkind.InvalidArgument, pattern)
	}
	if maxResults <= 0 || maxResults > fs.cfg.MaxGlobResults {
		maxResults = fs.cfg.MaxGlobResults
	}
	static, _ := doublestar.SplitPattern(pattern)
	if static == "." || strings.ContainsAny(static, `\`) {
		static = ""
	}
	var out GlobResult
	truncated, err := fs.walkFiles(ctx, id, base, static, func(c candidate) error {
		if ok, _ := doublestar.Match(pattern, c.rel); !ok {
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

// GrepOptions selects what Grep looks for.
type GrepOptions struct {
	Pattern         string
	Glob            string
	Regex           bool
	CaseInsensitive bool
	MaxMatches      int
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string
	Line int64
	Text string
}

// GrepResult holds the matches in path and line order.
type GrepResult struct {
	Matches      []GrepMatch
	Truncated    bool
	FilesScanned int64
	FilesSkipped int64
}

// maxLineBytes bounds the text returned per matching line.
const maxLineBytes = 1000

// grepMargin is kept from the caller's deadline to send what was found.
const grepMargin = 100 * time.Millisecond

// Grep searches the files at or below base line by line. Binary files and
// files over MaxGrepFileBytes are skipped; the search stops with Truncated
// set at MaxMatches, at the scan budget or shortly before the deadline.
func (fs *FS) Grep(ctx context.Context, id mounts.Identity, base string, o GrepOptions) (GrepResult, error) {
	if base == "" {
		base = "/"
	}
	if o.Pattern == "" {
		return GrepResult{}, fmt.Errorf("%w: empty pattern", errkind.InvalidArgument)
	}
	expr := o.Pattern
	if !o.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if o.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return GrepResult{}, fmt.Errorf("%w: bad regular expression: %v", errkind.InvalidArgument, err)
	}
	if o.Glob != "" && !doublestar.ValidatePattern(o.Glob) {
		return GrepResult{}, fmt.Errorf("%w: invalid glob %q", errkind.InvalidArgument, o.Glob)
	}
	if o.MaxMatches <= 0 || o.MaxMatches > fs.cfg.MaxGrepMatches {
		o.MaxMatches = fs.cfg.MaxGrepMatches
	}

	// Stop early enough to answer before the caller's deadline.
	searchCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		searchCtx, cancel = context.WithDeadline(ctx, dl.Add(-min(grepMargin, time.Until(dl)/10)))
		defer cancel()
	}

	// A single file is searched directly.
	var files []candidate
	if info, err := fs.Stat(ctx, id, base); err != nil {
		return GrepResult{}, err
	} else if !info.IsDir {
		r, _, _ := fs.resolve(id, base)
		key, err := fs.key(ctx, id, r)
		if err != nil {
			return GrepResult{}, storeErr(base, err)
		}
		files = append(files, candidate{vpath: base, rel: info.Name, obj: objstore.Object{Key: key, Attributes: objstore.Attributes{Size: info.Size}}})
	}

	var (
		res       GrepResult
		mu        sync.Mutex
		perFile   = map[int][]GrepMatch{}
		found     atomic.Int64
		budget    atomic.Int64
		stopped   atomic.Bool
		truncated bool
	)
	budget.Store(fs.cfg.MaxGrepScanBytes)
	g, gctx := errgroup.WithContext(searchCtx)
	g.SetLimit(fs.cfg.GrepConcurrency)
	next := 0
	visit := func(c candidate) error {
		if o.Glob != "" {
			if ok, _ := doublestar.Match(o.Glob, c.rel); !ok {
				return nil
			}
		}
		if c.obj.Size > fs.cfg.MaxGrepFileBytes {
			mu.Lock()
			res.FilesSkipped++
			mu.Unlock()
			return nil
		}
		if found.Load() >= int64(o.MaxMatches) || budget.Add(-c.obj.Size) < 0 || gctx.Err() != nil {
			stopped.Store(true)
			return errStop
		}
		mu.Lock()
		res.FilesScanned++
		mu.Unlock()
		idx := next
		next++
		g.Go(panics.Guard(func() error {
			ms, binary, err := fs.grepFile(gctx, c, re)
			if err != nil {
				if gctx.Err() != nil || objstore.IsNotFound(err) {
					stopped.Store(gctx.Err() != nil || stopped.Load())
					return nil // deadline, or deleted since listed
				}
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if binary {
				res.FilesSkipped++
				res.FilesScanned--
				return nil
			}
			perFile[idx] = ms
			found.Add(int64(len(ms)))
			return nil
		}))
		return nil
	}
	if files != nil {
		err = visit(files[0])
		if errors.Is(err, errStop) {
			err = nil
		}
	} else {
		truncated, err = fs.walkFiles(gctx, id, base, "", visit)
	}
	// A failed fetch cancels gctx and so the walk; report the fetch's error.
	if werr := g.Wait(); werr != nil {
		err = werr
	}
	if err != nil && !(searchCtx.Err() != nil && ctx.Err() == nil) {
		return GrepResult{}, storeErr(base, err)
	}
	for i := range next {
		for _, m := range perFile[i] {
			if len(res.Matches) == o.MaxMatches {
				truncated = true
				break
			}
			res.Matches = append(res.Matches, m)
		}
	}
	res.Truncated = truncated || stopped.Load() || searchCtx.Err() != nil
	return res, nil
}

// grepFile returns the matching lines of one file, or binary=true.
func (fs *FS) grepFile(ctx context.Context, c candidate, re *regexp.Regexp) (ms []GrepMatch, binary bool, err error) {
	data, _, err := textfile.Reader{MaxBytes: fs.cfg.MaxGrepFileBytes}.Read(ctx, fs.bucket, c.obj.Key, c.vpath)
	if errors.Is(err, textfile.ErrBinary) || errkind.Of(err) == errkind.ResourceExhausted {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for line := int64(1); sc.Scan(); line++ {
		if re.Match(sc.Bytes()) {
			text := sc.Text()
			if len(text) > maxLineBytes {
				text = strings.ToValidUTF8(text[:maxLineBytes], "") + "…"
			}
			ms = append(ms, GrepMatch{Path: c.vpath, Line: line, Text: text})
		}
	}
	return ms, false, sc.Err()
}
