package library

import (
	"context"
	"fmt"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Signatures: a version's manifest digest signed by a key (a Sigstore
// bundle, internal/signing) is attached to its record after the server
// verified it; a library's policy (--library.require-signature) then lets a
// version go live only with a valid signature by one of the named keys.

// signedDigest is what a signature of rec must name: the digest of the
// files the record holds, recomputed, whatever its id says.
func signedDigest(rec versions.Record) string { return skillmd.ManifestDigest(rec.Files) }

// AttachSignature verifies bundle (by pub, a PEM public key, or else by the
// configured keys) as a signature of the version ref's manifest digest and
// stores it with the version (a proposal too), replacing one by the same
// key. Who may publish to the library may attach.
func (p *Publisher) AttachSignature(ctx context.Context, a Actor, lib layout.LibraryRef, name, ref string, bundle, pub []byte) (_ Version, err error) {
	defer func() { count(p.metrics, "sign", err) }()
	l, _, err := p.authorize(a, lib, publish)
	if err != nil {
		return Version{}, err
	}
	if err := checkName(name); err != nil {
		return Version{}, err
	}
	if _, _, err := signing.Parse(bundle); err != nil {
		return Version{}, err
	}
	keys := p.cfg.Policy().Keys()
	if len(pub) > 0 {
		k, err := signing.ParsePublicKey("", pub)
		if err != nil {
			return Version{}, fmt.Errorf("%w: public_key: %v", errkind.InvalidArgument, err)
		}
		if named, ok := p.cfg.Policy().Named(k.ID); ok {
			k = named
		}
		keys = []signing.PublicKey{k}
	} else if len(keys) == 0 {
		return Version{}, fmt.Errorf("%w: public_key is required: the server has no --library.signing-keys to verify the bundle with", errkind.InvalidArgument)
	}
	s := p.store(l)
	var out Version
	err = p.lock(ctx, l, name, func() error {
		v, err := p.find(ctx, a, l, name, ref)
		if err != nil {
			return err
		}
		k, err := signing.Verify(bundle, signedDigest(v.Record), keys)
		if err != nil {
			return fmt.Errorf("%w (version %s of %s holds files of digest %s)", err, v.ID, name, signedDigest(v.Record))
		}
		sig := versions.Signature{KeyID: k.ID, KeyName: k.Name, Bundle: string(bundle), PublicKey: string(k.PEM()), By: a.Author, Time: p.now().UTC()}
		rec, err := p.setState(ctx, s, v.Record, func(r *versions.Record) { r.Signatures = versions.WithSignature(r.Signatures, sig) })
		if err != nil {
			return err
		}
		v.Record = rec
		out = v
		// A signature of the live version changes what listings show.
		if refs, _, err := s.Refs(ctx, name); err == nil && refs.Labels[versions.Latest] == rec.ID {
			p.indexProvenance(ctx, l, rec)
		}
		return nil
	})
	return out, err
}

// checkSigned refuses rec going live in library l when the library's
// policy requires a signature rec does not carry: the one check every way
// to live takes (goLive; makeLive before an approval is recorded).
func (p *Publisher) checkSigned(l layout.LibraryRef, rec versions.Record) error {
	req := p.cfg.Policy().Required(l)
	if len(req) == 0 {
		return nil
	}
	digest := signedDigest(rec)
	if signing.Satisfied(kept(rec), digest, req) {
		return nil
	}
	has := make([]string, 0, len(rec.Signatures))
	for _, sg := range rec.Signatures {
		has = append(has, "key "+sg.KeyID)
	}
	what := "no signature"
	if len(has) > 0 {
		what = "signatures by " + strings.Join(has, ", ") + " only"
	}
	return fmt.Errorf("%w: %w: this library requires version %s of %s (digest %s) to be signed by %s before it goes live, and it has %s; the version is stored but not live: sign it (skillctl sign %s@%s --key FILE), then make it live (skillctl rollback, or approve it)",
		errkind.FailedPrecondition, signing.ErrUnsigned, rec.ID, rec.Name, digest, signing.Labels(req), what, rec.Name, rec.ID)
}

// Signature statuses (signing's) and the scan verdict of a version no scan
// has looked at.
const (
	Unsigned  = signing.Unsigned
	Verified  = signing.Verified
	Invalid   = signing.Invalid
	Unscanned = "unscanned"
)

// kept is rec's signatures as signing checks them.
func kept(rec versions.Record) []signing.Kept {
	out := make([]signing.Kept, len(rec.Signatures))
	for i, sg := range rec.Signatures {
		out[i] = signing.Kept{Bundle: sg.Bundle, PublicKey: sg.PublicKey}
	}
	return out
}

// Provenance is the provenance of the live copy of name (its folder) in
// library l whose manifest digest is digest: one read of the version
// record of that digest. A live copy no version holds was uploaded out of
// band.
func (p *Publisher) Provenance(ctx context.Context, l layout.LibraryRef, name, digest string) (Provenance, error) {
	out := Provenance{ScanVerdict: Unscanned, Signature: Unsigned, OutOfBand: true}
	h := versions.HexOf(digest)
	if len(h) != 64 || checkName(name) != nil || l.Validate() != nil {
		return out, nil
	}
	// The version record alone: a proposal is named by its author and
	// content (versions.ProposalID), never by a manifest digest, and would
	// not be live anyway (Record's second read, of a proposal by this hex,
	// only ever found nothing, on every out-of-band copy a listing met).
	st := p.store(l)
	rec, _, err := st.RecordAt(ctx, st.RecordKey(name, h))
	if errkind.Of(err) == errkind.NotFound || (err == nil && (rec.State != versions.Published || rec.Proposal())) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out = Provenance{Version: rec.ID, Publisher: rec.Author, Approver: rec.Reviewer, ScanVerdict: rec.ScanVerdict, Signature: Unsigned}
	if out.ScanVerdict == "" {
		out.ScanVerdict = Unscanned
	}
	out.Signature, out.SignatureKey = p.cfg.Policy().Status(kept(rec), signedDigest(rec))
	return out, nil
}
