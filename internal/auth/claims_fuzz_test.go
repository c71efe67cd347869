package auth

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// FuzzClaims: whatever JSON the verified claims hold, an accepted principal
// names valid IDs (an agent a user and a thread; an admin both or
// neither), is an admin exactly when the scope claim holds the admin
// scope, and a rejection is ErrUnauthenticated.
func FuzzClaims(f *testing.F) {
	for _, s := range []string{
		`{"user":"alice","thread":"t1"}`,
		`{"user":"alice","thread":"t1","ticket":"T-1","sub":"svc"}`,
		`{"scope":"skillsvc:admin"}`,
		`{"scope":["read","skillsvc:admin"],"user":"a","thread":"b"}`,
		`{"user":"..","thread":"t1"}`,
		`{"user":"_shared","thread":"t1"}`,
		`{"user":"a/b","thread":"t1","scope":7}`,
		`{"user":"alice","thread":"t1","ticket":null}`,
		`{"scope":"skillsvc:admin","ticket":"K"}`,
	} {
		f.Add(s)
	}
	cfg := DefaultConfig().JWT
	j := newJWT(cfg, sources{})
	f.Fuzz(func(t *testing.T, s string) {
		var claims jwt.MapClaims
		if json.Unmarshal([]byte(s), &claims) != nil {
			return
		}
		p, err := j.principal(claims)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "unauthenticated") {
				t.Fatalf("rejection %v is not ErrUnauthenticated", err)
			}
			return
		}
		admin := false
		switch sc := claims["scope"].(type) {
		case string:
			admin = slices.Contains(strings.Fields(sc), cfg.AdminScope)
		case []any:
			admin = slices.Contains(sc, any(cfg.AdminScope))
		}
		if p.Admin != admin {
			t.Fatalf("Admin = %v for scope %#v", p.Admin, claims["scope"])
		}
		if !p.Admin || p.User != "" || p.Thread != "" {
			if mounts.ValidateID("user", p.User) != nil || mounts.ValidateID("thread", p.Thread) != nil {
				t.Fatalf("accepted user %q thread %q", p.User, p.Thread)
			}
		}
		if p.Ticket != "" && (mounts.ValidateID("ticket", p.Ticket) != nil || p.Thread == "") {
			t.Fatalf("accepted ticket %q with thread %q", p.Ticket, p.Thread)
		}
		if p.User != claims["user"] && p.User != "" {
			t.Fatalf("user %q is not the claim's %#v", p.User, claims["user"])
		}
	})
}

// FuzzJWKS: no key set panics the parser, and every key it accepts is
// pinned to an algorithm that fits it.
func FuzzJWKS(f *testing.F) {
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a"}]}`)
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","alg":"ES256"}]}`)
	f.Add(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)
	f.Add(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","alg":"none"}]}`)
	f.Add(`{"keys":null}`)
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseJWKS([]byte(s))
		if err != nil {
			return
		}
		for alg, vs := range set {
			for _, v := range vs {
				if got, err := algorithmFor(v.key, alg); err != nil || got != alg {
					t.Fatalf("key %T filed under %s: %v", v.key, alg, err)
				}
			}
		}
	})
}
