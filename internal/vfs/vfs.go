package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// FS serves the virtual filesystem for any caller. It holds no per-caller
// state and is safe for concurrent use.
type FS struct {
	bucket objstore.Bucket
	mounts *mounts.Table
	cfg    Config
	trees  map[string]Tree // by mount path
}

// New returns an FS over bucket with the given mount table and limits.
func New(bucket objstore.Bucket, table *mounts.Table, cfg Config, opts ...Option) (*FS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fs := &FS{bucket: bucket, mounts: table, cfg: cfg, trees: map[string]Tree{}}
	for _, o := range opts {
		o(fs)
	}
	return fs, nil
}

// Info describes a file or directory.
type Info struct {
	Path    string
	Name    string
	IsDir   bool
	Size    int64
	ModTime time.Time
	ETag    string
}

func fileInfo(vpath string, a objstore.Attributes) Info {
	return Info{Path: vpath, Name: path.Base(vpath), Size: a.Size, ModTime: a.ModTime, ETag: a.ETag}
}

func dirInfo(vpath string) Info {
	return Info{Path: vpath, Name: path.Base(vpath), IsDir: true}
}

// resolve maps vpath for id; "/", above every mount, is reported as isRoot.
// mounts' errors already carry their kinds (InvalidArgument, NotFound). id
// was validated where the call came in; Identified only refuses a Caller
// this table did not make (the zero one).
func (fs *FS) resolve(id mounts.Caller, vpath string) (r mounts.Resolved, isRoot bool, err error) {
	if err := fs.mounts.Identified(id); err != nil {
		return r, false, err
	}
	if vpath == "/" {
		return r, true, nil
	}
	r, err = fs.mounts.Resolve(id, vpath)
	return r, false, err
}

func (fs *FS) resolveWritable(id mounts.Caller, vpath string) (mounts.Resolved, error) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return r, err
	}
	if isRoot {
		return r, fmt.Errorf("%w: %q is the root directory", ErrIsDir, vpath)
	}
	if r.Mount.Mode != mounts.ReadWrite {
		return r, fmt.Errorf("%w: %s is mounted read-only", errkind.PermissionDenied, r.Mount.Path)
	}
	if r.Rel == "" {
		return r, fmt.Errorf("%w: %q is a mount", ErrIsDir, vpath)
	}
	return r, nil
}

// storeErr turns a storage error into a caller-safe one about vpath.
// Unexpected errors pass through unchanged: the gRPC edge logs them and
// answers Internal without their text.
func storeErr(vpath string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, objstore.ErrNotFound):
		return fmt.Errorf("%w: %q", errkind.NotFound, vpath)
	case errors.Is(err, objstore.ErrInvalidKey):
		return fmt.Errorf("%w: %q cannot be stored (a parent is a file, or it is a directory)", errkind.InvalidArgument, vpath)
	}
	return err
}

// isDir reports whether any object lives below dirPrefix (a directory in S3
// terms). It lists without a delimiter: a common prefix alone proves
// nothing, as a store may list one whose objects are gone (see liveDirs).
func (fs *FS) isDir(ctx context.Context, dirPrefix string) (bool, error) {
	page, err := fs.bucket.List(ctx, objstore.ListOptions{Prefix: dirPrefix, MaxKeys: 1})
	if err != nil {
		return false, err
	}
	return len(page.Objects) > 0, nil
}

// Stat describes vpath.
func (fs *FS) Stat(ctx context.Context, id mounts.Caller, vpath string) (Info, error) {
	info, _, _, err := fs.stat(ctx, id, vpath)
	return info, err
}

