package errorinfo_test

import (
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/errorinfo"
)

func TestReason(t *testing.T) {
	foreign, err := status.New(codes.ResourceExhausted, "x").WithDetails(&errdetails.ErrorInfo{Reason: errorinfo.StorageFull, Domain: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		err    error
		reason string
		ok     bool
	}{
		{"with", errorinfo.With(status.New(codes.ResourceExhausted, "storage is full"), errorinfo.StorageFull).Err(), errorinfo.StorageFull, true},
		{"without", status.Error(codes.ResourceExhausted, "slow down"), "", false},
		{"another domain's", foreign.Err(), "", false},
		{"not a status", errors.New("plain"), "", false},
		{"nil", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, ok := errorinfo.Reason(tc.err); r != tc.reason || ok != tc.ok {
				t.Errorf("Reason = %q, %v; want %q, %v", r, ok, tc.reason, tc.ok)
			}
		})
	}
}
