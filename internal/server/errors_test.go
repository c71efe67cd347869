package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/errorinfo"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func TestToStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("%w: %q", err, "/workspace/a.md") }
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		msg    string // the exact message; "" to skip
		logged bool   // the cause is logged (always for Internal)
	}{
		{"canceled", context.Canceled, codes.Canceled, "", false},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, "", false},
		{"wrapped deadline", fmt.Errorf("grep: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "", false},
		{"deadline wrapped by a backend with a key", fmt.Errorf(`list "alice/threads/t1/": %w`, context.DeadlineExceeded), codes.DeadlineExceeded, "", false},
		{"cancel wrapped by a backend with a key", fmt.Errorf(`get "alice/threads/t1/x": %w`, context.Canceled), codes.Canceled, "", false},
		{"unauthenticated", fmt.Errorf("%w: no identity", auth.ErrUnauthenticated), codes.Unauthenticated, "unauthenticated: no identity", false},
		{"invalid id", fmt.Errorf("%w: user", mounts.ErrInvalidID), codes.InvalidArgument, "invalid id: user", false},
		{"invalid path", fmt.Errorf("%w: /a//b", mounts.ErrInvalidPath), codes.InvalidArgument, "invalid path: /a//b", false},
		{"invalid argument", wrap(errkind.InvalidArgument), codes.InvalidArgument, `invalid argument: "/workspace/a.md"`, false},
		{"not found", wrap(errkind.NotFound), codes.NotFound, `not found: "/workspace/a.md"`, false},
		{"exists", wrap(errkind.AlreadyExists), codes.AlreadyExists, `already exists: "/workspace/a.md"`, false},
		{"read-only", wrap(errkind.PermissionDenied), codes.PermissionDenied, `permission denied: "/workspace/a.md"`, false},
		{"precondition", wrap(errkind.FailedPrecondition), codes.FailedPrecondition, "", false},
		{"is a directory", wrap(vfs.ErrIsDir), codes.FailedPrecondition, "", false},
		{"not a directory", wrap(vfs.ErrNotDir), codes.FailedPrecondition, "", false},
		{"binary", wrap(textfile.ErrBinary), codes.FailedPrecondition, "", false},
		{"edit mismatch", wrap(vfs.ErrEditMismatch), codes.FailedPrecondition, "", false},
		{"too large", wrap(errkind.ResourceExhausted), codes.ResourceExhausted, `resource exhausted: "/workspace/a.md"`, false},
		{"out of range", wrap(errkind.OutOfRange), codes.OutOfRange, "", false},
		{"conflict", wrap(errkind.Aborted), codes.Aborted, "", false},
		{"doubly wrapped", fmt.Errorf("outer: %w", wrap(errkind.NotFound)), codes.NotFound, `outer: not found: "/workspace/a.md"`, false},
		{"joined", errors.Join(errors.New("first"), errkind.ResourceExhausted), codes.ResourceExhausted, "", false},
		{"status passes through", status.Error(codes.Unavailable, "try later"), codes.Unavailable, "try later", false},
		{"storage error no layer restated", fmt.Errorf(`put "alice/secret-key": %w`, objstore.ErrPermission), codes.PermissionDenied, "permission denied", true},
		{"storage unavailable", fmt.Errorf(`get "alice/secret-key": %w: dial tcp: connection refused`, objstore.ErrUnavailable), codes.Unavailable, "unavailable", true},
		{"storage full", fmt.Errorf(`put "alice/secret-key": %w: write /srv/disk on fire: no space left on device`, objstore.ErrNoSpace), codes.ResourceExhausted, "storage is full", true},
		{"storage read-only", fmt.Errorf(`put "alice/secret-key": %w: open /srv/disk/.skillsvc-tmp: read-only file system`, objstore.ErrReadOnly), codes.FailedPrecondition, "storage is read-only", true},
		{"storage error restated", fmt.Errorf("%w: %q: %w", errkind.NotFound, "/workspace/a.md", objstore.ErrNotFound), codes.NotFound, "", false},
		{"unknown", errors.New(secret), codes.Internal, "internal error", false},
		{"unknown wrapping nothing we know", fmt.Errorf("put: %w", errors.New(secret)), codes.Internal, "internal error", false},
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
			if logged := strings.Contains(logs.String(), "secret-key"); logged != (tc.code == codes.Internal || tc.logged) {
				t.Errorf("log = %q; want the cause logged only for Internal", logs.String())
			}
		})
	}
	if err := server.ToStatus(t.Context(), slog.New(slog.DiscardHandler), "/test/Method", nil); err != nil {
		t.Errorf("ToStatus(nil) = %v", err)
	}
}

