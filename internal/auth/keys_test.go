package auth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is a public JWK for the RSA, P-256 or Ed25519 test keys.
func jwkRSA(pub *rsa.PublicKey, kid, alg string) map[string]any {
	m := map[string]any{"kty": "RSA", "n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()), "kid": kid, "use": "sig"}
	if alg != "" {
		m["alg"] = alg
	}
	return m
}

func jwksJSON(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withKID(t testing.TB, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func okay(t *testing.T, a auth.Authenticator, token string) bool {
	t.Helper()
	_, err := authenticate(a, bearer("authorization", "Bearer "+token))
	return err == nil
}

// TestJWKSFile: keys from a JWKS, each pinned to its alg; the file is
// reloaded when it changes, and a bad edit keeps the previous keys.
func TestJWKSFile(t *testing.T) {
	k := keys(t)
	ed := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(k.ed.Public().(ed25519.PublicKey)), "kid": "ed-1"}
	path := writeFile(t, jwksJSON(t, jwkRSA(&k.rsa.PublicKey, "rsa-1", "PS256"), ed))
	a := newJWT(t, func(c *auth.JWTConfig) { c.JWKSFile, c.ReloadInterval = path, 5*time.Millisecond })

	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"PS256 as the JWK says", withKID(t, jwt.SigningMethodPS256, k.rsa, "rsa-1", claims()), true},
		{"PS256 without kid", sign(t, jwt.SigningMethodPS256, k.rsa, claims()), true},
		{"RS256 with a PS256 key", withKID(t, jwt.SigningMethodRS256, k.rsa, "rsa-1", claims()), false},
		{"EdDSA", withKID(t, jwt.SigningMethodEdDSA, k.ed, "ed-1", claims()), true},
		{"EdDSA naming the RSA kid", withKID(t, jwt.SigningMethodEdDSA, k.ed, "rsa-1", claims()), true},
		{"EdDSA with another key", withKID(t, jwt.SigningMethodEdDSA, k.otherEd, "ed-1", claims()), false},
		{"HS256 keyed with the JWKS", sign(t, jwt.SigningMethodHS256, jwksJSON(t, ed), claims()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := okay(t, a, tc.token); got != tc.ok {
				t.Errorf("accepted = %v, want %v", got, tc.ok)
			}
		})
	}

	// Rotate: the Ed25519 key is replaced by another.
	other := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(k.otherEd.Public().(ed25519.PublicKey)), "kid": "ed-2"}
	oldTok := withKID(t, jwt.SigningMethodEdDSA, k.ed, "ed-1", claims())
	newTok := withKID(t, jwt.SigningMethodEdDSA, k.otherEd, "ed-2", claims())
	filewatchtest.Replace(t, path, jwksJSON(t, other))
	waitFor(t, "the rotated key", func() bool { return okay(t, a, newTok) })
	if okay(t, a, oldTok) {
		t.Error("a token of the removed key is still accepted")
	}
	// A broken edit keeps the keys in force.
	filewatchtest.Replace(t, path, []byte(`{"keys": [`))
	if !okay(t, a, newTok) {
		t.Error("a broken key file dropped the keys")
	}
}

// waitFor polls cond until it holds, failing after 10s: for changes a
// background poller applies.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not apply within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSecretRotation: a rewritten HS256 secret applies without restart.
func TestSecretRotation(t *testing.T) {
	k := keys(t)
	path := writeFile(t, k.secret)
	a := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile, c.ReloadInterval = path, 5*time.Millisecond })
	oldTok, newTok := sign(t, jwt.SigningMethodHS256, k.secret, claims()), sign(t, jwt.SigningMethodHS256, k.otherSecret, claims())
	if !okay(t, a, oldTok) || okay(t, a, newTok) {
		t.Fatal("before rotation: want only the old secret's tokens")
	}
	filewatchtest.Replace(t, path, k.otherSecret)
	waitFor(t, "the new secret", func() bool { return okay(t, a, newTok) })
	if okay(t, a, oldTok) {
		t.Error("the old secret still verifies")
	}
	filewatchtest.Replace(t, path, []byte("short"))
	if !okay(t, a, newTok) {
		t.Error("a too-short secret replaced the good one")
	}
}

