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

// keyFile makes an Ed25519 signer and writes its public key into dir.
func keyFile(t *testing.T, dir, name string) (*signing.Signer, string) {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	s, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, name+".pub")
	if err := os.WriteFile(pub, s.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, pub
}

// TestSigningKeyRotation: rotating the key a library requires (docs:
// add the new key, re-sign, remove the old). While the policy accepts
// old|new, a version signed by the old key still goes live and shows as
// verified by "old"; once only new is required, it is refused going live
// until it is re-signed by the new key.
func TestSigningKeyRotation(t *testing.T) {
	dir := t.TempDir()
	oldS, oldPub := keyFile(t, dir, "old")
	newS, newPub := keyFile(t, dir, "new")
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		b := newBucket(t)
		ctx := t.Context()
		policy := func(keys, require string) env {
			return newEnv(t, b, func(c *library.Config) {
				c.Review = false
				c.Signing = signing.Config{Keys: keys, Require: require}
			})
		}
		// Two versions, published before any policy: v1 to be signed by
		// the old key, v2 by the new.
		e := policy("old="+oldPub+",new="+newPub, "")
		sign := func(e env, s *signing.Signer, v library.Version) {
			t.Helper()
			bundle, err := s.Sign(ctx, "pdf", v.ID) // a version's id is its manifest digest
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.pub.AttachSignature(ctx, admin, shared, "pdf", v.ID, bundle, nil); err != nil {
				t.Fatal(err)
			}
		}
		var vs []library.Version
		for _, desc := range []string{"One.", "Two."} {
			res, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Name: "pdf", Files: folder("pdf", desc)})
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, res.Version)
		}
		v1, v2 := vs[0], vs[1]
		sign(e, oldS, v1)
		sign(e, newS, v2)
		rollback := func(e env, v library.Version) error {
			_, err := e.pub.Rollback(ctx, admin, shared, "pdf", v.ID, "")
			return err
		}

		// During the rotation: either key.
		e = policy("old="+oldPub+",new="+newPub, "shared=old|new")
		if err := rollback(e, v1); err != nil {
			t.Fatalf("a version signed by the old key, old|new required: %v", err)
		}
		if p, err := e.pub.Provenance(ctx, shared, "pdf", v1.ID); err != nil || p.Signature != library.Verified || p.SignatureKey != "old" {
			t.Fatalf("its provenance: %+v %v", p, err)
		}
		if err := rollback(e, v2); err != nil {
			t.Fatalf("a version signed by the new key, old|new required: %v", err)
		}

		// After it: the new key only.
		e = policy("new="+newPub, "shared=new")
		if err := rollback(e, v1); errkind.Of(err) != errkind.FailedPrecondition || !errors.Is(err, signing.ErrUnsigned) {
			t.Fatalf("a version signed only by the old key, new required: %v", err)
		}
		if got := e.listed(t, "carol")["pdf@shared"]; got != v2.ID {
			t.Fatalf("the refused rollback changed what is live: %q", got)
		}
		sign(e, newS, v1)
		if err := rollback(e, v1); err != nil {
			t.Fatalf("re-signed by the new key: %v", err)
		}
		if got := e.listed(t, "carol")["pdf@shared"]; got != v1.ID {
			t.Fatalf("the re-signed version is not live: %q", got)
		}
	})
}