// stat is Stat that also returns, for a file, where it was resolved and its
// object, so that a caller can read it without looking it up again.
func (fs *FS) stat(ctx context.Context, id mounts.Caller, vpath string) (Info, mounts.Resolved, objstore.Object, error) {
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return Info{}, r, objstore.Object{}, err
	}
	if isRoot || r.Rel == "" {
		return dirInfo(vpath), r, objstore.Object{}, nil
	}
	o, err := fs.statFile(ctx, id, r)
	if err == nil {
		return fileInfo(vpath, o.Attributes), r, o, nil
	}
	if !objstore.IsNotFound(err) {
		return Info{}, r, objstore.Object{}, storeErr(vpath, err)
	}
	dir, err := fs.dirAt(ctx, id, r)
	if err != nil {
		return Info{}, r, objstore.Object{}, storeErr(vpath, err)
	}
	if !dir {
		return Info{}, r, objstore.Object{}, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
	}
	return dirInfo(vpath), r, objstore.Object{}, nil
}

// readText loads a whole text file from g, enforcing MaxReadBytes, or the
// tree's own limit when it has a lower one (see TextLimit).
func (fs *FS) readText(ctx context.Context, vpath string, t Tree, g textfile.Getter, key string) ([]byte, objstore.Attributes, error) {
	limit := fs.cfg.MaxReadBytes
	if tl, ok := t.(TextLimit); ok {
		limit = min(limit, tl.MaxTextBytes())
	}
	return textfile.Reader{MaxBytes: limit, Hint: "use Download"}.Read(ctx, g, key, vpath)
}

// readFile loads the text file r: a plain mount's with one Get of the
// bucket, a tree's through the Tree alone.
func (fs *FS) readFile(ctx context.Context, id mounts.Caller, vpath string, r mounts.Resolved) ([]byte, objstore.Attributes, error) {
	t := fs.tree(r)
	if t == nil {
		return fs.readText(ctx, vpath, nil, fs.bucket, r.Key)
	}
	o, err := t.Stat(ctx, id, r.Rel)
	if err != nil {
		return nil, objstore.Attributes{}, err
	}
	return fs.readText(ctx, vpath, t, fs.getter(t, o), o.Key)
}

// ReadResult is one window of a text file.
type ReadResult struct {
	Path       string
	Content    string
	TotalLines int64
	NextOffset int64
	ETag       string
	// EndsWithNewline: the window reaches the end of the file, whose last
	// line ends with "\n" (Content never ends with a line's break).
	EndsWithNewline bool
}

// DefaultReadLimit is the number of lines Read returns when limit is 0.
const DefaultReadLimit = 2000

// Read returns up to limit lines of a text file from line offset (0-based).
// A missing path without an extension falls back to path + ".md", so skill
// references like "/skills/x/reference" resolve.
func (fs *FS) Read(ctx context.Context, id mounts.Caller, vpath string, offset, limit int64, lineNumbers bool) (ReadResult, error) {
	if offset < 0 {
		return ReadResult{}, fmt.Errorf("%w: offset must not be negative", errkind.InvalidArgument)
	}
	// Lines are not capped here: MaxReadResponse bounds what comes back.
	limit, err := limits.Count("limit", limit, DefaultReadLimit, math.MaxInt64)
	if err != nil {
		return ReadResult{}, err
	}
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return ReadResult{}, err
	}
	if isRoot || r.Rel == "" {
		return ReadResult{}, fmt.Errorf("%w: %q", ErrIsDir, vpath)
	}
	data, a, err := fs.readFile(ctx, id, vpath, r)
	if objstore.IsNotFound(err) {
		if dir, derr := fs.dirAt(ctx, id, r); derr == nil && dir {
			return ReadResult{}, fmt.Errorf("%w: %q", ErrIsDir, vpath)
		}
		if alt, ok := mounts.Fallback(r.Rel); ok {
			ext := strings.TrimPrefix(alt, r.Rel)
			vpath, r = vpath+ext, withExt(r, ext)
			data, a, err = fs.readFile(ctx, id, vpath, r)
		}
	}
	if err != nil {
		return ReadResult{}, storeErr(vpath, err)
	}
	total := countLines(data)
	if offset > total || (offset == total && total > 0) {
		return ReadResult{}, fmt.Errorf("%w: offset %d is past the end of %q (%d lines)", errkind.OutOfRange, offset, vpath, total)
	}
	end := offset + min(limit, total-offset) // limit may be near MaxInt64
	content, end := fs.window(data, offset, end, lineNumbers)
	if o, ok := fs.tree(r).(ReadObserver); ok && offset == 0 {
		o.ReadDone(ctx, id, r.Rel)
	}
	return ReadResult{Path: vpath, Content: content, TotalLines: total, NextOffset: end, ETag: a.ETag,
		EndsWithNewline: end == total && bytes.HasSuffix(data, []byte{'\n'})}, nil
}

