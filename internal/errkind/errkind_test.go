package errkind_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

func TestOf(t *testing.T) {
	isDir := errkind.New(errkind.FailedPrecondition, "is a directory")
	storage := errkind.NewInternal(errkind.NotFound, "object not found")
	full := errkind.NewInternalWithMessage(errkind.ResourceExhausted, "object store full", "storage is full")
	tests := []struct {
		name     string
		err      error
		kind     errkind.Kind
		message  string
		internal bool
	}{
		{"nil", nil, errkind.Unknown, "unknown", false},
		{"plain", errors.New("boom"), errkind.Unknown, "unknown", false},
		{"context", context.Canceled, errkind.Unknown, "unknown", false},
		{"kind", errkind.NotFound, errkind.NotFound, "not found", false},
		{"wrapped kind", fmt.Errorf("%w: %q", errkind.NotFound, "/workspace/a"), errkind.NotFound, `not found: "/workspace/a"`, false},
		{"sentinel", fmt.Errorf("%w: %q", isDir, "/workspace"), errkind.FailedPrecondition, `is a directory: "/workspace"`, false},
		{"internal", fmt.Errorf("get %q: %w", "alice/threads/t/a", storage), errkind.NotFound, "not found", true},
		{"internal restated", fmt.Errorf("%w: %q: %w", errkind.NotFound, "/workspace/a", storage), errkind.NotFound, `not found: "/workspace/a": object not found`, false},
		{"internal with message", fmt.Errorf("put %q: %w: %w", "alice/threads/t/a", full, errors.New("write /data/x: no space left on device")), errkind.ResourceExhausted, "storage is full", true},
		{"internal with message restated", fmt.Errorf("%w: %q: %w", errkind.ResourceExhausted, "/workspace/a", full), errkind.ResourceExhausted, `resource exhausted: "/workspace/a": object store full`, false},
		{"first kind wins", fmt.Errorf("%w: %w", errkind.InvalidArgument, errkind.NotFound), errkind.InvalidArgument, "invalid argument: not found", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errkind.Of(tc.err); got != tc.kind {
				t.Errorf("Of = %v, want %v", got, tc.kind)
			}
			if tc.err != nil {
				if got := errkind.Message(tc.err); got != tc.message {
					t.Errorf("Message = %q, want %q", got, tc.message)
				}
			}
			if got := errkind.IsInternal(tc.err); got != tc.internal {
				t.Errorf("IsInternal = %v, want %v", got, tc.internal)
			}
		})
	}
}

func TestSentinelMatchesItsKind(t *testing.T) {
	isDir := errkind.New(errkind.FailedPrecondition, "is a directory")
	err := fmt.Errorf("read: %w", isDir)
	if !errors.Is(err, isDir) || !errors.Is(err, errkind.FailedPrecondition) {
		t.Fatal("a sentinel must match itself and its kind")
	}
	if errors.Is(err, errkind.NotFound) {
		t.Fatal("a sentinel must not match another kind")
	}
	if errors.Is(errkind.New(errkind.FailedPrecondition, "x"), isDir) {
		t.Fatal("two sentinels of one kind must stay apart")
	}
}
