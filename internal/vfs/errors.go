package vfs

import "github.com/skillsvc/skillsvc/internal/errkind"

// Failures callers tell apart from others of their kind. Everything else FS
// returns wraps an errkind.Kind. Messages name virtual paths only, never
// storage keys, so they are safe to return to callers.
var (
	ErrIsDir  = errkind.New(errkind.FailedPrecondition, "is a directory")
	ErrNotDir = errkind.New(errkind.FailedPrecondition, "not a directory")
	// ErrEditMismatch: old_string not found, or found more than once.
	ErrEditMismatch = errkind.New(errkind.FailedPrecondition, "edit does not apply")
)
