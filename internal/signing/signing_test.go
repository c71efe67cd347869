package signing_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/signing"
)

const digest = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// NewKeyPEM makes a private key PEM (PKCS#8) of the given kind.
func newKeyPEM(t testing.TB, kind string) []byte {
	t.Helper()
	var k any
	switch kind {
	case "ed25519":
		_, k, _ = ed25519.GenerateKey(rand.Reader)
	default:
		k, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// TestSignVerify: a bundle verifies against its signer's public key and
// digest only; another key, another digest or a flipped byte is refused.
func TestSignVerify(t *testing.T) {
	for _, kind := range []string{"ecdsa", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			s, err := signing.ParsePrivateKey(newKeyPEM(t, kind))
			if err != nil {
				t.Fatal(err)
			}
			other, _ := signing.ParsePrivateKey(newKeyPEM(t, kind))
			pub, err := signing.ParsePublicKey("release", s.Public().PEM())
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Sign(context.Background(), "pdf", digest)
			if err != nil {
				t.Fatal(err)
			}
			got, err := signing.Verify(b, digest, []signing.PublicKey{other.Public(), pub})
			if err != nil || got.Name != "release" {
				t.Fatalf("verify: %v %v", got, err)
			}
			if d, hint, err := signing.Parse(b); err != nil || d != digest || hint != pub.ID {
				t.Fatalf("parse: %s %s %v", d, hint, err)
			}
			if _, err := signing.Verify(b, digest, []signing.PublicKey{other.Public()}); !errors.Is(err, signing.ErrInvalid) || errkind.Of(err) != errkind.FailedPrecondition {
				t.Fatalf("another key: %v", err)
			}
			if _, err := signing.Verify(b, "sha256:"+strings.Repeat("1", 64), []signing.PublicKey{pub}); !errors.Is(err, signing.ErrInvalid) {
				t.Fatalf("another digest: %v", err)
			}
			// Flip a byte of the signature (base64 in the JSON).
			i := strings.Index(string(b), `"sig":"`) + len(`"sig":"`) + 4
			bad := []byte(string(b))
			if bad[i] == 'A' {
				bad[i] = 'B'
			} else {
				bad[i] = 'A'
			}
			if _, err := signing.Verify(bad, digest, []signing.PublicKey{pub}); err == nil {
				t.Fatal("a tampered bundle verified")
			}
		})
	}
}

// TestParseRefuses: what is not a bundle of ours is INVALID_ARGUMENT.
func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"empty":    "",
		"not json": "{",
		"no dsse":  `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`,
		"too big":  strings.Repeat(" ", signing.MaxBundleBytes+1),
	} {
		if _, _, err := signing.Parse([]byte(in)); errkind.Of(err) != errkind.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParse: Parse never panics, and whatever it accepts names a
// well-formed digest and verifies as nothing but ErrInvalid-or-valid.
func FuzzParse(f *testing.F) {
	s, _ := signing.ParsePrivateKey(newKeyPEM(f, "ecdsa"))
	b, _ := s.Sign(context.Background(), "pdf", digest)
	f.Add(b)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, _, err := signing.Parse(data)
		if err != nil {
			if errkind.Of(err) != errkind.InvalidArgument {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if len(d) != len(digest) || !strings.HasPrefix(d, "sha256:") {
			t.Fatalf("accepted digest %q", d)
		}
		if _, err := signing.Verify(data, d, []signing.PublicKey{s.Public()}); err != nil && !errors.Is(err, signing.ErrInvalid) && errkind.Of(err) != errkind.InvalidArgument {
			t.Fatalf("verify: %v", err)
		}
	})
}

// sigstoreGoVerify verifies a bundle as sigstore-go does a keyed one (no
// timestamps, the artifact given by digest).
func sigstoreGoVerify(b []byte, digestHex string, pub crypto.PublicKey) error {
	var bun bundle.Bundle
	if err := bun.UnmarshalJSON(b); err != nil {
		return err
	}
	var sv signature.Verifier
	var err error
	if ed, ok := pub.(ed25519.PublicKey); ok {
		sv, err = signature.LoadED25519Verifier(ed)
	} else {
		sv, err = signature.LoadVerifier(pub, crypto.SHA256)
	}
	if err != nil {
		return err
	}
	tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		return err
	}
	raw, _ := hex.DecodeString(digestHex)
	_, err = v.Verify(&bun, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithKey()))
	return err
}

// TestSigstoreGoAgrees: sigstore-go's own verifier accepts our bundles
// with the signer's key and refuses them with another key, another digest
// or a flipped signature byte, as Verify does: the bundles are the
// standard format, not only ours.
func TestSigstoreGoAgrees(t *testing.T) {
	for _, kind := range []string{"ecdsa", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			s, _ := signing.ParsePrivateKey(newKeyPEM(t, kind))
			other, _ := signing.ParsePrivateKey(newKeyPEM(t, kind))
			b, err := s.Sign(context.Background(), "pdf", digest)
			if err != nil {
				t.Fatal(err)
			}
			pub := publicOf(t, s)
			h := strings.TrimPrefix(digest, "sha256:")
			if err := sigstoreGoVerify(b, h, pub); err != nil {
				t.Fatalf("sigstore-go refuses our bundle: %v", err)
			}
			if sigstoreGoVerify(b, h, publicOf(t, other)) == nil {
				t.Error("sigstore-go accepts another key")
			}
			if sigstoreGoVerify(b, strings.Repeat("1", 64), pub) == nil {
				t.Error("sigstore-go accepts another digest")
			}
			i := strings.Index(string(b), `"sig":"`) + len(`"sig":"`) + 4
			bad := []byte(string(b))
			bad[i] ^= 1
			_, ours := signing.Verify(bad, digest, []signing.PublicKey{s.Public()})
			if theirs := sigstoreGoVerify(bad, h, pub); (theirs == nil) != (ours == nil) {
				t.Errorf("a flipped byte: sigstore-go %v, ours %v", theirs, ours)
			}
		})
	}
}

func publicOf(t *testing.T, s *signing.Signer) crypto.PublicKey {
	t.Helper()
	b, _ := pem.Decode(s.Public().PEM())
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyNameLimit: --library.signing-keys refuses a key name past
// MaxKeyName (replies reserve room for names that long), before reading
// the key, and takes one of exactly that length.
func TestKeyNameLimit(t *testing.T) {
	dir := t.TempDir()
	s, err := signing.ParsePrivateKey(newKeyPEM(t, "ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	pub := dir + "/k.pub"
	if err := os.WriteFile(pub, s.Public().PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, keys string
		ok         bool
	}{
		{"at the limit", strings.Repeat("k", signing.MaxKeyName) + "=" + pub, true},
		{"past it", strings.Repeat("k", signing.MaxKeyName+1) + "=" + pub, false},
		{"past it, key unread", strings.Repeat("k", signing.MaxKeyName+1) + "=" + dir + "/missing.pub", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := signing.Config{Keys: tc.keys}.Load()
			if tc.ok != (err == nil) {
				t.Fatalf("Load = %v, want ok %v", err, tc.ok)
			}
			if !tc.ok && !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", signing.MaxKeyName)) {
				t.Fatalf("error %q does not name the limit", err)
			}
		})
	}
}