func TestJWKSRefused(t *testing.T) {
	k := keys(t)
	for _, tc := range []struct {
		name string
		keys []map[string]any
	}{
		{"symmetric key", []map[string]any{{"kty": "oct", "k": b64(k.secret)}}},
		{"private key", []map[string]any{{"kty": "OKP", "crv": "Ed25519", "x": b64(k.ed.Public().(ed25519.PublicKey)), "d": b64(k.ed.Seed())}}},
		{"alg not fitting the key", []map[string]any{jwkRSA(&k.rsa.PublicKey, "r", "ES256")}},
		{"only encryption keys", []map[string]any{{"kty": "OKP", "crv": "Ed25519", "x": b64(k.ed.Public().(ed25519.PublicKey)), "use": "enc"}}},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := auth.DefaultConfig()
			cfg.Mode, cfg.JWT.JWKSFile = auth.ModeJWT, writeFile(t, jwksJSON(t, tc.keys...))
			if a, err := auth.New(t.Context(), cfg, nil); err == nil {
				auth.Close(a)
				t.Error("New accepted the key set")
			}
		})
	}
}

// TestJWKSURL: keys fetched from the issuer; a token naming an unknown kid
// makes the next refresh come early, so a rotation at the issuer is picked
// up without waiting for the refresh interval.
func TestJWKSURL(t *testing.T) {
	k := keys(t)
	var current atomic.Value
	current.Store(jwksJSON(t, jwkRSA(&k.rsa.PublicKey, "rsa-1", "")))
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(current.Load().([]byte))
	}))
	t.Cleanup(srv.Close)
	a := newJWT(t, func(c *auth.JWTConfig) { c.JWKSURL, c.JWKSRefresh = srv.URL, time.Hour })
	if !okay(t, a, withKID(t, jwt.SigningMethodRS256, k.rsa, "rsa-1", claims())) {
		t.Fatal("a token of the fetched key was refused")
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches after one verification, want 1 (at start)", n)
	}
	ed := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(k.ed.Public().(ed25519.PublicKey)), "kid": "ed-9"}
	current.Store(jwksJSON(t, ed))
	tok := withKID(t, jwt.SigningMethodEdDSA, k.ed, "ed-9", claims())
	waitFor(t, "the issuer's new key", func() bool { return okay(t, a, tok) })
	// Unknown kids cannot make us fetch on every call.
	for i := range 20 {
		okay(t, a, withKID(t, jwt.SigningMethodEdDSA, k.ed, "made-up-"+string(rune('a'+i)), claims()))
	}
	if n := fetches.Load(); n > 3 {
		t.Errorf("%d fetches, want unknown kids rate-limited", n)
	}

	// The issuer down at start: New fails rather than serve with no keys.
	srv.Close()
	cfg := auth.DefaultConfig()
	cfg.Mode, cfg.JWT.JWKSURL = auth.ModeJWT, srv.URL
	if a, err := auth.New(t.Context(), cfg, nil); err == nil {
		auth.Close(a)
		t.Error("New succeeded with an unreachable jwks url")
	}
}

