package local

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// errPageFull stops the walk when the page is complete and another entry
// exists, which is when a listing has a next page.
var errPageFull = errors.New("page full")

// List implements objstore.Bucket. The token is the last entry returned,
// so StartAfter is one.
//
// Keys come out in S3's byte-wise order without collecting and sorting the
// subtree: a directory's entries are visited in the order of their key
// suffixes, a directory's being its name plus "/", so "a-b" < "a/" < "a0"
// (per-name order would put the directory "a" first). Entries wholly at or
// before the token are dropped unread, and the walk stops after one page, so
// each page reads only the directories on the token's path and the ones it
// returns from. A directory that maps to a common prefix is not descended
// into beyond finding one object.
func (b *Bucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	if err := ctx.Err(); err != nil {
		return objstore.ListPage{}, err
	}
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 {
		maxKeys = objstore.DefaultMaxKeys
	}
	dir, dirKey := ".", ""
	if i := strings.LastIndexByte(opts.Prefix, '/'); i >= 0 {
		dir, dirKey = opts.Prefix[:i], opts.Prefix[:i+1]
		if checkKey(dir) != nil {
			return objstore.ListPage{}, nil // no object can live there
		}
	}
	fd, err := b.openDir(dir, false, 0)
	if absent(err) {
		return objstore.ListPage{}, nil
	}
	if err != nil {
		return objstore.ListPage{}, mapErr("list", opts.Prefix, err)
	}
	l := &lister{b: b, ctx: ctx, prefix: opts.Prefix, delim: opts.Delimiter, token: cmp.Or(opts.Token, opts.StartAfter), max: maxKeys}
	err = l.walk(fd, dirKey)
	switch {
	case errors.Is(err, errPageFull):
		l.page.NextToken = l.last
	case ctx.Err() != nil:
		return objstore.ListPage{}, ctx.Err()
	case err != nil:
		return objstore.ListPage{}, mapErr("list", opts.Prefix, err)
	}
	return l.page, nil
}

// lister builds one page.
type lister struct {
	b                    *Bucket
	ctx                  context.Context
	prefix, delim, token string
	max                  int
	page                 objstore.ListPage
	last                 string // the last entry added
}

// walk adds the entries below the directory fd, whose keys start with
// dirKey, in key order. It closes fd.
func (l *lister) walk(fd int, dirKey string) error {
	// The name matters only on a file system without d_type, where ReadDir
	// lstats each entry by path: the type is then a hint that the
	// O_NOFOLLOW opens below check again.
	d := os.NewFile(uintptr(fd), filepath.Join(l.b.path, dirKey))
	defer d.Close()
	tRest, seek := "", false
	switch {
	case strings.HasPrefix(l.token, dirKey):
		tRest, seek = l.token[len(dirKey):], true
	case dirKey < l.token:
		return nil // every key here is before the token
	}
	pRest := ""
	if len(l.prefix) > len(dirKey) {
		pRest = l.prefix[len(dirKey):]
	}
	des, err := d.ReadDir(-1)
	if absent(err) {
		return nil // removed since it was opened: pruned by a Delete
	}
	if err != nil {
		return err
	}
	h := make(entries, 0, len(des))
	for _, de := range des {
		name, isDir := de.Name(), de.IsDir()
		if (!isDir && !de.Type().IsRegular()) || !validName(name) || (dirKey == "" && name == tmpDir) {
			continue // links and devices are no objects, nor are bad names
		}
		e := entry{name: name, suffix: name, dir: isDir}
		if isDir {
			e.suffix += "/"
		}
		// A directory is kept while it may hold keys in range: keys below
		// it all start with its suffix.
		if pRest != "" && !strings.HasPrefix(e.suffix, pRest) && !(isDir && strings.HasPrefix(pRest, e.suffix)) {
			continue
		}
		if seek && e.suffix <= tRest && !(isDir && strings.HasPrefix(tRest, e.suffix)) {
			continue
		}
		h = append(h, e)
	}
	// A heap, not a sort: a page pops only the entries it needs, so a large
	// directory costs O(m + page·log m) per page, not O(m log m).
	heap.Init(&h)
	for h.Len() > 0 {
		if err := l.ctx.Err(); err != nil {
			return err
		}
		e := heap.Pop(&h).(entry)
		key := dirKey + e.suffix
		if !e.dir {
			if err := l.file(fd, e.name, key); err != nil {
				return err
			}
			continue
		}
		if cp, ok := l.commonPrefix(key); ok {
			if err := l.dirPrefix(fd, e.name, key, cp); err != nil {
				return err
			}
			continue
		}
		if len(key) >= maxKeyLen {
			continue // every key below would be too long
		}
		sub, err := openat(fd, e.name, dirFlags, 0)
		if absent(err) {
			continue // removed, or a link swapped in, since it was read
		}
		if err != nil {
			return err
		}
		if err := l.walk(sub, key); err != nil {
			return err
		}
	}
	return nil
}