// TestToStatusStorageFull: storage out of space carries the StorageFull
// reason, which tells it from a limit of the same code (the JSON gateway
// answers it 507, not 429); a limit carries no reason.
func TestToStatusStorageFull(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	full := server.ToStatus(t.Context(), log, "/m", fmt.Errorf(`put "alice/x": %w: no space left on device`, objstore.ErrNoSpace))
	if r, ok := errorinfo.Reason(full); !ok || r != errorinfo.StorageFull || status.Code(full) != codes.ResourceExhausted {
		t.Errorf("storage full: %v, reason %q %v; want RESOURCE_EXHAUSTED with reason %s", full, r, ok, errorinfo.StorageFull)
	}
	for _, err := range []error{
		fmt.Errorf("%w: too big", errkind.ResourceExhausted),
		errkind.RetryAfter(fmt.Errorf("%w: rate limit exceeded", errkind.ResourceExhausted), time.Second),
		fmt.Errorf(`put "alice/x": %w`, objstore.ErrTooLarge),
	} {
		if r, ok := errorinfo.Reason(server.ToStatus(t.Context(), log, "/m", err)); ok {
			t.Errorf("%v carries reason %q, want none", err, r)
		}
	}
}

// TestToStatusRetryInfo: a refusal with a retry delay carries it as
// RetryInfo, so clients back off for as long as the limit says.
func TestToStatusRetryInfo(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	err := errkind.RetryAfter(fmt.Errorf("%w: rate limit exceeded", errkind.ResourceExhausted), 250*time.Millisecond)
	st := status.Convert(server.ToStatus(context.Background(), log, "/m", err))
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("code = %v", st.Code())
	}
	var got *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			got = ri
		}
	}
	if got == nil || got.GetRetryDelay().AsDuration() != 250*time.Millisecond {
		t.Errorf("details = %v, want RetryInfo of 250ms", st.Details())
	}
	plain := status.Convert(server.ToStatus(context.Background(), log, "/m", fmt.Errorf("%w: too big", errkind.ResourceExhausted)))
	if len(plain.Details()) != 0 {
		t.Errorf("a size limit carries details %v", plain.Details())
	}
}

// TestToStatusStorageRetry: a storage outage, a body read cut short
// included, is UNAVAILABLE with a retry delay (clients back off, then retry
// on a new connection); a delay a layer set wins, and other kinds get none.
func TestToStatusStorageRetry(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration // 0: none
	}{
		{"refused", fmt.Errorf(`get "alice/x": %w: dial tcp: connection refused`, objstore.ErrUnavailable), time.Second},
		{"body cut short", fmt.Errorf(`s3 get "alice/x": body read cut short: %w: %w`, objstore.ErrUnavailable, io.ErrUnexpectedEOF), time.Second},
		{"a layer's own delay", errkind.RetryAfter(fmt.Errorf("%w", objstore.ErrUnavailable), 3*time.Second), 3 * time.Second},
		{"not found", fmt.Errorf(`get "alice/x": %w`, objstore.ErrNotFound), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := server.ToStatus(t.Context(), log, "/m", tc.err)
			d, ok := retryinfo.Delay(err)
			if d != tc.want || ok != (tc.want > 0) {
				t.Errorf("%v: retry delay %v %t; want %v", err, d, ok, tc.want)
			}
		})
	}
}
