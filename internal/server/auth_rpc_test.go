package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
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
// refused and a signed token is the identity.
func TestJWTMode(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := auth.DefaultConfig()
	cfg.Mode, cfg.JWT.SecretFile = auth.ModeJWT, file
	a, err := auth.New(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close(a) })
	c := start(t, objstoretest.NewBucket(t, nil), options{auth: a})
	list := func(ctx context.Context) error {
		_, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		return err
	}
	wantCode(t, "List with metadata identity", list(asAlice(t)), codes.Unauthenticated)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"user": "alice", "thread": "t1", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "List with token", list(as(t, "authorization", "Bearer "+token)), codes.OK)
	wantCode(t, "List with forged token", list(as(t, "authorization", "Bearer "+token+"x")), codes.Unauthenticated)
	// AdminService needs an admin token; an admin token without an
	// identity reaches no agent mounts.
	drop := func(ctx context.Context) error {
		_, err := c.admin.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{Shared: true})
		return err
	}
	admin, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Admin: true, Subject: "ops"}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "DropSkillIndex without a token", drop(t.Context()), codes.Unauthenticated)
	wantCode(t, "DropSkillIndex with metadata identity", drop(asAlice(t)), codes.Unauthenticated)
	wantCode(t, "DropSkillIndex with an agent token", drop(as(t, "authorization", "Bearer "+token)), codes.PermissionDenied)
	wantCode(t, "DropSkillIndex with an admin token", drop(as(t, "authorization", "Bearer "+admin)), codes.OK)
	wantCode(t, "List with an admin token naming no user", list(as(t, "authorization", "Bearer "+admin)), codes.Unauthenticated)
}
