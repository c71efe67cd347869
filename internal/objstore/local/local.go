// Package local stores objects as files under one directory. It is the
// embedded default backend: zero configuration, one process per directory.
//
// Symlinks are never followed, neither to files nor to directories, in any
// component of a key's path: a key whose path goes through a link is absent
// to every operation, and a listing skips links without descending. Each
// component is opened relative to its parent with O_NOFOLLOW, so a link
// swapped in between two calls is refused by the kernel at the moment of use.
// This keeps one tenant's folder from reaching another's, which the directory
// boundary alone (os.Root) would allow. Names that cannot be keys (a
// backslash, invalid UTF-8, a control character) are skipped by listings.
//
// Writes go to a temp file that is renamed into place, so readers see the old
// or the new content, never a mix. ETags are content hashes, so they survive
// restarts and match for equal bytes. Listings walk directories in key order
// from the continuation token and stop after one page, so paging through n
// keys costs O(n log n) in all; only a page's first directories, those on the
// token's path, are read again (names, no stat, no sort).
//
// It needs a Unix system (openat with O_NOFOLLOW).
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
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sys/unix"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// tmpDir holds in-flight writes. It is hidden from listings and unreachable
// as a key.
const tmpDir = ".skillsvc-tmp"

// maxKeyLen is PATH_MAX on Linux. It also bounds the depth of a listing's
// walk, which holds a handle per directory level.
const maxKeyLen = 4096

// Bucket is a directory-backed objstore.Bucket.
type Bucket struct {
	dir   *os.File // the bucket directory; every access starts from it
	path  string
	locks [256]sync.Mutex // serialize conditional writes per key (by hash)
	etags *lru.Cache[string, etagEntry]
	sys   sysCalls
}

// sysCalls are the system calls by which a write takes space on the disk,
// besides writing and syncing the temp file: making directories, creating
// the temp file, renaming it into place. Tests replace them to fail as a
// full disk does, which no test can make a real disk do without mounting one.
type sysCalls struct {
	mkdirat    func(dirfd int, name string, perm uint32) error
	createTemp func(dirfd int, name string) (int, error)
	renameat   func(olddirfd int, oldname string, newdirfd int, newname string) error
}

var realSysCalls = sysCalls{
	mkdirat: unix.Mkdirat,
	createTemp: func(dirfd int, name string) (int, error) {
		return openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	},
	renameat: unix.Renameat,
}

type etagEntry struct {
	v    version
	etag string
}

var _ objstore.Bucket = (*Bucket)(nil)

// New opens (creating if needed) dir as a bucket. dir itself may be a
// symlink; nothing below it is followed.
func New(dir string) (*Bucket, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	// Leftovers of writes interrupted by a crash are garbage. RemoveAll
	// removes links rather than following them.
	if root, err := os.OpenRoot(dir); err == nil {
		_ = root.RemoveAll(tmpDir)
		root.Close()
	}
	fd, err := openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("local storage: open %s: %w", dir, err)
	}
	cache, err := lru.New[string, etagEntry](16384)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Bucket{dir: os.NewFile(uintptr(fd), dir), path: dir, etags: cache, sys: realSysCalls}, nil
}

// Check implements objstore.Checker: the directory still answers (a disk
// gone read-only or away fails here first).
func (b *Bucket) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(b.rootFD(), &st); err != nil {
		return fmt.Errorf("local storage %s: %w: %w", b.path, objstore.ErrUnavailable, err)
	}
	return nil
}

var _ objstore.Checker = (*Bucket)(nil)

// Close releases the directory handle.
func (b *Bucket) Close() error { return b.dir.Close() }

// validName reports whether a file name can be one segment of a key. Names
// that fail are no objects: operations refuse them and listings skip them.
func validName(seg string) bool {
	if seg == "" || seg == "." || seg == ".." || len(seg) > 255 || !utf8.ValidString(seg) {
		return false
	}
	for _, r := range seg {
		// A backslash is a separator to Windows clients and some S3 tools;
		// the VFS accepts neither it nor control characters (NUL included)
		// in a path, and most of those cannot travel in S3's XML.
		if r == '\\' || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func checkKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("%w: %q", objstore.ErrInvalidKey, key)
	}
	for i, seg := range strings.Split(key, "/") {
		if !validName(seg) || (i == 0 && seg == tmpDir) {
			return fmt.Errorf("%w: %q", objstore.ErrInvalidKey, key)
		}
	}
	return nil
}

