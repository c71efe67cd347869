package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// testKeys are generated once: RSA generation is slow under -race.
type testKeys struct {
	secret, otherSecret []byte
	rsa                 *rsa.PrivateKey
	ec                  *ecdsa.PrivateKey
	ed, otherEd         ed25519.PrivateKey
	rsaPEM, allPEM      []byte
}

var keysOnce = sync.OnceValues(func() (*testKeys, error) {
	k := &testKeys{secret: []byte(strings.Repeat("s", 40)), otherSecret: []byte(strings.Repeat("o", 40))}
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, err
	}
	if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	if _, k.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		return nil, err
	}
	if _, k.otherEd, err = ed25519.GenerateKey(rand.Reader); err != nil {
		return nil, err
	}
	for _, pub := range []any{k.rsa.Public(), k.ec.Public(), k.ed.Public()} {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, err
		}
		b := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		if k.rsaPEM == nil {
			k.rsaPEM = b
		}
		k.allPEM = append(k.allPEM, b...)
	}
	return k, nil
})

func keys(t testing.TB) *testKeys {
	t.Helper()
	k, err := keysOnce()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// newJWT returns a jwt-mode authenticator; edit adjusts the defaults.
func newJWT(t testing.TB, edit func(*auth.JWTConfig)) auth.Authenticator {
	t.Helper()
	cfg := auth.DefaultConfig()
	cfg.Mode = auth.ModeJWT
	edit(&cfg.JWT)
	a, err := auth.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close(a) })
	return a
}

// authenticate runs a on the gRPC metadata of ctx and returns the identity.
func authenticate(a auth.Authenticator, ctx context.Context) (mounts.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	p, err := a.Authenticate(ctx, md)
	return p.Identity, err
}

