// Package blobs keeps immutable byte strings in object storage by the
// sha256 of their content, one space per library: skill versions and pinned
// threads' snapshots both refer to a file by its digest, so a file kept by a
// hundred versions and snapshots is stored once per library. A space is
// never shared between tenants: knowing a digest reaches nothing of another
// library's.
package blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// ErrCorrupt: a stored blob's bytes do not hash to its digest.
var ErrCorrupt = errkind.NewInternal(errkind.Unknown, "blob does not match its digest")

// Digest is the lowercase hex sha256 of a blob.
type Digest string

// Of returns the digest of data.
func Of(data []byte) Digest {
	sum := sha256.Sum256(data)
	return Digest(hex.EncodeToString(sum[:]))
}

// Valid reports whether d is 64 lowercase hex digits.
func (d Digest) Valid() bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range []byte(d) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Store holds blobs in a bucket, each under space + "sha256/" + digest.
// The caller names the space (a library's versions root, e.g.
// "alice/versions/blobs/"); Store never derives one from a tenant's input.
type Store struct {
	bucket objstore.Bucket
	// MaxBytes bounds what Get reads into memory.
	maxBytes int64
	// grace is garbage collection's (--library.gc-grace): how old a blob
	// no one refers to must be before it is deleted.
	grace time.Duration
	now   func() time.Time
}

// New returns a store over b that reads blobs of at most maxBytes, whose
// garbage collection deletes unreferenced blobs older than grace.
func New(b objstore.Bucket, maxBytes int64, grace time.Duration) *Store {
	return &Store{bucket: b, maxBytes: maxBytes, grace: grace, now: time.Now}
}

// Key is where the blob d of space is stored.
func Key(space string, d Digest) string { return space + "sha256/" + string(d) }

// Fresh reports whether a blob last written at modTime may be referred to
// anew as it is. Collection deletes an unreferenced blob by its age, so a
// blob past half the grace is written again first (Put): whatever refers
// to it next has at least half the grace before any collection would take
// it, and a collection already running sees the new write when it stats
// the blob again before deleting it.
func (s *Store) Fresh(modTime time.Time) bool { return s.now().Sub(modTime) < s.grace/2 }

// Collectable reports whether a blob last written at modTime, which no
// version or snapshot refers to as of start, is old enough to delete.
func (s *Store) Collectable(modTime, start time.Time) bool { return start.Sub(modTime) >= s.grace }

// Stored is what Put left in storage.
type Stored struct {
	Digest Digest
	ETag   string
	// Rewrote: the blob was there but not Fresh, and was written again.
	Rewrote bool
}

// Put stores data in space. A blob already stored is not written again
// (content-addressed objects never change: the conditional create losing
// means the same bytes are there) unless it is not Fresh.
func (s *Store) Put(ctx context.Context, space string, data []byte) (Stored, error) {
	d := Of(data)
	key := Key(space, d)
	for attempt := 0; ; attempt++ {
		a, err := s.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfNoneMatch: true})
		if err == nil {
			return Stored{Digest: d, ETag: a.ETag}, nil
		}
		if !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, objstore.ErrConflict) {
			return Stored{}, err
		}
		a, err = s.bucket.Stat(ctx, key)
		switch {
		case err == nil && s.Fresh(a.ModTime):
			return Stored{Digest: d, ETag: a.ETag}, nil
		case err == nil: // the same bytes, written again for a new ModTime
			a, err = s.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{})
			if err != nil {
				return Stored{}, err
			}
			return Stored{Digest: d, ETag: a.ETag, Rewrote: true}, nil
		case !objstore.IsNotFound(err) || attempt == 1:
			return Stored{}, err
		}
		// Collected between the create and the stat: create it again.
	}
}

// Has reports whether space holds the blob d.
func (s *Store) Has(ctx context.Context, space string, d Digest) (bool, error) {
	_, err := s.bucket.Stat(ctx, Key(space, d))
	switch {
	case err == nil:
		return true, nil
	case objstore.IsNotFound(err):
		return false, nil
	}
	return false, err
}

// Get reads the blob d of space and checks its bytes against d, so a
// damaged or replaced object is an error, never served as the version.
func (s *Store) Get(ctx context.Context, space string, d Digest) ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("%w: blob digest %q is not a sha256", errkind.InvalidArgument, d)
	}
	rc, a, err := s.bucket.Get(ctx, Key(space, d))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if a.Size > s.maxBytes {
		return nil, fmt.Errorf("%w: blob of %d bytes is over the %d-byte limit", errkind.ResourceExhausted, a.Size, s.maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), s.maxBytes+1))
	if err != nil {
		return nil, err
	}
	if Of(data) != d {
		return nil, fmt.Errorf("%w: %s", ErrCorrupt, Key(space, d))
	}
	return data, nil
}

// Delete removes the blob d of space; garbage collection calls it for a
// blob no version or snapshot refers to any more.
func (s *Store) Delete(ctx context.Context, space string, d Digest) error {
	return s.bucket.Delete(ctx, Key(space, d))
}