func mapErr(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case absent(err):
		return fmt.Errorf("%s %q: %w", op, key, objstore.ErrNotFound)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: %w: %w", op, key, objstore.ErrPermission, err)
	}
	return writeErr(op, key, err)
}

// writeErr maps the failures of a write that mean the disk has no room for
// it, so the caller hears RESOURCE_EXHAUSTED instead of an internal error,
// or takes no writes at all (FAILED_PRECONDITION). ENOSPC: no blocks or no
// inodes left; EDQUOT: a quota is used up; EFBIG: the file outgrows what the
// filesystem or RLIMIT_FSIZE allows (Go ignores SIGXFSZ, so the write fails
// instead of killing the process); EROFS: the file system is mounted
// read-only.
func writeErr(op, key string, err error) error {
	switch {
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return fmt.Errorf("%s %q: %w: %w", op, key, objstore.ErrNoSpace, err)
	case errors.Is(err, unix.EFBIG):
		return fmt.Errorf("%s %q: %w: %w", op, key, objstore.ErrTooLarge, err)
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s %q: %w: %w", op, key, objstore.ErrReadOnly, err)
	}
	return fmt.Errorf("%s %q: %w", op, key, err)
}

// unwritable reports whether writeErr maps err to a sentinel: the disk
// cannot take the write.
func unwritable(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.EFBIG) || errors.Is(err, unix.EROFS)
}

// open opens the regular file at key; directories do not exist as objects.
func (b *Bucket) open(op, key string) (*os.File, version, error) {
	if err := checkKey(key); err != nil {
		return nil, version{}, err
	}
	dir, name := splitKey(key)
	dirfd, err := b.openDir(dir, false, 0)
	if err != nil {
		return nil, version{}, mapErr(op, key, err)
	}
	defer unix.Close(dirfd)
	f, v, err := openFile(dirfd, name, key)
	if err != nil {
		return nil, version{}, mapErr(op, key, err)
	}
	return f, v, nil
}

// cachedAttrs returns the attributes of version v of key if its hash is
// cached.
func (b *Bucket) cachedAttrs(key string, v version) (objstore.Attributes, bool) {
	e, ok := b.etags.Get(key)
	if !ok || e.v != v {
		return objstore.Attributes{}, false
	}
	return objstore.Attributes{Size: v.size, ModTime: v.modTime(), ETag: e.etag, Mode: v.mode()}, true
}

// attrs returns the attributes of the open file f, version v, hashing it
// unless a cached hash for the same version exists. f is left at offset 0.
func (b *Bucket) attrs(key string, f *os.File, v version) (objstore.Attributes, error) {
	if a, ok := b.cachedAttrs(key, v); ok {
		return a, nil
	}
	a := objstore.Attributes{Size: v.size, ModTime: v.modTime(), Mode: v.mode()}
	h := sha256.New()
	buf := copyBufs.Get().(*[]byte)
	// The struct hides (*os.File).WriteTo, which would allocate its own buffer.
	_, err := io.CopyBuffer(h, struct{ io.Reader }{f}, *buf)
	copyBufs.Put(buf)
	if err != nil {
		return a, mapErr("hash", key, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return a, mapErr("hash", key, err)
	}
	a.ETag = etagOf(h)
	b.etags.Add(key, etagEntry{v: v, etag: a.ETag})
	return a, nil
}

// copyBufs recycles the buffers of hashing, which a listing does per object
// whose hash is not cached.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

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
	f, v, err := b.open("get", key)
	if err != nil {
		return nil, objstore.Attributes{}, err
	}
	a, err := b.attrs(key, f, v)
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
	f, v, err := b.open("stat", key)
	if err != nil {
		return objstore.Attributes{}, err
	}
	defer f.Close()
	return b.attrs(key, f, v)
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
//
// A key whose parent path holds a symlink is refused with ErrInvalidKey
// rather than healed by replacing the link with a directory: replacing would
// delete something the service did not create, in a remove-then-create
// sequence that a racing writer could exploit, and the link may be an
// operator's. A link as the key itself is absent like any other, and the
// rename replaces the link, never its target.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if err := checkKey(key); err != nil {
		return objstore.Attributes{}, err
	}
	// Write the temp file before taking the lock: the slow part needs no lock.
	tmp, err := b.writeTemp(ctx, key, r, size, opts.Mode)
	if err != nil {
		return objstore.Attributes{}, err
	}
	defer tmp.remove() // no-op once renamed

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
	dir, name := splitKey(key)
	// A concurrent Delete may prune the parent between its creation and the
	// rename; then both are tried again.
	for attempt := 0; ; attempt++ {
		dirfd, err := b.openDir(dir, true, 0o755)
		if err == nil {
			// A new directory entry may need a block the disk lacks.
			err = b.sys.renameat(tmp.dirfd, tmp.name, dirfd, name)
			unix.Close(dirfd)
		}
		switch {
		case err == nil:
			b.etags.Add(key, etagEntry{v: tmp.v, etag: tmp.attrs.ETag})
			return tmp.attrs, nil
		case errors.Is(err, unix.ENOENT) && attempt < 3:
			continue
		case errors.Is(err, fs.ErrPermission), unwritable(err):
			return objstore.Attributes{}, mapErr("put", key, err)
		}
		// ENOTDIR or ELOOP: a parent is an object or a link; EISDIR,
		// EEXIST, ENOTEMPTY: the key is a directory.
		return objstore.Attributes{}, fmt.Errorf("put %q: %w: a parent is an object or a link, or the key is a directory: %v", key, objstore.ErrInvalidKey, err)
	}
}

