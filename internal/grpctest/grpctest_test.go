package grpctest_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
)

func TestAsCaller(t *testing.T) {
	for _, tc := range []struct {
		name, user, thread, ticket string
		want                       metadata.MD
	}{
		{"user and thread", "alice", "t1", "", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1")},
		{"with ticket", "alice", "t1", "K1", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "K1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md, _ := metadata.FromOutgoingContext(grpctest.AsCaller(context.Background(), tc.user, tc.thread, tc.ticket))
			for k, v := range tc.want {
				if !slices.Equal(md[k], v) {
					t.Errorf("%s = %q, want %q", k, md[k], v)
				}
			}
			if len(md) != len(tc.want) {
				t.Errorf("metadata %v, want %v", md, tc.want)
			}
		})
	}
}

func TestWithBearer(t *testing.T) {
	md, _ := metadata.FromOutgoingContext(grpctest.WithBearer(context.Background(), "tok"))
	if got := md.Get("authorization"); !slices.Equal(got, []string{"Bearer tok"}) {
		t.Errorf("authorization = %q, want [Bearer tok]", got)
	}
}

func TestCallerHeader(t *testing.T) {
	for _, tc := range []struct {
		name, user, thread, ticket string
		want                       http.Header
	}{
		{"user and thread", "alice", "t1", "", http.Header{"X-Skillsvc-User": {"alice"}, "X-Skillsvc-Thread": {"t1"}}},
		{"with ticket", "alice", "t1", "K1", http.Header{"X-Skillsvc-User": {"alice"}, "X-Skillsvc-Thread": {"t1"}, "X-Skillsvc-Ticket": {"K1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := grpctest.CallerHeader(tc.user, tc.thread, tc.ticket); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CallerHeader = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWantCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		want     codes.Code
		failWant bool
	}{
		{"nil is OK", nil, codes.OK, false},
		{"matching code", status.Error(codes.NotFound, "x"), codes.NotFound, false},
		{"other code", status.Error(codes.Internal, "x"), codes.NotFound, true},
		{"nil is not an error code", nil, codes.NotFound, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			grpctest.WantCode(rec, tc.err, tc.want)
			if rec.failed != tc.failWant {
				t.Errorf("failed = %v, want %v", rec.failed, tc.failWant)
			}
		})
	}
}

// recorder notes a failure instead of failing the test it wraps.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
