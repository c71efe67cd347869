// Package local stores objects as files under one directory. It is the
// embedded default backend: zero configuration, one process per directory.
//
// Every access goes through an os.Root, so no key and no symlink inside the
// directory can reach a file outside it. Writes go to a temp file that is
// renamed into place, so readers see the old or the new content, never a mix.
// ETags are content hashes, so they survive restarts and match for equal bytes.
package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// tmpDir holds in-flight writes. It is hidden from listings and unreachable
// as a key.
const tmpDir = ".skillsvc-tmp"

// Bucket is a directory-backed objstore.Bucket.
type Bucket struct {
	root  *os.Root
	locks [256]sync.Mutex // serialize conditional writes per key (by hash)
	etags *lru.Cache[string, etagEntry]
}

type etagEntry struct {
	info fs.FileInfo
	etag string
}

var _ objstore.Bucket = (*Bucket)(nil)

// New opens (creating if needed) dir as a bucket.
func New(dir string) (*Bucket, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	// Leftovers of writes interrupted by a crash are garbage.
	_ = root.RemoveAll(tmpDir)
	cache, err := lru.New[string, etagEntry](16384)
	if err != nil {
		return nil, err
	}
	return &Bucket{root: root, etags: cache}, nil
}

// Close releases the directory handle.
func (b *Bucket) Close() error { return b.root.Close() }

func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") ||
		strings.Contains(key, "\x00") || strings.Contains(key, "\\") {
		return fmt.Errorf("%w: %q", objstore.ErrInvalidKey, key)
	}
	for i, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." || len(seg) > 255 || (i == 0 && seg == tmpDir) {
			return fmt.Errorf("%w: %q", objstore.ErrInvalidKey, key)
		}
	}
	return nil
}

func mapErr(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s %q: %w", op, key, objstore.ErrNotFound)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: %w: %w", op, key, objstore.ErrPermission, err)
	}
	return fmt.Errorf("%s %q: %w", op, key, err)
}

// open opens a regular file; directories do not exist as objects.
func (b *Bucket) open(op, key string) (*os.File, fs.FileInfo, error) {
	if err := checkKey(key); err != nil {
		return nil, nil, err
	}
	f, err := b.root.Open(key)
	if err != nil {
		return nil, nil, mapErr(op, key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, mapErr(op, key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s %q: %w", op, key, objstore.ErrNotFound)
	}
	return f, fi, nil
}

// attrs returns the attributes of the open file f, hashing it unless a
// cached hash for the same file version exists. f is left at offset 0.
func (b *Bucket) attrs(key string, f *os.File, fi fs.FileInfo) (objstore.Attributes, error) {
	a := objstore.Attributes{Size: fi.Size(), ModTime: fi.ModTime()}
	if e, ok := b.etags.Get(key); ok && os.SameFile(e.info, fi) && e.info.Size() == fi.Size() && e.info.ModTime().Equal(fi.ModTime()) {
		a.ETag = e.etag
		return a, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return a, mapErr("hash", key, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return a, mapErr("hash", key, err)
	}
	a.ETag = etagOf(h)
	b.etags.Add(key, etagEntry{info: fi, etag: a.ETag})
	return a, nil
}

func etagOf(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:16]) }

// Get implements objstore.Bucket.
func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	return b.GetRange(ctx, key, 0, -1)
}

// GetRange implements objstore.Bucket.
func (b *Bucket) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	if err := ctx.Err(); err != nil {
		return nil, objstore.Attributes{}, err
	}
	if offset < 0 {
		return nil, objstore.Attributes{}, fmt.Errorf("get %q: negative offset", key)
	}
	f, fi, err := b.open("get", key)
	if err != nil {
		return nil, objstore.Attributes{}, err
	}
	a, err := b.attrs(key, f, fi)
	if err != nil {
		f.Close()
		return nil, a, err
	}
	if offset == 0 && length < 0 {
		return f, a, nil
	}
	if length < 0 || offset+length > a.Size {
		length = max(a.Size-offset, 0)
	}
	return readCloser{io.NewSectionReader(f, offset, length), f}, a, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Stat implements objstore.Bucket.
func (b *Bucket) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	if err := ctx.Err(); err != nil {
		return objstore.Attributes{}, err
	}
	f, fi, err := b.open("stat", key)
	if err != nil {
		return objstore.Attributes{}, err
	}
	defer f.Close()
	return b.attrs(key, f, fi)
}

func (b *Bucket) lock(key string) func() {
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &b.locks[h.Sum32()%uint32(len(b.locks))]
	m.Lock()
	return m.Unlock
}