func sign(t testing.TB, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// claims returns valid claims for alice in t1, changed by kv (a nil value
// deletes the claim).
func claims(kv ...any) jwt.MapClaims {
	c := jwt.MapClaims{"user": "alice", "thread": "t1", "exp": time.Now().Add(time.Hour).Unix()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

func bearer(md ...string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(md...))
}

func TestJWT(t *testing.T) {
	k := keys(t)
	now := time.Now()
	hs := newJWT(t, func(c *auth.JWTConfig) { c.SecretFile = writeFile(t, append(k.secret, '\n')) })
	strict := newJWT(t, func(c *auth.JWTConfig) {
		c.SecretFile = writeFile(t, k.secret)
		c.Issuer, c.Audience = "https://issuer.example", "skillsvc"
	})
	pub := newJWT(t, func(c *auth.JWTConfig) { c.PublicKeyFile = writeFile(t, k.allPEM) })
	rsaOnly := newJWT(t, func(c *auth.JWTConfig) { c.PublicKeyFile = writeFile(t, k.rsaPEM) })
	renamed := newJWT(t, func(c *auth.JWTConfig) {
		c.SecretFile = writeFile(t, k.secret)
		c.UserClaim, c.ThreadClaim, c.TicketClaim = "sub", "tid", "tkt"
	})
	hsTok := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, k.secret, c) }
	alice := mounts.Identity{User: "alice", Thread: "t1"}

	for _, tc := range []struct {
		name string
		a    auth.Authenticator
		ctx  context.Context
		want *mounts.Identity // nil: Unauthenticated
	}{
		{"HS256", hs, bearer("authorization", "Bearer "+hsTok(claims())), &alice},
		{"HS256 with ticket", hs, bearer("authorization", "Bearer "+hsTok(claims("ticket", "T-1"))), &mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-1"}},
		{"lower-case bearer", hs, bearer("authorization", "bearer "+hsTok(claims())), &alice},
		{"RS256", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, k.rsa, claims())), &alice},
		{"ES256", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodES256, k.ec, claims())), &alice},
		{"EdDSA", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodEdDSA, k.ed, claims("ticket", "T-2"))), &mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-2"}},
		{"renamed claims", renamed, bearer("authorization", "Bearer "+hsTok(claims("user", nil, "thread", nil, "sub", "bob", "tid", "t9", "tkt", "T-9"))), &mounts.Identity{User: "bob", Thread: "t9", Ticket: "T-9"}},
		{"identity metadata ignored", hs, bearer("authorization", "Bearer "+hsTok(claims()), auth.UserKey, "bob", auth.ThreadKey, "t2"), &alice},
		{"issuer and audience", strict, bearer("authorization", "Bearer "+hsTok(claims("iss", "https://issuer.example", "aud", []string{"other", "skillsvc"}))), &alice},
		{"nbf within leeway", hs, bearer("authorization", "Bearer "+hsTok(claims("nbf", now.Add(10*time.Second).Unix()))), &alice},
		{"exp within leeway", hs, bearer("authorization", "Bearer "+hsTok(claims("exp", now.Add(-10*time.Second).Unix()))), &alice},

		{"no metadata", hs, context.Background(), nil},
		{"identity metadata without token", hs, bearer(auth.UserKey, "alice", auth.ThreadKey, "t1"), nil},
		{"two headers", hs, bearer("authorization", "Bearer "+hsTok(claims()), "authorization", "Bearer "+hsTok(claims())), nil},
		{"not bearer", hs, bearer("authorization", "Basic "+hsTok(claims())), nil},
		{"bearer without token", hs, bearer("authorization", "Bearer "), nil},
		{"token without scheme", hs, bearer("authorization", hsTok(claims())), nil},
		{"malformed", hs, bearer("authorization", "Bearer abc.def"), nil},
		{"not base64", hs, bearer("authorization", "Bearer !!.??.**"), nil},
		{"too long", hs, bearer("authorization", "Bearer "+strings.Repeat("a", 9000)), nil},
		{"alg none", hs, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims())), nil},
		{"alg none, public keys", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims())), nil},
		{"RS384 with the RSA key", rsaOnly, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodRS384, k.rsa, claims())), nil},
		{"PS256 with the RSA key", rsaOnly, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodPS256, k.rsa, claims())), nil},
		{"HS384 with the secret", hs, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodHS384, k.secret, claims())), nil},
		{"RS256 to a secret", hs, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, k.rsa, claims())), nil},
		{"HS256 keyed with the RSA public key", rsaOnly, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.rsaPEM, claims())), nil},
		{"HS256 keyed with all public keys", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.allPEM, claims())), nil},
		{"wrong secret", hs, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, k.otherSecret, claims())), nil},
		{"wrong Ed25519 key", pub, bearer("authorization", "Bearer "+sign(t, jwt.SigningMethodEdDSA, k.otherEd, claims())), nil},
		{"expired", hs, bearer("authorization", "Bearer "+hsTok(claims("exp", now.Add(-time.Hour).Unix()))), nil},
		{"missing exp", hs, bearer("authorization", "Bearer "+hsTok(claims("exp", nil))), nil},
		{"exp not a number", hs, bearer("authorization", "Bearer "+hsTok(claims("exp", "tomorrow"))), nil},
		{"not yet valid", hs, bearer("authorization", "Bearer "+hsTok(claims("nbf", now.Add(5*time.Minute).Unix()))), nil},
		{"issued in the future", hs, bearer("authorization", "Bearer "+hsTok(claims("iat", now.Add(5*time.Minute).Unix()))), nil},
		{"wrong audience", strict, bearer("authorization", "Bearer "+hsTok(claims("iss", "https://issuer.example", "aud", "other"))), nil},
		{"no audience", strict, bearer("authorization", "Bearer "+hsTok(claims("iss", "https://issuer.example"))), nil},
		{"wrong issuer", strict, bearer("authorization", "Bearer "+hsTok(claims("iss", "https://evil.example", "aud", "skillsvc"))), nil},
		{"missing user", hs, bearer("authorization", "Bearer "+hsTok(claims("user", nil))), nil},
		{"missing thread", hs, bearer("authorization", "Bearer "+hsTok(claims("thread", nil))), nil},
		{"user ..", hs, bearer("authorization", "Bearer "+hsTok(claims("user", ".."))), nil},
		{"user a/b", hs, bearer("authorization", "Bearer "+hsTok(claims("user", "a/b"))), nil},
		{"user empty", hs, bearer("authorization", "Bearer "+hsTok(claims("user", ""))), nil},
		{"user 300 chars", hs, bearer("authorization", "Bearer "+hsTok(claims("user", strings.Repeat("a", 300)))), nil},
		{"user _shared", hs, bearer("authorization", "Bearer "+hsTok(claims("user", "_shared"))), nil},
		{"user a number", hs, bearer("authorization", "Bearer "+hsTok(claims("user", 42))), nil},
		{"thread a list", hs, bearer("authorization", "Bearer "+hsTok(claims("thread", []string{"t1"}))), nil},
		{"thread ..", hs, bearer("authorization", "Bearer "+hsTok(claims("thread", ".."))), nil},
		{"ticket a/b", hs, bearer("authorization", "Bearer "+hsTok(claims("ticket", "a/b"))), nil},
		{"ticket empty", hs, bearer("authorization", "Bearer "+hsTok(claims("ticket", ""))), nil},
		{"ticket null", hs, bearer("authorization", "Bearer "+hsTok(claims("ticket", []any{nil}))), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := authenticate(tc.a, tc.ctx)
			if tc.want == nil {
				if !errors.Is(err, auth.ErrUnauthenticated) || errkind.Of(err) != errkind.Unauthenticated {
					t.Fatalf("Authenticate = %+v, %v; want ErrUnauthenticated", id, err)
				}
				t.Log(err)
				if md, _ := metadata.FromIncomingContext(tc.ctx); len(md.Get("authorization")) > 0 {
					if tok := md.Get("authorization")[0]; len(tok) > 20 && strings.Contains(err.Error(), tok[len(tok)-20:]) {
						t.Errorf("error %q echoes the token", err)
					}
				}
				if len(err.Error()) > 120 {
					t.Errorf("error too long: %q", err)
				}
				return
			}
			if err != nil || id != *tc.want {
				t.Errorf("Authenticate = %+v, %v; want %+v", id, err, *tc.want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	k := keys(t)
	secret := writeFile(t, k.secret)
	for _, tc := range []struct {
		name string
		edit func(*auth.Config)
		ok   bool
	}{
		{"default insecure", func(*auth.Config) {}, true},
		{"unknown mode", func(c *auth.Config) { c.Mode = "trust-me" }, false},
		{"jwt without key", func(c *auth.Config) { c.Mode = auth.ModeJWT }, false},
		{"jwt with secret", func(c *auth.Config) { c.Mode, c.JWT.SecretFile = auth.ModeJWT, secret }, true},
		{"jwt with public keys", func(c *auth.Config) { c.Mode, c.JWT.PublicKeyFile = auth.ModeJWT, writeFile(t, k.allPEM) }, true},
		{"jwt with secret and public keys", func(c *auth.Config) {
			c.Mode, c.JWT.SecretFile, c.JWT.PublicKeyFile = auth.ModeJWT, secret, writeFile(t, k.allPEM)
		}, true},
		{"missing secret file", func(c *auth.Config) { c.Mode, c.JWT.SecretFile = auth.ModeJWT, filepath.Join(t.TempDir(), "nope") }, false},
		{"short secret", func(c *auth.Config) { c.Mode, c.JWT.SecretFile = auth.ModeJWT, writeFile(t, []byte("short")) }, false},
		{"private key as public key", func(c *auth.Config) {
			der, _ := x509.MarshalPKCS8PrivateKey(k.ed)
			c.Mode, c.JWT.PublicKeyFile = auth.ModeJWT, writeFile(t, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		}, false},
		{"no PEM", func(c *auth.Config) { c.Mode, c.JWT.PublicKeyFile = auth.ModeJWT, writeFile(t, k.secret) }, false},
		{"negative leeway", func(c *auth.Config) { c.Mode, c.JWT.SecretFile, c.JWT.Leeway = auth.ModeJWT, secret, -time.Second }, false},
		{"same claim twice", func(c *auth.Config) {
			c.Mode, c.JWT.SecretFile, c.JWT.ThreadClaim = auth.ModeJWT, secret, "user"
		}, false},
		{"scope claim named like the user's", func(c *auth.Config) {
			c.Mode, c.JWT.SecretFile, c.JWT.ScopeClaim = auth.ModeJWT, secret, "user"
		}, false},
		{"jwks url not http", func(c *auth.Config) { c.Mode, c.JWT.JWKSURL = auth.ModeJWT, "file:///etc/passwd" }, false},
		{"jwks url unreachable", func(c *auth.Config) { c.Mode, c.JWT.JWKSURL = auth.ModeJWT, "http://127.0.0.1:1/jwks" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := auth.DefaultConfig()
			tc.edit(&cfg)
			a, err := auth.New(t.Context(), cfg, nil)
			if err == nil {
				auth.Close(a)
			}
			if (err == nil) != tc.ok {
				t.Errorf("New = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// FuzzJWT: no input panics, and an accepted token is one the secret
// signed (checked here independently of the parser) with HS256, naming
// valid IDs.
func FuzzJWT(f *testing.F) {
	k := keys(f)
	a := newJWT(f, func(c *auth.JWTConfig) { c.SecretFile = writeFile(f, k.secret) })
	for _, c := range []jwt.MapClaims{claims(), claims("ticket", "T-1"), claims("user", ".."), claims("exp", nil)} {
		f.Add(sign(f, jwt.SigningMethodHS256, k.secret, c))
	}
	f.Add(sign(f, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims()))
	f.Add(sign(f, jwt.SigningMethodHS256, k.otherSecret, claims()))
	f.Add(sign(f, jwt.SigningMethodEdDSA, k.ed, claims()))
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		id, err := authenticate(a, bearer("authorization", "Bearer "+token))
		if err != nil {
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("error %v is not ErrUnauthenticated", err)
			}
			return
		}
		parts := strings.Split(strings.TrimSpace(token), ".")
		if len(parts) != 3 {
			t.Fatalf("accepted a token of %d parts", len(parts))
		}
		sig, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			t.Fatalf("accepted a token whose signature does not decode: %v", err)
		}
		if err := jwt.SigningMethodHS256.Verify(parts[0]+"."+parts[1], sig, k.secret); err != nil {
			t.Fatalf("accepted a token not signed by the key: %v", err)
		}
		for kind, v := range map[string]string{"user": id.User, "thread": id.Thread} {
			if mounts.ValidateID(kind, v) != nil {
				t.Fatalf("accepted invalid %s %q", kind, v)
			}
		}
		if id.Ticket != "" && mounts.ValidateID("ticket", id.Ticket) != nil {
			t.Fatalf("accepted invalid ticket %q", id.Ticket)
		}
	})
}
