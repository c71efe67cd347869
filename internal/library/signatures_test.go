package library_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// TestSignedApproval: under a policy requiring the shared library's
// versions to be signed by "release", an admin's approval of an unsigned
// proposal is refused and records nothing; once the proposal is signed the
// approval makes it live, the signature goes with its files, and the
// provenance names publisher, approver and key.
func TestSignedApproval(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	signer, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "release.pub")
	if err := os.WriteFile(pub, signer.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		e := newEnv(t, newBucket(t), func(c *library.Config) {
			c.Review = true
			c.Signing = signing.Config{Keys: "release=" + pub, Require: "shared=release"}
		})
		ctx := t.Context()
		res, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "pdf", Files: folder("pdf", "One.")})
		if err != nil || !res.Pending {
			t.Fatalf("bob's proposal: %+v %v", res, err)
		}
		prop := res.Version
		_, err = e.pub.Review(ctx, admin, shared, "pdf", prop.ID, true, "ok")
		if errkind.Of(err) != errkind.FailedPrecondition || !errors.Is(err, signing.ErrUnsigned) {
			t.Fatalf("approving an unsigned proposal: %v", err)
		}
		if v, _, err := e.pub.GetVersion(ctx, admin, shared, "pdf", prop.ID); err != nil || v.State != versions.Pending || v.Reviewer != "" {
			t.Fatalf("a refused approval recorded %+v, %v", v.Record, err)
		}
		bundle, err := signer.Sign(ctx, "pdf", prop.Content)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.pub.AttachSignature(ctx, bob, shared, "pdf", prop.ID, bundle, nil); err != nil {
			t.Fatalf("bob signs his proposal: %v", err)
		}
		done, err := e.pub.Review(ctx, admin, shared, "pdf", prop.ID, true, "ok")
		if err != nil || done.Version.ID != prop.Content || len(done.Version.Signatures) != 1 || done.Version.Signatures[0].KeyName != "release" {
			t.Fatalf("approving a signed proposal: %+v %v", done.Version.Record, err)
		}
		if got := e.listed(t, "carol")["pdf@shared"]; got != prop.Content {
			t.Fatalf("the approved version is not live: %q", got)
		}
		p, err := e.pub.Provenance(ctx, shared, "pdf", skillmd.ManifestDigest(done.Version.Files))
		want := library.Provenance{Version: prop.Content, Publisher: "bob", Approver: "root", ScanVerdict: library.Unscanned, Signature: library.Verified, SignatureKey: "release"}
		if err != nil || p != want {
			t.Fatalf("provenance %+v, %v", p, err)
		}
	})
}