// window returns lines [offset, end) of data, fewer when they would exceed
// MaxReadResponse, and the line to continue from. Lines are cut out of data
// one at a time: a file of empty lines must not become a slice of strings
// many times its size.
func (fs *FS) window(data []byte, offset, end int64, lineNumbers bool) (string, int64) {
	rest := data
	for range offset {
		_, rest = nextLine(rest)
	}
	var b strings.Builder
	for i := offset; i < end; i++ {
		var line []byte
		line, rest = nextLine(rest)
		prefix := ""
		if lineNumbers {
			prefix = fmt.Sprintf("%6d\t", i+1)
		}
		room := fs.cfg.MaxReadResponse - int64(b.Len()) - 1
		if n := int64(len(prefix) + len(line)); n > room {
			if i > offset {
				return b.String(), i // the caller continues from next_offset
			}
			// A single line over the limit: return its start, marked.
			keep := max(room-int64(len(truncatedMark)), 0)
			full := append([]byte(prefix), line[:min(int64(len(line)), keep)]...)
			b.WriteString(strings.ToValidUTF8(string(full[:min(int64(len(full)), keep)]), "") + truncatedMark)
			continue
		}
		if i > offset {
			b.WriteByte('\n')
		}
		b.WriteString(prefix)
		b.Write(line)
	}
	return b.String(), end
}

// countLines counts lines split on "\n"; a final newline does not start
// another line.
func countLines(data []byte) int64 {
	if len(data) == 0 {
		return 0
	}
	n := int64(bytes.Count(data, []byte{'\n'}))
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// nextLine splits the first line (without its "\n") off data.
func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// truncatedMark ends a line cut to fit MaxReadResponse.
const truncatedMark = " … [line truncated]"

// WriteOptions are the optimistic-concurrency conditions of a write.
type WriteOptions struct {
	IfMatch      string
	MustNotExist bool
}

func (o WriteOptions) validate() error {
	if o.IfMatch != "" && o.MustNotExist {
		return fmt.Errorf("%w: if_match and must_not_exist exclude each other", errkind.InvalidArgument)
	}
	return nil
}

// checkPlacement refuses a file where a directory is, or below a file, so the
// tree stays a tree on S3 (which would allow both) as on a local disk.
func (fs *FS) checkPlacement(ctx context.Context, vpath string, r mounts.Resolved) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(panics.Guard(func() error {
		dir, err := fs.isDir(gctx, r.Key+"/")
		if err == nil && dir {
			return fmt.Errorf("%w: %q", ErrIsDir, vpath)
		}
		return err
	}))
	for p := path.Dir(r.Rel); p != "."; p = path.Dir(p) {
		g.Go(panics.Guard(func() error {
			_, err := fs.bucket.Stat(gctx, r.Prefix+p)
			switch {
			case err == nil:
				return fmt.Errorf("%w: %s/%s is a file", ErrNotDir, r.Mount.Path, p)
			case objstore.IsNotFound(err):
				return nil
			}
			return err
		}))
	}
	return g.Wait()
}

