// Package objstore is the small object-storage interface that the rest of
// skillsvc talks to, with its sentinel errors. Backends live in sub-packages
// (s3 for AWS S3 and S3-compatible servers, local for a directory on disk) and
// are proven by one acceptance suite in objstoretest.
package objstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Sentinel errors. Backends wrap their native errors so that callers can
// match with errors.Is without knowing which backend they talk to. Each has
// its errkind, internal because backends wrap them with object keys: the
// layer that knows the virtual path restates what a caller should see.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errkind.NewInternal(errkind.NotFound, "object not found")
	// ErrPrecondition: an If-Match or If-None-Match condition did not hold.
	ErrPrecondition = errkind.NewInternal(errkind.FailedPrecondition, "precondition failed")
	// ErrConflict: a concurrent conditional write on the same key won; retry.
	ErrConflict = errkind.NewInternal(errkind.Aborted, "conflicting concurrent write")
	// ErrPermission: the backend refused access to the key.
	ErrPermission = errkind.NewInternal(errkind.PermissionDenied, "permission denied by object store")
	// ErrInvalidKey: the key cannot be stored by this backend.
	ErrInvalidKey = errkind.NewInternal(errkind.InvalidArgument, "invalid object key")
	// ErrUnavailable: the store cannot be reached or answered with a server
	// error or throttling after the client's own retries; try again later.
	ErrUnavailable = errkind.NewInternal(errkind.Unavailable, "object store unavailable")
	// ErrNoSpace: the store has no room for the write (disk full, quota
	// used up). Unlike ErrUnavailable it lasts until someone frees space,
	// so it is no reason to retry soon; its message says what happened
	// without naming the key or the disk.
	ErrNoSpace = errkind.NewInternalWithMessage(errkind.ResourceExhausted, "object store out of space", "storage is full")
	// ErrReadOnly: the store takes no writes at all (a read-only file
	// system under the local backend). Like ErrNoSpace it lasts until an
	// operator changes the store, so it is no reason to retry.
	ErrReadOnly = errkind.NewInternalWithMessage(errkind.FailedPrecondition, "object store is read-only", "storage is read-only")
	// ErrTooLarge: the object exceeds the largest the store can hold, even
	// with space free.
	ErrTooLarge = errkind.NewInternalWithMessage(errkind.ResourceExhausted, "object too large for the object store", "file is too large for storage")
)

// Checker is implemented by backends that can tell cheaply whether they
// answer at all (a HEAD of the bucket, a stat of the directory); readiness
// probes call it.
type Checker interface {
	Check(ctx context.Context) error
}

// Attributes describe a stored object.
type Attributes struct {
	Size    int64
	ETag    string // opaque, without surrounding quotes
	ModTime time.Time
	// Mode is the file's recorded permission bits (fs.FileMode.Perm), 0
	// when none is recorded. A read (Get, GetRange, Stat) returns it; a
	// listing does not: S3 returns no object metadata in a LIST. The S3
	// backend keeps it in the object metadata ModeMetadataKey, the local
	// backend as the file's own mode.
	Mode fs.FileMode
}

// Object is one entry of a listing.
type Object struct {
	Key string
	Attributes
}

// PutOptions carries the preconditions of a write. At most one is set.
type PutOptions struct {
	// IfMatch makes the write succeed only while the current ETag equals it.
	IfMatch string
	// IfNoneMatch makes the write succeed only when the key does not exist.
	IfNoneMatch bool
	// Mode, when not 0, is the permission bits to record with the object
	// (see Attributes.Mode).
	Mode fs.FileMode
}

// ListOptions selects one page of a listing.
type ListOptions struct {
	Prefix string
	// Delimiter, when set (always "/" in skillsvc), groups keys below the
	// next delimiter into CommonPrefixes, like a directory listing.
	Delimiter string
	// Token continues a previous listing; it is opaque and backend-specific.
	Token string
	// StartAfter, without a Token, lists only the keys after it (S3's
	// StartAfter): a caller resumes from a key of its own.
	StartAfter string
	// MaxKeys bounds objects plus common prefixes in the page; 0 means 1000.
	MaxKeys int
}

// ListPage is one page of a listing, in lexicographic key order.
type ListPage struct {
	Objects        []Object
	CommonPrefixes []string
	// NextToken is empty when the listing is complete.
	NextToken string
}

// Bucket is the storage interface. Every method takes ctx first and returns
// errors matching the sentinels above.
type Bucket interface {
	// Get opens the whole object.
	Get(ctx context.Context, key string) (io.ReadCloser, Attributes, error)
	// GetRange opens length bytes from offset; length < 0 reads to the end.
	// A range starting at or past the end yields an empty body, not an error.
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, Attributes, error)
	// Stat returns the attributes of an object.
	Stat(ctx context.Context, key string) (Attributes, error)
	// Put atomically replaces the object with size bytes read from r.
	// Readers see either the old or the new content, never a mix.
	Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) (Attributes, error)
	// Delete removes the object. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns one page of keys under opts.Prefix.
	List(ctx context.Context, opts ListOptions) (ListPage, error)
}

// MaxKeyLen is the longest key S3 stores, in bytes; a writer that must
// not fail part-way checks its keys against it before the first write.
const MaxKeyLen = 1024

// DefaultMaxKeys is the page size used when ListOptions.MaxKeys is 0.
const DefaultMaxKeys = 1000

// IsNotFound reports whether err means the object does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Walk calls fn for every object under prefix (no delimiter), following
// pages until the listing ends, fn returns an error or ctx is done.
func Walk(ctx context.Context, b Bucket, prefix string, fn func(Object) error) error {
	opts := ListOptions{Prefix: prefix}
	for {
		page, err := b.List(ctx, opts)
		if err != nil {
			return err
		}
		for _, o := range page.Objects {
			// fn may be costly (a pattern match): stop with the caller.
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(o); err != nil {
				return err
			}
		}
		if page.NextToken == "" {
			return nil
		}
		opts.Token = page.NextToken
	}
}

// ContextReader reads from r until ctx is done, so a long copy of a request
// body stops when the caller gives up.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

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