// Put implements objstore.Bucket. Preconditions are checked and the rename
// done under a per-key lock, which makes them atomic within this process.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if err := checkKey(key); err != nil {
		return objstore.Attributes{}, err
	}
	// Write the temp file before taking the lock: the slow part needs no lock.
	tmp, a, err := b.writeTemp(ctx, key, r, size)
	if err != nil {
		return a, err
	}
	defer b.root.Remove(tmp) // no-op once renamed

	unlock := b.lock(key)
	defer unlock()
	if opts.IfMatch != "" || opts.IfNoneMatch {
		cur, err := b.Stat(ctx, key)
		switch {
		case objstore.IsNotFound(err):
			if opts.IfMatch != "" {
				return objstore.Attributes{}, fmt.Errorf("put %q: object missing: %w", key, objstore.ErrPrecondition)
			}
		case err != nil:
			return objstore.Attributes{}, err
		case opts.IfNoneMatch:
			return objstore.Attributes{}, fmt.Errorf("put %q: object exists: %w", key, objstore.ErrPrecondition)
		case cur.ETag != opts.IfMatch:
			return objstore.Attributes{}, fmt.Errorf("put %q: etag changed: %w", key, objstore.ErrPrecondition)
		}
	}
	// A concurrent Delete may prune the parent between MkdirAll and Rename.
	for attempt := 0; ; attempt++ {
		if dir := path.Dir(key); dir != "." {
			if err := b.root.MkdirAll(dir, 0o755); err != nil {
				return objstore.Attributes{}, fmt.Errorf("put %q: %w: a parent is an object: %v", key, objstore.ErrInvalidKey, err)
			}
		}
		err = b.root.Rename(tmp, key)
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
			continue
		}
		return objstore.Attributes{}, fmt.Errorf("put %q: %w: %v", key, objstore.ErrInvalidKey, err)
	}
	if fi, err := b.root.Stat(key); err == nil {
		a.ModTime = fi.ModTime()
		b.etags.Add(key, etagEntry{info: fi, etag: a.ETag})
	}
	return a, nil
}

func (b *Bucket) writeTemp(ctx context.Context, key string, r io.Reader, size int64) (string, objstore.Attributes, error) {
	if err := b.root.MkdirAll(tmpDir, 0o700); err != nil {
		return "", objstore.Attributes{}, mapErr("put", key, err)
	}
	var f *os.File
	var name string
	var err error
	for range 10 {
		name = fmt.Sprintf("%s/%016x", tmpDir, rand.Uint64())
		f, err = b.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", objstore.Attributes{}, mapErr("put", key, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx, r})
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("read %d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.root.Remove(name)
		if ctx.Err() != nil {
			return "", objstore.Attributes{}, ctx.Err()
		}
		return "", objstore.Attributes{}, fmt.Errorf("put %q: %w", key, err)
	}
	return name, objstore.Attributes{Size: n, ETag: etagOf(h)}, nil
}

// ctxReader stops a long copy when the caller gives up.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Delete implements objstore.Bucket and prunes directories left empty, so
// the tree mirrors the key space as S3 would.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	unlock := b.lock(key)
	defer unlock()
	fi, err := b.root.Lstat(key)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return mapErr("delete", key, err)
	}
	if fi.IsDir() {
		return nil // not an object
	}
	if err := b.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return mapErr("delete", key, err)
	}
	b.etags.Remove(key)
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if b.root.Remove(dir) != nil { // fails when not empty
			break
		}
	}
	return nil
}

// List implements objstore.Bucket. It walks the subtree that can hold the
// prefix and sorts, so order and paging match S3 (byte-wise key order). The
// token is the last entry returned.
func (b *Bucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 {
		maxKeys = objstore.DefaultMaxKeys
	}
	dir := "."
	if i := strings.LastIndex(opts.Prefix, "/"); i >= 0 {
		dir = opts.Prefix[:i]
		if err := checkKey(dir); err != nil {
			return objstore.ListPage{}, nil // no object can live there
		}
	}
	var keys []string
	err := fs.WalkDir(b.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p == tmpDir {
				return fs.SkipDir
			}
			// Prune subtrees that cannot match the prefix.
			if p != "." && !strings.HasPrefix(p+"/", opts.Prefix) && !strings.HasPrefix(opts.Prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(p, opts.Prefix) {
			keys = append(keys, p)
		}
		return nil
	})
	if err != nil {
		return objstore.ListPage{}, mapErr("list", opts.Prefix, err)
	}
	sort.Strings(keys)

	var page objstore.ListPage
	last := ""
	for _, k := range keys {
		name, isPrefix := k, false
		if opts.Delimiter != "" {
			if i := strings.Index(k[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				name, isPrefix = k[:len(opts.Prefix)+i+len(opts.Delimiter)], true
			}
		}
		if name <= opts.Token || name == last {
			continue
		}
		if len(page.Objects)+len(page.CommonPrefixes) == maxKeys {
			page.NextToken = last
			break
		}
		last = name
		if isPrefix {
			page.CommonPrefixes = append(page.CommonPrefixes, name)
			continue
		}
		a, err := b.Stat(ctx, k)
		if objstore.IsNotFound(err) {
			continue // deleted while listing
		}
		if err != nil {
			return objstore.ListPage{}, err
		}
		page.Objects = append(page.Objects, objstore.Object{Key: k, Attributes: a})
	}
	return page, nil
}
