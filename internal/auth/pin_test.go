package auth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// TestPin: a call asks for its thread's pinned library by the pin header
// (any mode) or the token's pin claim; a malformed ask is refused rather
// than read as "not pinned".
func TestPin(t *testing.T) {
	const method = "/skillsvc.v1.SkillsService/ListSkills"
	k := keys(t)
	hs := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	tok := func(kv ...any) string { return "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, claims(kv...)) }
	id := []string{auth.UserKey, "alice", auth.ThreadKey, "t1"}
	for _, tc := range []struct {
		name    string
		a       auth.Authenticator
		md      metadata.MD
		pin     bool
		wantErr error
	}{
		{"insecure, not asked", auth.Metadata{}, metadata.Pairs(id...), false, nil},
		{"insecure, header", auth.Metadata{}, metadata.Pairs(append(id, auth.PinKey, "library")...), true, nil},
		{"insecure, misspelt header", auth.Metadata{}, metadata.Pairs(append(id, auth.PinKey, "true")...), false, errkind.InvalidArgument},
		{"insecure, header twice", auth.Metadata{}, metadata.Pairs(append(id, auth.PinKey, "library", auth.PinKey, "library")...), false, errkind.InvalidArgument},
		{"jwt, not asked", hs, metadata.Pairs("authorization", tok()), false, nil},
		{"jwt, claim true", hs, metadata.Pairs("authorization", tok("skillsvc_pin", true)), true, nil},
		{"jwt, claim library", hs, metadata.Pairs("authorization", tok("skillsvc_pin", "library")), true, nil},
		{"jwt, claim false", hs, metadata.Pairs("authorization", tok("skillsvc_pin", false)), false, nil},
		{"jwt, claim malformed", hs, metadata.Pairs("authorization", tok("skillsvc_pin", 1)), false, auth.ErrUnauthenticated},
		{"jwt, header beside the token", hs, metadata.Pairs("authorization", tok(), auth.PinKey, "library"), true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := auth.Check(context.Background(), tc.a, mounts.Default(), tc.md, method)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Check = %+v, %v; want error %v", p, err, tc.wantErr)
			}
			if err == nil && p.Pin != tc.pin {
				t.Errorf("Pin = %v, want %v", p.Pin, tc.pin)
			}
		})
	}
}