// TestAdminScope: the scope claim makes a token an admin token; admins may
// name no identity, agents must.
func TestAdminScope(t *testing.T) {
	k := keys(t)
	a := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	for _, tc := range []struct {
		name      string
		c         jwt.MapClaims
		admin, ok bool
	}{
		{"agent", claims(), false, true},
		{"scope string", claims("scope", "read skillsvc:admin"), true, true},
		{"scope list", claims("scope", []string{"skillsvc:admin"}), true, true},
		{"admin without identity", claims("user", nil, "thread", nil, "scope", "skillsvc:admin", "sub", "ops"), true, true},
		{"other scope without identity", claims("user", nil, "thread", nil, "scope", "read"), false, false},
		{"admin scope as a prefix", claims("scope", "skillsvc:admin2"), false, true},
		{"scope a number", claims("scope", 7), false, false},
		{"scope list with a number", claims("scope", []any{"skillsvc:admin", 7}), false, false},
		{"too many scopes", claims("scope", strings.Repeat("x ", 100)+"skillsvc:admin"), false, false},
		{"admin with user but no thread", claims("thread", nil, "scope", "skillsvc:admin"), false, false},
		{"admin with hostile user", claims("user", "..", "scope", "skillsvc:admin"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := metadata.Pairs("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.secret, tc.c))
			p, err := a.Authenticate(context.Background(), md)
			if (err == nil) != tc.ok || (err == nil && p.Admin != tc.admin) {
				t.Errorf("Authenticate = %+v, %v; want ok=%v admin=%v", p, err, tc.ok, tc.admin)
			}
		})
	}
}

// TestRoles: what Check lets through per method and principal.
func TestRoles(t *testing.T) {
	k := keys(t)
	a := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	agent := metadata.Pairs("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.secret, claims()))
	admin := metadata.Pairs("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.secret, claims("user", nil, "thread", nil, "scope", "skillsvc:admin")))
	const fs, adm, health = "/skillsvc.v1.FilesystemService/List", "/skillsvc.v1.AdminService/DropSkillIndex", "/grpc.health.v1.Health/Check"
	for _, tc := range []struct {
		name   string
		a      auth.Authenticator
		md     metadata.MD
		method string
		want   string // "" ok, else the error's text contains it
	}{
		{"agent on its mounts", a, agent, fs, ""},
		{"agent on admin", a, agent, adm, "admin token"},
		{"admin on admin", a, admin, adm, ""},
		{"admin without identity on mounts", a, admin, fs, "no user and thread"},
		{"no token on health", a, nil, health, ""},
		{"insecure admin", auth.Metadata{}, nil, adm, ""},
		{"insecure without identity", auth.Metadata{}, nil, fs, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := auth.Check(context.Background(), tc.a, mounts.Default(), tc.md, tc.method)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRequireAdmin(t *testing.T) {
	k := keys(t)
	a := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, k.secret) })
	h := auth.RequireAdmin(a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("metrics")) }))
	for _, tc := range []struct {
		name, authz string
		want        int
	}{
		{"none", "", http.StatusUnauthorized},
		{"forged", "Bearer a.b.c", http.StatusUnauthorized},
		{"agent", "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, claims()), http.StatusForbidden},
		{"admin", "Bearer " + sign(t, jwt.SigningMethodHS256, k.secret, claims("scope", "skillsvc:admin")), http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/metrics", nil)
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("status = %d, want %d", w.Code, tc.want)
			}
		})
	}
}

func TestCheckListener(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		allow bool
		ok    bool
	}{
		{"127.0.0.1:7070", false, true},
		{"[::1]:7070", false, true},
		{"localhost:7070", false, true},
		{"127.0.0.2:0", false, true},
		{"0.0.0.0:7070", false, false},
		{":7070", false, false},
		{"[::]:7070", false, false},
		{"10.0.0.5:7070", false, false},
		{"skillsvc.example:7070", false, false},
		{"0.0.0.0:7070", true, true},
	} {
		cfg := auth.DefaultConfig()
		cfg.AllowInsecureRemote = tc.allow
		if err := cfg.CheckListener(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckListener(%q, allow=%v) = %v, want ok=%v", tc.addr, tc.allow, err, tc.ok)
		}
		cfg.Mode = auth.ModeJWT
		if err := cfg.CheckListener(tc.addr); err != nil {
			t.Errorf("jwt mode: CheckListener(%q) = %v", tc.addr, err)
		}
	}
}
