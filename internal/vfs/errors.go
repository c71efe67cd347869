package vfs

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Errors returned by FS. Messages name virtual paths only, never storage
// keys, so they are safe to return to callers.
var (
	ErrInvalidArgument = errors.New("invalid argument")
	ErrNotFound        = errors.New("not found")
	ErrExists          = errors.New("already exists")
	// ErrPrecondition: the file changed since the etag the caller holds.
	ErrPrecondition = errors.New("precondition failed")
	ErrReadOnly     = errors.New("read-only")
	ErrIsDir        = errors.New("is a directory")
	ErrNotDir       = errors.New("not a directory")
	// ErrBinary: a text operation on a file that is not UTF-8 text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge: a configured size limit was hit.
	ErrTooLarge = errors.New("too large")
	// ErrOutOfRange: a read offset past the end of the file.
	ErrOutOfRange = errors.New("out of range")
	// ErrEditMismatch: old_string not found, or found more than once.
	ErrEditMismatch = errors.New("edit does not apply")
	// ErrConflict: concurrent writers kept winning; the caller may retry.
	ErrConflict = errors.New("concurrent modification")
)

// Safe wraps a function run in a background goroutine so that a panic there
// becomes an error (answered Internal) instead of killing the process; the
// gRPC recovery interceptor only sees the handler's own goroutine.
func Safe(fn func() error) func() error {
	return func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		return fn()
	}
}
