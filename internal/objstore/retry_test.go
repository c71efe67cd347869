package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

func TestRetryConditional(t *testing.T) {
	other := errors.New("other")
	for _, tc := range []struct {
		name      string
		fails     []error // returned by successive attempts, then nil
		attempts  int
		wantCalls int
		want      error
	}{
		{"first try", nil, 3, 1, nil},
		{"precondition then success", []error{objstore.ErrPrecondition}, 3, 2, nil},
		{"conflict then success", []error{fmt.Errorf("put: %w", objstore.ErrConflict)}, 3, 2, nil},
		{"other errors are not retried", []error{other}, 3, 1, other},
		{"gives up after attempts", []error{objstore.ErrPrecondition, objstore.ErrPrecondition, objstore.ErrPrecondition}, 2, 2, objstore.ErrPrecondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := objstore.RetryConditional(context.Background(), tc.attempts, time.Microsecond, func() error {
				calls++
				if calls <= len(tc.fails) {
					return tc.fails[calls-1]
				}
				return nil
			})
			if calls != tc.wantCalls || !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("calls %d, err %v; want %d calls, err %v", calls, err, tc.wantCalls, tc.want)
			}
		})
	}
}

func TestRetryConditionalStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := objstore.RetryConditional(ctx, 100, time.Hour, func() error {
		calls++
		cancel() // the backoff must not outlive the caller
		return objstore.ErrConflict
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("calls %d, err %v; want 1 call and context.Canceled", calls, err)
	}
}
