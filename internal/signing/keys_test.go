package signing_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"

	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/testserver/kmstest"
)

// TestEncryptedKey: a key encrypted as cosign writes it (scrypt and
// secretbox by go-securesystemslib, under either PEM type) signs once
// decrypted with its password; a wrong or missing password is
// ErrPassword, and the decrypted key's bundles verify against its public
// key. (cmd/skillctl's end-to-end test reads a real cosign key pair.)
func TestEncryptedKey(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	enc, err := encrypted.Encrypt(der, []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY"} {
		t.Run(typ, func(t *testing.T) {
			data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: enc})
			pass := func(p string) func() ([]byte, error) { return func() ([]byte, error) { return []byte(p), nil } }
			s, err := signing.ParsePrivateKeyPassword(data, pass("hunter2"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Sign(context.Background(), "pdf", digest)
			if err != nil {
				t.Fatal(err)
			}
			if err := sigstoreGoVerify(b, strings.TrimPrefix(digest, "sha256:"), &k.PublicKey); err != nil {
				t.Fatalf("the decrypted key's bundle: %v", err)
			}
			if _, err := signing.ParsePrivateKeyPassword(data, pass("hunter3")); !errors.Is(err, signing.ErrPassword) || !strings.Contains(err.Error(), "wrong password") {
				t.Errorf("a wrong password: %v", err)
			}
			if _, err := signing.ParsePrivateKey(data); !errors.Is(err, signing.ErrPassword) {
				t.Errorf("no password: %v", err)
			}
		})
	}
}

// TestKMSKey: through sigstore's awskms provider against a KMS-compatible
// server, LoadSigner signs in the KMS and LoadPublicKey fetches the same
// public key; sigstore-go verifies the bundle with the key the KMS holds.
// A scheme no provider registered is refused (no plugin is run).
func TestKMSKey(t *testing.T) {
	k := kmstest.Start(t)
	for name, v := range k.Env() {
		t.Setenv(name, v)
	}
	ref, pub := k.NewSigningKey(t, "release")
	ctx := t.Context()
	s, err := signing.LoadSigner(ctx, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := signing.LoadPublicKey(ctx, "release", ref)
	if err != nil || got.ID != s.Public().ID {
		t.Fatalf("public key %+v, %v; the signer's %s", got, err, s.Public().ID)
	}
	b, err := s.Sign(ctx, "pdf", digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := sigstoreGoVerify(b, strings.TrimPrefix(digest, "sha256:"), pub); err != nil {
		t.Fatalf("sigstore-go refuses the KMS-signed bundle: %v", err)
	}
	if _, err := signing.Verify(b, digest, []signing.PublicKey{got}); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.LoadSigner(ctx, strings.Replace(ref, "/alias/release", "/alias/nothing", 1), nil); err == nil {
		t.Error("a key the KMS does not hold")
	}
	if _, err := signing.LoadPublicKey(ctx, "x", "nokms://key"); err == nil || !strings.Contains(err.Error(), "unsupported KMS") {
		t.Errorf("an unknown scheme: %v", err)
	}
	// A KMS key in the policy's configuration: its public key, fetched.
	other := filepath.Join(t.TempDir(), "other.pub")
	os.WriteFile(other, s.Public().PEM(), 0o644)
	p, err := signing.Config{Keys: "release=" + ref + ",file=" + other, Require: "shared=release"}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ks := p.Keys(); len(ks) != 2 || ks[1].Name != "release" || ks[1].ID != s.Public().ID {
		t.Fatalf("policy keys %+v", ks)
	}
}
