package auth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// TestMintHS256: a minted token is accepted by the authenticator built from
// the same settings, carries the identity, and expires after its ttl.
func TestMintHS256(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(strings.Repeat("s", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := auth.DefaultConfig()
	cfg.Mode, cfg.JWT.SecretFile, cfg.JWT.Issuer, cfg.JWT.Audience = auth.ModeJWT, file, "iss-1", "skillsvc"
	cfg.JWT.UserClaim = "sub"
	a, err := auth.New(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	authenticate := func(token string) (mounts.Identity, error) {
		ctx := metadata.NewIncomingContext(t.Context(), metadata.Pairs("authorization", "Bearer "+token))
		p, err := a.Authenticate(ctx, metadata.Pairs("authorization", "Bearer "+token))
		return p.Identity, err
	}
	want := mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-7"}
	token, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Identity: want}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := authenticate(token); err != nil || got != want {
		t.Errorf("minted token authenticates as %+v, %v; want %+v", got, err, want)
	}
	old, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Identity: want}, time.Minute, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authenticate(old); err == nil {
		t.Error("an expired minted token authenticated")
	}
	for _, id := range []mounts.Identity{{User: "../x", Thread: "t"}, {User: "a", Thread: ""}, {User: "a", Thread: "t", Ticket: "a/b"}} {
		if _, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Identity: id}, time.Hour, time.Now()); err == nil {
			t.Errorf("minted a token for %+v", id)
		}
	}
	if _, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Identity: want}, 0, time.Now()); err == nil {
		t.Error("minted a token with no lifetime")
	}
}