// tempFile is a fully written, synced temp file waiting to be renamed.
type tempFile struct {
	dirfd int // the temp directory
	name  string
	v     version // the rename keeps the inode and its times
	attrs objstore.Attributes
}

// remove deletes the temp file if it was not renamed, and closes its
// directory.
func (t *tempFile) remove() {
	_ = unix.Unlinkat(t.dirfd, t.name, 0)
	unix.Close(t.dirfd)
}

// writeTemp writes the temp file; a mode not 0 is set as its permission
// bits, which the rename keeps: the file's own mode is what it records.
func (b *Bucket) writeTemp(ctx context.Context, key string, r io.Reader, size int64, mode fs.FileMode) (*tempFile, error) {
	dirfd, err := b.openDir(tmpDir, true, 0o700)
	if err != nil {
		return nil, mapErr("put", key, err)
	}
	t := &tempFile{dirfd: dirfd}
	fd := -1
	for range 10 {
		t.name = fmt.Sprintf("%016x", rand.Uint64())
		fd, err = b.sys.createTemp(dirfd, t.name)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		unix.Close(dirfd)
		return nil, mapErr("put", key, err)
	}
	f := os.NewFile(uintptr(fd), tmpDir+"/"+t.name)
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), objstore.ContextReader(ctx, r))
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("read %d bytes, want %d", n, size)
	}
	if err == nil && mode != 0 {
		err = unix.Fchmod(fd, uint32(mode.Perm()))
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		t.v = versionOf(&st)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.remove()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A full disk may show at the write, or only at the sync or close
		// (delayed allocation, NFS).
		return nil, writeErr("put", key, err)
	}
	t.attrs = objstore.Attributes{Size: n, ETag: etagOf(h), ModTime: t.v.modTime(), Mode: t.v.mode()}
	return t, nil
}

// Delete implements objstore.Bucket and prunes directories left empty, so
// the tree mirrors the key space as S3 would. A link, at the key or on its
// path, is absent: Delete leaves it and its target alone.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	unlock := b.lock(key)
	defer unlock()
	// dirs[i] is the directory holding comps[i]; dirs[0] the bucket's.
	comps := strings.Split(key, "/")
	dirs := make([]int, 0, len(comps))
	defer func() {
		for _, fd := range dirs {
			unix.Close(fd)
		}
	}()
	fd, err := openat(b.rootFD(), ".", dirFlags, 0)
	for i := 0; ; i++ {
		if err != nil {
			if absent(err) {
				return nil
			}
			return mapErr("delete", key, err)
		}
		dirs = append(dirs, fd)
		if i == len(comps)-1 {
			break
		}
		fd, err = openat(fd, comps[i], dirFlags, 0)
	}
	parent, name := dirs[len(dirs)-1], comps[len(comps)-1]
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if absent(err) {
			return nil
		}
		return mapErr("delete", key, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // a directory or a link: not an object
	}
	// Should a link replace the file after the check, unlinkat removes the
	// link itself: it never follows one.
	if err := unix.Unlinkat(parent, name, 0); err != nil && !absent(err) && !errors.Is(err, unix.EISDIR) {
		return mapErr("delete", key, err)
	}
	b.etags.Remove(key)
	for i := len(dirs) - 1; i > 0; i-- {
		if unix.Unlinkat(dirs[i-1], comps[i-1], unix.AT_REMOVEDIR) != nil { // fails when not empty
			break
		}
	}
	return nil
}
