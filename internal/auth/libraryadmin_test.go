package auth_test

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
)

// TestLibraryAdmin: authentication decides who acts as a library admin.
// In insecure mode every caller may use AdminService, but only AdminKey
// set to exactly "true" makes it a library admin; in jwt mode the token's
// admin scope alone does, whatever the header says.
func TestLibraryAdmin(t *testing.T) {
	k := keys(t)
	hs := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	scope := auth.DefaultConfig().JWT.AdminScope
	tok := func(c jwt.MapClaims) string { return "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, c) }
	agent := []string{auth.UserKey, "alice", auth.ThreadKey, "t1"}
	for _, tc := range []struct {
		name        string
		a           auth.Authenticator
		md          []string
		admin, libs bool
	}{
		{"insecure, no header", auth.Metadata{}, agent, true, false},
		{"insecure, header true", auth.Metadata{}, append([]string{auth.AdminKey, "true"}, agent...), true, true},
		{"insecure, header other", auth.Metadata{}, append([]string{auth.AdminKey, "yes"}, agent...), true, false},
		{"insecure, header twice", auth.Metadata{}, append([]string{auth.AdminKey, "true", auth.AdminKey, "true"}, agent...), true, false},
		{"jwt agent", hs, []string{"authorization", tok(claims())}, false, false},
		{"jwt agent, header true", hs, []string{"authorization", tok(claims()), auth.AdminKey, "true"}, false, false},
		{"jwt admin scope", hs, []string{"authorization", tok(claims("scope", scope))}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.a.Authenticate(t.Context(), metadata.Pairs(tc.md...))
			if err != nil {
				t.Fatal(err)
			}
			if p.Admin != tc.admin || p.LibraryAdmin != tc.libs {
				t.Fatalf("Admin, LibraryAdmin = %v, %v; want %v, %v", p.Admin, p.LibraryAdmin, tc.admin, tc.libs)
			}
		})
	}
}
