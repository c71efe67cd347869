package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestUnauthenticated refuses every filesystem call without a complete
// identity, before anything is stored. TestSkillsUnauthenticated does the
// same for SkillsService.
func TestUnauthenticated(t *testing.T) {
	bucket := objstoretest.NewBucket(t, nil)
	c := start(t, bucket, options{})
	for _, tc := range incompleteIdentities {
		for _, r := range everyRPC {
			t.Run(tc.name+" "+r.name, func(t *testing.T) {
				wantCode(t, r.name, r.call(as(t, tc.md...), c.fs), codes.Unauthenticated)
			})
		}
	}
	if got := keys(t, bucket); len(got) != 0 {
		t.Errorf("unauthenticated calls stored %v", got)
	}
}

func TestHealthWithoutIdentity(t *testing.T) {
	c := start(t, objstoretest.NewBucket(t, nil), options{})
	res, err := c.health.Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health Check without identity: %v", err)
	}
	if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health status = %v, want SERVING", res.GetStatus())
	}
}
