package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// TestTeams: the caller's teams come from the x-skillsvc-teams header in
// insecure mode and from the teams claim in jwt mode (the header is then
// ignored); each is validated like a user ID, bounded in number, and kept
// sorted without duplicates in the validated Caller.
func TestTeams(t *testing.T) {
	const method = "/skillsvc.v1.SkillsService/ListSkills"
	k := keys(t)
	hs := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	groups := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret); c.TeamsClaim = "groups" })
	tok := func(kv ...any) string { return "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, claims(kv...)) }
	id := []string{auth.UserKey, "alice", auth.ThreadKey, "t1"}
	many := make([]any, mounts.MaxTeams+1)
	for i := range many {
		many[i] = "team" + strings.Repeat("x", i)
	}
	for _, tc := range []struct {
		name    string
		a       auth.Authenticator
		md      metadata.MD
		want    []string
		wantErr error
	}{
		{"insecure, none", auth.Metadata{}, metadata.Pairs(id...), nil, nil},
		{"insecure, header", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, "legal, eng,legal")...), []string{"eng", "legal"}, nil},
		{"insecure, header twice", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, "a", auth.TeamsKey, "b")...), nil, auth.ErrUnauthenticated},
		{"insecure, invalid id", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, "legal,../alice")...), nil, mounts.ErrInvalidID},
		{"insecure, reserved-looking id", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, "_shared")...), nil, mounts.ErrInvalidID},
		{"insecure, empty entry", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, "legal,,eng")...), nil, mounts.ErrInvalidID},
		{"insecure, too many", auth.Metadata{}, metadata.Pairs(append(id, auth.TeamsKey, strings.Repeat("a,", mounts.MaxTeams)+"a")...), nil, errkind.InvalidArgument},
		{"jwt, claim list", hs, metadata.Pairs("authorization", tok("teams", []any{"legal", "eng"})), []string{"eng", "legal"}, nil},
		{"jwt, claim string", hs, metadata.Pairs("authorization", tok("teams", "legal,eng")), []string{"eng", "legal"}, nil},
		{"jwt, header ignored", hs, metadata.Pairs("authorization", tok(), auth.TeamsKey, "legal"), nil, nil},
		{"jwt, configured claim", groups, metadata.Pairs("authorization", tok("groups", []any{"legal"}, "teams", []any{"eng"})), []string{"legal"}, nil},
		{"jwt, invalid id", hs, metadata.Pairs("authorization", tok("teams", []any{"/legal"})), nil, auth.ErrUnauthenticated},
		{"jwt, not strings", hs, metadata.Pairs("authorization", tok("teams", []any{1})), nil, auth.ErrUnauthenticated},
		{"jwt, comma inside an entry", hs, metadata.Pairs("authorization", tok("teams", []any{"a,b"})), nil, auth.ErrUnauthenticated},
		{"jwt, too many", hs, metadata.Pairs("authorization", tok("teams", many)), nil, auth.ErrUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := auth.Check(context.Background(), tc.a, mounts.Default(), tc.md, method)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Check = %+v, %v; want error %v", p, err, tc.wantErr)
			}
			if err == nil && !slices.Equal(p.Caller.Teams(), tc.want) {
				t.Errorf("Teams = %q, want %q", p.Caller.Teams(), tc.want)
			}
		})
	}
}
