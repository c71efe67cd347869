package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// ErrUnsafeStore: the store ignores the conditions of conditional writes,
// on which edits, labels, settings and garbage collection rely; writing
// to it would lose updates silently. Refused writes say so without naming
// a key.
var ErrUnsafeStore = errkind.NewInternalWithMessage(errkind.FailedPrecondition, "object store ignores conditional writes", "storage is read-only: it ignores conditional writes")

// UnsafeError names what CheckWriteSafety found the store ignoring.
type UnsafeError struct {
	Ignored []string // e.g. "If-None-Match: * (a second create succeeded)"
}

func (e *UnsafeError) Error() string {
	return "object store ignores conditional writes: " + strings.Join(e.Ignored, "; ")
}

// Unwrap makes an UnsafeError match ErrUnsafeStore.
func (e *UnsafeError) Unwrap() error { return ErrUnsafeStore }

// WriteSafetyCreates is how many concurrent creates CheckWriteSafety races;
// with the other steps (two deletes, a create, a stat and a stale write)
// a check costs WriteSafetyCreates+5 requests.
const WriteSafetyCreates = 3

// CheckWriteSafety proves on key (which must be this process's alone, and
// outside every mount) that b honours If-None-Match: * (a second create
// fails with ErrPrecondition), If-Match with a wrong ETag (ErrPrecondition)
// and concurrent creates (exactly one of WriteSafetyCreates wins). It
// deletes key before and after, so it leaves nothing behind. A store that
// ignores a condition gives an *UnsafeError; a store that fails otherwise
// (unreachable, full, read-only credentials) gives that error, which proves
// nothing either way.
func CheckWriteSafety(ctx context.Context, b Bucket, key string) (err error) {
	if err := b.Delete(ctx, key); err != nil {
		return err
	}
	defer func() {
		// The key goes whatever the outcome; a failed delete is reported
		// only when nothing worse was.
		if derr := b.Delete(context.WithoutCancel(ctx), key); err == nil {
			err = derr
		}
	}()
	create := func(body string) (Attributes, error) {
		return b.Put(ctx, key, strings.NewReader(body), int64(len(body)), PutOptions{IfNoneMatch: true})
	}
	var (
		won    atomic.Int32
		mu     sync.Mutex
		failed error // the first failure that is not a lost race
		wg     sync.WaitGroup
	)
	for i := range WriteSafetyCreates {
		wg.Go(func() {
			_, err := create(fmt.Sprintf("write-safety probe %d", i))
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ErrPrecondition), errors.Is(err, ErrConflict):
			default:
				mu.Lock()
				failed = cmpOr(failed, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	var ignored []string
	switch n := won.Load(); {
	case n > 1:
		ignored = append(ignored, fmt.Sprintf("concurrent creates (%d of %d won)", n, WriteSafetyCreates))
	case n == 0:
		// Every create lost to a conflict: a store that holds conditions
		// can answer so under a race; nothing to conclude, but no
		// object to go on with either.
		return fmt.Errorf("write-safety probe: none of %d concurrent creates won: %w", WriteSafetyCreates, ErrConflict)
	}
	switch _, err := create("write-safety probe again"); {
	case err == nil:
		ignored = append(ignored, "If-None-Match: * (a second create succeeded)")
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrConflict):
	default:
		return err
	}
	at, err := b.Stat(ctx, key)
	if err != nil {
		return err
	}
	wrong := "0" + at.ETag // never the current ETag
	body := "write-safety probe stale"
	switch _, err := b.Put(ctx, key, strings.NewReader(body), int64(len(body)), PutOptions{IfMatch: wrong}); {
	case err == nil:
		ignored = append(ignored, "If-Match (a write with a wrong ETag succeeded)")
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrConflict):
	default:
		return err
	}
	if len(ignored) > 0 {
		return &UnsafeError{Ignored: ignored}
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Guarded wraps a bucket whose writes can be refused: while ReadOnly holds a
// reason, every Put and Delete fails with it (matching ErrUnsafeStore) and
// reads pass through.
type Guarded struct {
	Bucket
	reason atomic.Pointer[error]
}

// NewGuarded wraps b, taking writes.
func NewGuarded(b Bucket) *Guarded { return &Guarded{Bucket: b} }

// SetReadOnly refuses writes with reason from now on; nil takes them again.
func (g *Guarded) SetReadOnly(reason error) {
	if reason == nil {
		g.reason.Store(nil)
		return
	}
	g.reason.Store(&reason)
}

// ReadOnly returns why writes are refused, or nil.
func (g *Guarded) ReadOnly() error {
	if r := g.reason.Load(); r != nil {
		return *r
	}
	return nil
}

// Put refuses the write while read-only.
func (g *Guarded) Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) (Attributes, error) {
	if err := g.ReadOnly(); err != nil {
		return Attributes{}, fmt.Errorf("put %q: %w", key, err)
	}
	return g.Bucket.Put(ctx, key, r, size, opts)
}

// Delete refuses the delete while read-only.
func (g *Guarded) Delete(ctx context.Context, key string) error {
	if err := g.ReadOnly(); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	return g.Bucket.Delete(ctx, key)
}
