package skillrun

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
	// changed during the fetch, or the archive was damaged). Its gRPC code
	// is ABORTED, as in the Python and TypeScript clients: nothing in an
	// export tells the two causes apart, and fetching again is the remedy
	// of both.
	ErrVerify = errors.New("VerifyFailed")
)

// kindCodes are the kinds' gRPC codes, the same in every runner
// (test/runner/cases.json "codes" holds all three to them).
var kindCodes = map[error]codes.Code{
	ErrScriptNotFound:     codes.NotFound,
	ErrScriptOutsideSkill: codes.InvalidArgument,
	ErrUnknownInterpreter: codes.FailedPrecondition,
	ErrBadOutput:          codes.FailedPrecondition,
	ErrTimeout:            codes.DeadlineExceeded,
	ErrOutputTooLarge:     codes.ResourceExhausted,
	ErrWorkspaceTooLarge:  codes.ResourceExhausted,
	ErrSandboxUnavailable: codes.FailedPrecondition,
	ErrOverLimits:         codes.FailedPrecondition,
	ErrVerify:             codes.Aborted,
}

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

// GRPCStatus gives status.Code the kind's code (kindCodes); nil for a
// kind without one, which status.FromError takes as Unknown.
func (e *Error) GRPCStatus() *status.Status {
	if c, ok := kindCodes[e.Kind]; ok {
		return status.New(c, e.Error())
	}
	return nil
}

func newError(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), ExitCode: -1}
}
