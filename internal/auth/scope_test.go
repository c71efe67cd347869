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

// TestScopeChoice: the skill scope and harness come from the headers in
// any mode and from a token's claims, which bind: a header naming another
// is PERMISSION_DENIED, as is a request field (auth.Scoped); malformed
// names are INVALID_ARGUMENT.
func TestScopeChoice(t *testing.T) {
	const method = "/skillsvc.v1.SkillsService/ListSkills"
	k := keys(t)
	hs := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	tok := func(kv ...any) string { return "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, claims(kv...)) }
	id := []string{auth.UserKey, "alice", auth.ThreadKey, "t1"}
	for _, tc := range []struct {
		name               string
		a                  auth.Authenticator
		md                 metadata.MD
		field              string // a request's scope field
		scope, harness     string
		wantErr, wantField error
	}{
		{"insecure, none", auth.Metadata{}, metadata.Pairs(id...), "", "", "", nil, nil},
		{"insecure, headers", auth.Metadata{}, metadata.Pairs(append(id, auth.ScopeKey, "contracts", auth.HarnessKey, "codex")...), "", "contracts", "codex", nil, nil},
		{"insecure, field over header", auth.Metadata{}, metadata.Pairs(append(id, auth.ScopeKey, "contracts")...), "eng", "eng", "", nil, nil},
		{"insecure, header twice", auth.Metadata{}, metadata.Pairs(append(id, auth.ScopeKey, "a", auth.ScopeKey, "b")...), "", "", "", errkind.InvalidArgument, nil},
		{"insecure, bad scope", auth.Metadata{}, metadata.Pairs(append(id, auth.ScopeKey, "../x")...), "", "", "", mounts.ErrInvalidID, nil},
		{"insecure, bad field", auth.Metadata{}, metadata.Pairs(id...), "a/b", "", "", nil, mounts.ErrInvalidID},
		{"jwt, claims", hs, metadata.Pairs("authorization", tok("skill_scope", "contracts", "harness", "codex")), "", "contracts", "codex", nil, nil},
		{"jwt, same header and field", hs, metadata.Pairs("authorization", tok("skill_scope", "contracts"), auth.ScopeKey, "contracts"), "contracts", "contracts", "", nil, nil},
		{"jwt, header widens", hs, metadata.Pairs("authorization", tok("skill_scope", "contracts"), auth.ScopeKey, "eng"), "", "", "", errkind.PermissionDenied, nil},
		{"jwt, harness header changes", hs, metadata.Pairs("authorization", tok("harness", "codex"), auth.HarnessKey, "claude"), "", "", "", errkind.PermissionDenied, nil},
		{"jwt, field widens", hs, metadata.Pairs("authorization", tok("skill_scope", "contracts")), "eng", "", "", nil, errkind.PermissionDenied},
		{"jwt, unscoped token, header", hs, metadata.Pairs("authorization", tok(), auth.ScopeKey, "eng"), "", "eng", "", nil, nil},
		{"jwt, unscoped token, field", hs, metadata.Pairs("authorization", tok()), "eng", "eng", "", nil, nil},
		{"jwt, bad claim", hs, metadata.Pairs("authorization", tok("skill_scope", 7)), "", "", "", auth.ErrUnauthenticated, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := auth.Check(context.Background(), tc.a, mounts.Default(), tc.md, method)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Check = %+v, %v; want error %v", p, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			id, err := auth.Scoped(auth.NewContext(context.Background(), p), p.Caller, tc.field)
			if !errors.Is(err, tc.wantField) || (tc.wantField == nil) != (err == nil) {
				t.Fatalf("Scoped(%q) = %v; want error %v", tc.field, err, tc.wantField)
			}
			if err == nil && (id.Scope() != tc.scope || id.Harness() != tc.harness) {
				t.Errorf("scope, harness = %q, %q; want %q, %q", id.Scope(), id.Harness(), tc.scope, tc.harness)
			}
		})
	}
}