// commonPrefix returns the common prefix that key falls under, if any. For a
// directory's key (ending in "/") every key below falls under the same one.
func (l *lister) commonPrefix(key string) (string, bool) {
	if l.delim == "" || !strings.HasPrefix(key, l.prefix) {
		return "", false
	}
	i := strings.Index(key[len(l.prefix):], l.delim)
	if i < 0 {
		return "", false
	}
	return key[:len(l.prefix)+i+len(l.delim)], true
}

func (l *lister) full() bool {
	return len(l.page.Objects)+len(l.page.CommonPrefixes) >= l.max
}

// file adds the regular file name in dirfd, or its common prefix.
func (l *lister) file(dirfd int, name, key string) error {
	out, isPrefix := l.commonPrefix(key)
	if !isPrefix {
		out = key
	}
	if out <= l.token || out == l.last || len(key) > maxKeyLen {
		return nil
	}
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = errNotObject
	}
	if absent(err) {
		return nil // removed, or replaced by a link, since it was read
	}
	if err != nil {
		return err
	}
	if l.full() {
		return errPageFull
	}
	if isPrefix {
		l.last = out
		l.page.CommonPrefixes = append(l.page.CommonPrefixes, out)
		return nil
	}
	// A cached hash needs no open; otherwise the file is opened, without
	// following a link, and hashed.
	a, ok := l.b.cachedAttrs(key, versionOf(&st))
	if !ok {
		f, v, err := openFile(dirfd, name, key)
		if absent(err) {
			return nil
		}
		if err != nil {
			return err
		}
		a, err = l.b.attrs(key, f, v)
		f.Close()
		if err != nil {
			return err
		}
	}
	l.last = out
	a.Mode = 0 // as S3, whose listings carry no metadata
	l.page.Objects = append(l.page.Objects, objstore.Object{Key: key, Attributes: a})
	return nil
}

// dirPrefix adds cp, the common prefix of the directory name in dirfd, if
// the directory holds an object: links and bad names alone make none.
func (l *lister) dirPrefix(dirfd int, name, key, cp string) error {
	if cp <= l.token || cp == l.last {
		return nil
	}
	found, err := l.hasObject(dirfd, name, key)
	if err != nil || !found {
		return err
	}
	if l.full() {
		return errPageFull
	}
	l.last = cp
	l.page.CommonPrefixes = append(l.page.CommonPrefixes, cp)
	return nil
}

// hasObject reports whether the directory name in dirfd, whose keys start
// with key, holds an object at any depth. It stops at the first.
func (l *lister) hasObject(dirfd int, name, key string) (bool, error) {
	fd, err := openat(dirfd, name, dirFlags, 0)
	if absent(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	d := os.NewFile(uintptr(fd), filepath.Join(l.b.path, key))
	defer d.Close()
	for {
		des, err := d.ReadDir(256)
		for _, de := range des {
			if err := l.ctx.Err(); err != nil {
				return false, err
			}
			n := de.Name()
			if !validName(n) {
				continue
			}
			switch {
			case de.Type().IsRegular() && len(key)+len(n) <= maxKeyLen:
				var st unix.Stat_t
				if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
					return true, nil
				}
			case de.IsDir() && len(key)+len(n)+1 < maxKeyLen:
				if found, err := l.hasObject(fd, n, key+n+"/"); err != nil || found {
					return found, err
				}
			}
		}
		if err == io.EOF || absent(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// entry is a directory entry that may hold keys of the listing.
type entry struct {
	name   string
	suffix string // name, plus "/" for a directory: its place in key order
	dir    bool
}

// entries is a min-heap by key suffix.
type entries []entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].suffix < h[j].suffix }
func (h entries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entries) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
