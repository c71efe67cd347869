// Package errkind is skillsvc's one vocabulary of caller-facing failures,
// modelled on go-cloud's gcerrors. Every layer wraps a Kind into its errors
// ("%w: %q", errkind.NotFound, path) or defines sentinels of a kind with New
// where callers must tell two failures of one kind apart; the gRPC edge maps
// kinds to status codes with one table.
package errkind

import (
	"errors"
	"time"
)

// Kind is a class of failure a caller can act on. A Kind is itself an error,
// so errors.Is(err, errkind.NotFound) asks for the kind.
type Kind int

// The kinds, named after the gRPC codes they map to.
const (
	// Unknown: no kind; the failure is internal.
	Unknown Kind = iota
	// InvalidArgument: the request is malformed (path, ID, pattern, field).
	InvalidArgument
	// Unauthenticated: the call carries no usable identity.
	Unauthenticated
	// NotFound: the file, directory, mount or skill does not exist.
	NotFound
	// AlreadyExists: a create-only write found the file.
	AlreadyExists
	// PermissionDenied: the caller may not do this (a read-only mount).
	PermissionDenied
	// FailedPrecondition: the state does not allow it (stale version,
	// directory/file mix-up, binary file for a text call, invalid skill).
	FailedPrecondition
	// ResourceExhausted: a size or count limit was hit.
	ResourceExhausted
	// OutOfRange: a read offset past the end.
	OutOfRange
	// Aborted: concurrent writers kept winning; the caller may retry.
	Aborted
	// Unavailable: a dependency (object storage) cannot be reached right
	// now; the caller may retry, ideally on another replica.
	Unavailable
)

var names = [...]string{
	Unknown:            "unknown",
	InvalidArgument:    "invalid argument",
	Unauthenticated:    "unauthenticated",
	NotFound:           "not found",
	AlreadyExists:      "already exists",
	PermissionDenied:   "permission denied",
	FailedPrecondition: "failed precondition",
	ResourceExhausted:  "resource exhausted",
	OutOfRange:         "out of range",
	Aborted:            "aborted",
	Unavailable:        "unavailable",
}

func (k Kind) Error() string {
	if k < 0 || int(k) >= len(names) {
		return "unknown"
	}
	return names[k]
}

// Kind lets a Kind be found by Of like any kinded error.
func (k Kind) Kind() Kind { return k }

// kinded is what Of looks for in an error chain.
type kinded interface {
	error
	Kind() Kind
}

// Of returns the kind of err: the first Kind, or sentinel made by New or
// NewInternal, found in its chain; Unknown when there is none.
func Of(err error) Kind {
	var k kinded
	if errors.As(err, &k) {
		return k.Kind()
	}
	return Unknown
}

// sentinel is an error of one kind with its own text.
type sentinel struct {
	kind     Kind
	text     string
	internal bool
	message  string // for an internal sentinel, what Message shows instead of the kind's name
}

func (s *sentinel) Error() string { return s.text }
func (s *sentinel) Kind() Kind    { return s.kind }

// Is makes errors.Is(err, kind) hold for a sentinel of that kind.
func (s *sentinel) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == s.kind
}

// New returns a sentinel error of kind k with text. errors.Is matches it both
// as itself and as k.
func New(k Kind, text string) error { return &sentinel{kind: k, text: text} }

// NewInternal is New for failures whose wrapped messages must stay inside the
// service (storage errors name object keys). Message shows only the kind's
// name for them, unless a caller-facing layer wrapped them with its own kind.
func NewInternal(k Kind, text string) error { return &sentinel{kind: k, text: text, internal: true} }

// NewInternalWithMessage is NewInternal for a failure a caller can act on
// without knowing the key, such as a full disk: Message shows message (which
// must name no key or host path) in place of the kind's name, and still none
// of the text that wraps the sentinel.
func NewInternalWithMessage(k Kind, text, message string) error {
	return &sentinel{kind: k, text: text, internal: true, message: message}
}

// internalSentinel returns the sentinel that gives err its kind when it was
// made by NewInternal or NewInternalWithMessage, else nil.
func internalSentinel(err error) *sentinel {
	var k kinded
	if !errors.As(err, &k) {
		return nil
	}
	if s, ok := k.(*sentinel); ok && s.internal {
		return s
	}
	return nil
}

// IsInternal reports whether err's kind came from a sentinel made by
// NewInternal or NewInternalWithMessage, i.e. no caller-facing layer restated
// the failure.
func IsInternal(err error) bool { return internalSentinel(err) != nil }

// Message is the text to show a caller for err: err.Error(), or only the
// kind's name when err has no kind or its kind is internal (the sentinel's
// own message if NewInternalWithMessage gave it one).
func Message(err error) string {
	k := Of(err)
	if k == Unknown {
		return k.Error()
	}
	if s := internalSentinel(err); s != nil {
		if s.message != "" {
			return s.message
		}
		return k.Error()
	}
	return err.Error()
}

// retryAfter carries a hint of when a refused call may be retried.
type retryAfter struct {
	error
	after time.Duration
}

func (r retryAfter) Unwrap() error { return r.error }

// RetryAfter wraps err with the delay after which a retry may succeed (a
// rate limit's next token, say); the gRPC edge sends it as RetryInfo.
func RetryAfter(err error, d time.Duration) error {
	return retryAfter{error: err, after: d}
}

// RetryDelay returns the delay RetryAfter put in err's chain.
func RetryDelay(err error) (time.Duration, bool) {
	var r retryAfter
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}