func (fs *FS) put(ctx context.Context, vpath string, r mounts.Resolved, body io.Reader, size int64, opts WriteOptions) (Info, error) {
	if err := fs.checkPlacement(ctx, vpath, r); err != nil {
		return Info{}, storeErr(vpath, err)
	}
	a, err := fs.bucket.Put(ctx, r.Key, body, size, objstore.PutOptions{IfMatch: opts.IfMatch, IfNoneMatch: opts.MustNotExist})
	switch {
	case err == nil:
		return fileInfo(vpath, a), nil
	case errors.Is(err, objstore.ErrPrecondition) && opts.MustNotExist:
		return Info{}, fmt.Errorf("%w: %q", errkind.AlreadyExists, vpath)
	case errors.Is(err, objstore.ErrPrecondition):
		return Info{}, fmt.Errorf("%w: %q changed since etag %q (or is missing)", errkind.FailedPrecondition, vpath, opts.IfMatch)
	case errors.Is(err, objstore.ErrConflict):
		return Info{}, fmt.Errorf("%w: %q is being written concurrently", errkind.Aborted, vpath)
	case errors.Is(err, errkind.ResourceExhausted):
		return Info{}, err
	}
	return Info{}, storeErr(vpath, err)
}

// Write creates or replaces a text file.
func (fs *FS) Write(ctx context.Context, id mounts.Caller, vpath, content string, opts WriteOptions) (Info, error) {
	if err := opts.validate(); err != nil {
		return Info{}, err
	}
	r, err := fs.resolveWritable(id, vpath)
	if err != nil {
		return Info{}, err
	}
	if int64(len(content)) > fs.cfg.MaxWriteBytes {
		return Info{}, fmt.Errorf("%w: content is %d bytes, Write stores at most %d; use Upload", errkind.ResourceExhausted, len(content), fs.cfg.MaxWriteBytes)
	}
	if !utf8.ValidString(content) {
		return Info{}, fmt.Errorf("%w: content is not UTF-8; use Upload for binary files", errkind.InvalidArgument)
	}
	return fs.put(ctx, vpath, r, strings.NewReader(content), int64(len(content)), opts)
}

// Upload stores a file of any content read from body.
func (fs *FS) Upload(ctx context.Context, id mounts.Caller, vpath string, body io.Reader, opts WriteOptions) (Info, error) {
	if err := opts.validate(); err != nil {
		return Info{}, err
	}
	r, err := fs.resolveWritable(id, vpath)
	if err != nil {
		return Info{}, err
	}
	limited := &limitReader{r: body, n: fs.cfg.MaxUploadBytes}
	info, err := fs.put(ctx, vpath, r, limited, -1, opts)
	if err != nil && limited.err != nil {
		// Backends wrap a failing body's error with the storage key; the
		// body's own error is the cause and names no key.
		return Info{}, limited.err
	}
	return info, err
}

// limitReader fails, instead of truncating, once more than n bytes arrive.
// It remembers the first error other than io.EOF.
type limitReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		err = fmt.Errorf("%w: upload exceeds the limit", errkind.ResourceExhausted)
	}
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return n, err
}

// Download opens length bytes (all when 0) of vpath from offset.
func (fs *FS) Download(ctx context.Context, id mounts.Caller, vpath string, offset, length int64) (io.ReadCloser, Info, error) {
	if offset < 0 || length < 0 {
		return nil, Info{}, fmt.Errorf("%w: offset and limit must not be negative", errkind.InvalidArgument)
	}
	r, isRoot, err := fs.resolve(id, vpath)
	if err != nil {
		return nil, Info{}, err
	}
	if isRoot || r.Rel == "" {
		return nil, Info{}, fmt.Errorf("%w: %q", ErrIsDir, vpath)
	}
	if length == 0 {
		length = -1
	}
	rc, a, err := fs.open(ctx, id, r, offset, length)
	if objstore.IsNotFound(err) {
		if dir, derr := fs.dirAt(ctx, id, r); derr == nil && dir {
			return nil, Info{}, fmt.Errorf("%w: %q", ErrIsDir, vpath)
		}
	}
	if err != nil {
		return nil, Info{}, storeErr(vpath, err)
	}
	return rc, fileInfo(vpath, a), nil
}
