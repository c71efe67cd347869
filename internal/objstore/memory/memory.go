// Package memory is an objstore.Bucket held in a map, with S3 semantics: a
// key may also be the prefix of other keys ("a" and "a/b" coexist), listings
// are in byte-wise key order, ETags are content hashes (hex MD5, as S3 gives
// for single-part uploads). It exists for fast unit tests, including those
// of the embedded default, and passes the same acceptance suite as the real
// backends; passing it proves nothing about S3 itself.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// maxKeyLen is S3's limit on key length in bytes.
const maxKeyLen = 1024

// Bucket is an in-memory objstore.Bucket, safe for concurrent use. The zero
// value is not usable; call New.
type Bucket struct {
	mu      sync.RWMutex
	objects map[string]object
	keys    []string // sorted, so a listing page costs a search, not a sort
}

// object is never modified once stored, so its data can be read without the
// lock after lookup.
type object struct {
	data  []byte
	attrs objstore.Attributes
}

var _ objstore.Bucket = (*Bucket)(nil)

// New returns an empty bucket.
func New() *Bucket {
	return &Bucket{objects: map[string]object{}}
}

func checkKey(key string) error {
	if key == "" || len(key) > maxKeyLen || !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q", objstore.ErrInvalidKey, key)
	}
	return nil
}

// lookup checks ctx and key and returns the stored object.
func (b *Bucket) lookup(ctx context.Context, op, key string) (object, error) {
	if err := ctx.Err(); err != nil {
		return object{}, fmt.Errorf("%s %q: %w", op, key, err)
	}
	if err := checkKey(key); err != nil {
		return object{}, err
	}
	b.mu.RLock()
	o, ok := b.objects[key]
	b.mu.RUnlock()
	if !ok {
		return object{}, fmt.Errorf("%s %q: %w", op, key, objstore.ErrNotFound)
	}
	return o, nil
}

// Get implements objstore.Bucket.
func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	return b.GetRange(ctx, key, 0, -1)
}

// GetRange implements objstore.Bucket.
func (b *Bucket) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	if err := ctx.Err(); err != nil {
		return nil, objstore.Attributes{}, fmt.Errorf("get %q: %w", key, err)
	}
	if offset < 0 {
		return nil, objstore.Attributes{}, fmt.Errorf("get %q: negative offset %d", key, offset)
	}
	o, err := b.lookup(ctx, "get", key)
	if err != nil {
		return nil, objstore.Attributes{}, err
	}
	size := int64(len(o.data))
	start := min(offset, size)
	end := size
	if length >= 0 && length < size-start {
		end = start + length
	}
	return io.NopCloser(bytes.NewReader(o.data[start:end])), o.attrs, nil
}

// Stat implements objstore.Bucket.
func (b *Bucket) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	o, err := b.lookup(ctx, "stat", key)
	return o.attrs, err
}

// Put implements objstore.Bucket. The body is read before the lock is taken,
// so a slow writer holds up no one; the precondition check and the store
// happen under the lock, which makes conditional writes atomic.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if err := ctx.Err(); err != nil {
		return objstore.Attributes{}, fmt.Errorf("put %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return objstore.Attributes{}, err
	}
	if size >= 0 && size < math.MaxInt64 {
		r = io.LimitReader(r, size+1) // one more byte tells a long body apart
	}
	data, err := io.ReadAll(objstore.ContextReader(ctx, r))
	if err != nil {
		if ctx.Err() != nil {
			return objstore.Attributes{}, fmt.Errorf("put %q: %w", key, ctx.Err())
		}
		return objstore.Attributes{}, fmt.Errorf("put %q: %w", key, err)
	}
	if size >= 0 && int64(len(data)) > size {
		return objstore.Attributes{}, fmt.Errorf("put %q: body longer than %d bytes", key, size)
	}
	if size >= 0 && int64(len(data)) < size {
		return objstore.Attributes{}, fmt.Errorf("put %q: body has %d bytes, want %d", key, len(data), size)
	}
	sum := md5.Sum(data)
	attrs := objstore.Attributes{Size: int64(len(data)), ETag: hex.EncodeToString(sum[:]), Mode: opts.Mode.Perm()}

	b.mu.Lock()
	defer b.mu.Unlock()
	cur, exists := b.objects[key]
	switch {
	case opts.IfNoneMatch && exists:
		return objstore.Attributes{}, fmt.Errorf("put %q: object exists: %w", key, objstore.ErrPrecondition)
	case opts.IfMatch != "" && !exists:
		return objstore.Attributes{}, fmt.Errorf("put %q: object missing: %w", key, objstore.ErrPrecondition)
	case opts.IfMatch != "" && cur.attrs.ETag != opts.IfMatch:
		return objstore.Attributes{}, fmt.Errorf("put %q: etag changed: %w", key, objstore.ErrPrecondition)
	}
	attrs.ModTime = time.Now().UTC()
	b.objects[key] = object{data: data, attrs: attrs}
	if !exists {
		i, _ := slices.BinarySearch(b.keys, key)
		b.keys = slices.Insert(b.keys, i, key)
	}
	return attrs, nil
}

// Delete implements objstore.Bucket.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objects[key]; !ok {
		return nil
	}
	delete(b.objects, key)
	if i, ok := slices.BinarySearch(b.keys, key); ok {
		b.keys = slices.Delete(b.keys, i, i+1)
	}
	return nil
}

// List implements objstore.Bucket. The token is the last key or common
// prefix returned; the next page starts after it.
func (b *Bucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	if err := ctx.Err(); err != nil {
		return objstore.ListPage{}, fmt.Errorf("list %q: %w", opts.Prefix, err)
	}
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 {
		maxKeys = objstore.DefaultMaxKeys
	}
	b.mu.RLock()
	defer b.mu.RUnlock()

	var page objstore.ListPage
	last := ""
	opts.Token = cmp.Or(opts.Token, opts.StartAfter) // a token is the last key listed
	i := sort.SearchStrings(b.keys, max(opts.Prefix, opts.Token))
	for i < len(b.keys) {
		k := b.keys[i]
		if !strings.HasPrefix(k, opts.Prefix) {
			break
		}
		name, isPrefix := k, false
		if opts.Delimiter != "" {
			if j := strings.Index(k[len(opts.Prefix):], opts.Delimiter); j >= 0 {
				name, isPrefix = k[:len(opts.Prefix)+j+len(opts.Delimiter)], true
			}
		}
		if name <= opts.Token {
			i = b.after(i, name, isPrefix)
			continue
		}
		if len(page.Objects)+len(page.CommonPrefixes) == maxKeys {
			page.NextToken = last
			break
		}
		last = name
		if isPrefix {
			page.CommonPrefixes = append(page.CommonPrefixes, name)
		} else {
			a := b.objects[k].attrs
			a.Mode = 0 // as S3, whose listings carry no metadata
			page.Objects = append(page.Objects, objstore.Object{Key: k, Attributes: a})
		}
		i = b.after(i, name, isPrefix)
	}
	return page, nil
}

// after returns the index of the first key past entry i; for a common
// prefix that skips every key it groups, so a page of prefixes costs one
// search each, not one step per key below them.
func (b *Bucket) after(i int, name string, isPrefix bool) int {
	if !isPrefix {
		return i + 1
	}
	rest := b.keys[i:]
	return i + sort.Search(len(rest), func(j int) bool { return !strings.HasPrefix(rest[j], name) })
}
