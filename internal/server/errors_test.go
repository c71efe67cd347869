package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func TestToStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("%w: %q", err, "/workspace/a.md") }
	for _, tc := range []struct {
		name string
		err  error
		code codes.Code
		msg  string // the exact message; "" to skip
	}{
		{"canceled", context.Canceled, codes.Canceled, ""},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, ""},
		{"wrapped deadline", fmt.Errorf("grep: %w", context.DeadlineExceeded), codes.DeadlineExceeded, ""},
		{"deadline wrapped by a backend with a key", fmt.Errorf(`list "alice/threads/t1/": %w`, context.DeadlineExceeded), codes.DeadlineExceeded, ""},
		{"cancel wrapped by a backend with a key", fmt.Errorf(`get "alice/threads/t1/x": %w`, context.Canceled), codes.Canceled, ""},
		{"unauthenticated", fmt.Errorf("%w: no identity", auth.ErrUnauthenticated), codes.Unauthenticated, "unauthenticated: no identity"},
		{"invalid id", fmt.Errorf("%w: user", mounts.ErrInvalidID), codes.InvalidArgument, "invalid id: user"},
		{"invalid path", fmt.Errorf("%w: /a//b", mounts.ErrInvalidPath), codes.InvalidArgument, "invalid path: /a//b"},
		{"invalid argument", wrap(vfs.ErrInvalidArgument), codes.InvalidArgument, `invalid argument: "/workspace/a.md"`},
		{"not found", wrap(vfs.ErrNotFound), codes.NotFound, `not found: "/workspace/a.md"`},
		{"exists", wrap(vfs.ErrExists), codes.AlreadyExists, `already exists: "/workspace/a.md"`},
		{"read-only", wrap(vfs.ErrReadOnly), codes.PermissionDenied, `read-only: "/workspace/a.md"`},
		{"precondition", wrap(vfs.ErrPrecondition), codes.FailedPrecondition, ""},
		{"is a directory", wrap(vfs.ErrIsDir), codes.FailedPrecondition, ""},
		{"not a directory", wrap(vfs.ErrNotDir), codes.FailedPrecondition, ""},
		{"binary", wrap(vfs.ErrBinary), codes.FailedPrecondition, ""},
		{"edit mismatch", wrap(vfs.ErrEditMismatch), codes.FailedPrecondition, ""},
		{"too large", wrap(vfs.ErrTooLarge), codes.ResourceExhausted, `too large: "/workspace/a.md"`},
		{"out of range", wrap(vfs.ErrOutOfRange), codes.OutOfRange, ""},
		{"conflict", wrap(vfs.ErrConflict), codes.Aborted, ""},
		{"doubly wrapped", fmt.Errorf("outer: %w", wrap(vfs.ErrNotFound)), codes.NotFound, `outer: not found: "/workspace/a.md"`},
		{"joined", errors.Join(errors.New("first"), vfs.ErrTooLarge), codes.ResourceExhausted, ""},
		{"status passes through", status.Error(codes.Unavailable, "try later"), codes.Unavailable, "try later"},
		{"unknown", errors.New(secret), codes.Internal, "internal error"},
		{"unknown wrapping nothing we know", fmt.Errorf("put: %w", errors.New(secret)), codes.Internal, "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			err := server.ToStatus(t.Context(), log, "/test/Method", tc.err)
			st, ok := status.FromError(err)
			if !ok {
				t.Fatalf("ToStatus(%v) = %v, not a status", tc.err, err)
			}
			if st.Code() != tc.code {
				t.Errorf("code = %v, want %v", st.Code(), tc.code)
			}
			if tc.msg != "" && st.Message() != tc.msg {
				t.Errorf("message = %q, want %q", st.Message(), tc.msg)
			}
			for _, leak := range []string{"alice/", "disk on fire"} {
				if strings.Contains(st.Message(), leak) {
					t.Errorf("message %q leaks %q", st.Message(), leak)
				}
			}
			// Only internal errors are logged, with their full text.
			if logged := strings.Contains(logs.String(), "secret-key"); logged != (tc.code == codes.Internal) {
				t.Errorf("log = %q; want the cause logged only for Internal", logs.String())
			}
		})
	}
	if err := server.ToStatus(t.Context(), slog.New(slog.DiscardHandler), "/test/Method", nil); err != nil {
		t.Errorf("ToStatus(nil) = %v", err)
	}
}
