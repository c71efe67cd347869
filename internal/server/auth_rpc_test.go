package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
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

// TestJWTMode: with token authentication, identity metadata alone is
// refused and a signed token is the identity; AdminService needs an admin
// token, and an admin token without an identity reaches no agent mounts.
func TestJWTMode(t *testing.T) {
	c, token := jwtServer(t, options{})
	list := func(ctx context.Context) error {
		_, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		return err
	}
	drop := func(ctx context.Context) error {
		_, err := c.admin.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{Shared: true})
		return err
	}
	agent := token(auth.Principal{Identity: aliceID})
	forged := grpctest.WithBearer(t.Context(), "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWxpY2UiLCJ0aHJlYWQiOiJ0MSJ9.forged")
	admin := token(auth.Principal{Admin: true, Subject: "ops"})
	wantCode(t, "List with metadata identity", list(asAlice(t)), codes.Unauthenticated)
	wantCode(t, "List with token", list(agent), codes.OK)
	wantCode(t, "List with a forged token", list(forged), codes.Unauthenticated)
	wantCode(t, "DropSkillIndex without a token", drop(t.Context()), codes.Unauthenticated)
	wantCode(t, "DropSkillIndex with metadata identity", drop(asAlice(t)), codes.Unauthenticated)
	wantCode(t, "DropSkillIndex with an agent token", drop(agent), codes.PermissionDenied)
	wantCode(t, "DropSkillIndex with an admin token", drop(admin), codes.OK)
	wantCode(t, "List with an admin token naming no user", list(admin), codes.Unauthenticated)
}
