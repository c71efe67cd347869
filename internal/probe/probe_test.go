package probe_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/probe"
)

// TestRun drives the probe with a scripted check (its last step ends the
// run) and compares the readiness it reports with the expected sequence.
func TestRun(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name   string
		script []error
		want   []bool
	}{
		{"ready at once", []error{nil}, []bool{true}},
		{"one failure is tolerated", []error{nil, down, nil}, []bool{true, true}},
		{"two failures make it not ready until a success", []error{nil, down, down, down, nil}, []bool{true, false, false, true}},
		{"down from the start", []error{down, down, nil}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			step := 0
			check := func(context.Context) error {
				err := tc.script[step]
				if step++; step == len(tc.script) {
					defer cancel() // after this check's outcome is reported
				}
				return err
			}
			var got []bool
			probe.Run(ctx, probe.Config{Interval: time.Millisecond, Timeout: time.Second, Failures: 2}, check,
				func(ready bool) { got = append(got, ready) }, slog.New(slog.DiscardHandler))
			if !slices.Equal(got, tc.want) {
				t.Errorf("reported %v, want %v", got, tc.want)
			}
		})
	}
}
