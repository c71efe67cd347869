package skillrun

import (
	"errors"
	"fmt"
)

// The kinds of run error, matched with errors.Is on a *Error.
var (
	ErrScriptNotFound     = errors.New("ScriptNotFound")
	ErrScriptOutsideSkill = errors.New("ScriptOutsideSkill")
	ErrUnknownInterpreter = errors.New("UnknownInterpreter")
	ErrBadOutput          = errors.New("BadOutput")
	ErrTimeout            = errors.New("Timeout")
	ErrOutputTooLarge     = errors.New("OutputTooLarge")
	ErrWorkspaceTooLarge  = errors.New("WorkspaceTooLarge")
	ErrSandboxUnavailable = errors.New("SandboxUnavailable")
	// ErrOverLimits: the skill is over the manifest limits, so its files
	// cannot be verified; it is not run.
	ErrOverLimits = errors.New("OverLimits")
	// ErrVerify: the exported files differ from the manifest (the skill
	// changed during the fetch, or the archive was damaged).
	ErrVerify = errors.New("VerifyFailed")
)

// Error is a run that failed in a way the caller (often a model) can act
// on: Kind is one of the Err values, Message says what happened and what to
// do, and Stdout, Stderr and ExitCode carry what the script produced, where
// it ran far enough to produce something (ExitCode is -1 when it was killed
// or never started).
type Error struct {
	Kind           error
	Message        string
	Stdout, Stderr string
	ExitCode       int
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %s", e.Kind, e.Message) }

func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), ExitCode: -1}
}
