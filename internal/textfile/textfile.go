// Package textfile reads objects as text: a size limit checked before and
// while reading, and a binary check, so every text call (Read, Edit, Grep,
// the skills catalog) refuses the same files the same way.
package textfile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// ErrBinary: a text operation on a file that is not UTF-8 text.
var ErrBinary = errkind.New(errkind.FailedPrecondition, "binary file")

// SniffBytes is how much of a file a listing reads to tell whether it is
// binary: IsBinary of that head and the file's size.
const SniffBytes = 8 << 10

// IsBinary reports whether a file of size bytes that starts with head is not
// UTF-8 text. A NUL byte is the classic binary marker; invalid UTF-8 cannot
// be returned in a proto string. A head cut mid-rune is still text.
func IsBinary(head []byte, size int64) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if int64(len(head)) < size {
		for i := 0; i < 3 && len(head) > 0; i++ {
			if utf8.Valid(head) {
				return false
			}
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// Getter is the one call Read makes. An objstore.Bucket is one; so is an
// adapter over another source of files (the VFS's trees), which then gets
// the same limits and binary check as objects read from a bucket.
type Getter interface {
	Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error)
}

var _ Getter = objstore.Bucket(nil)

// Reader loads whole text objects of at most MaxBytes.
type Reader struct {
	MaxBytes int64
	// Hint ends every refusal, telling the caller what to do instead
	// (e.g. "use Download").
	Hint string
}

// Read loads the object at key from g as text; name is what messages call
// it (a virtual path, never the key). Storage errors come back unchanged; a
// file over MaxBytes fails with errkind.ResourceExhausted before its body
// is read, a binary one with ErrBinary.
func (r Reader) Read(ctx context.Context, g Getter, key, name string) ([]byte, objstore.Attributes, error) {
	rc, a, err := g.Get(ctx, key)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	if a.Size > r.MaxBytes {
		return nil, a, fmt.Errorf("%w: %q is %d bytes, text reads load at most %d%s", errkind.ResourceExhausted, name, a.Size, r.MaxBytes, r.hint())
	}
	// The size may be stale; never read more than the limit allows.
	data, err := io.ReadAll(io.LimitReader(rc, r.MaxBytes+1))
	if err != nil {
		return nil, a, err
	}
	if int64(len(data)) > r.MaxBytes {
		return nil, a, fmt.Errorf("%w: %q exceeds %d bytes%s", errkind.ResourceExhausted, name, r.MaxBytes, r.hint())
	}
	if IsBinary(data, int64(len(data))) {
		return nil, a, fmt.Errorf("%w: %q is not UTF-8 text%s", ErrBinary, name, r.hint())
	}
	return data, a, nil
}

func (r Reader) hint() string {
	if r.Hint == "" {
		return ""
	}
	return "; " + r.Hint
}
