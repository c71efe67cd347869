package retryinfo_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/retryinfo"
)

func TestDelay(t *testing.T) {
	withInfo := retryinfo.With(status.New(codes.ResourceExhausted, "slow down"), 1500*time.Millisecond)
	noDelay, err := status.New(codes.ResourceExhausted, "x").WithDetails(&errdetails.RetryInfo{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
		ok   bool
	}{
		{"attached", withInfo.Err(), 1500 * time.Millisecond, true},
		{"plain status", status.Error(codes.ResourceExhausted, "too big"), 0, false},
		{"RetryInfo without a delay", noDelay.Err(), 0, false},
		{"not a status", errors.New("boom"), 0, false},
		{"nil", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := retryinfo.Delay(tc.err); got != tc.want || ok != tc.ok {
				t.Errorf("Delay = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if st := withInfo; st.Code() != codes.ResourceExhausted || st.Message() != "slow down" {
		t.Errorf("With changed the status: %v", st)
	}
}
