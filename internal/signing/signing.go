package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// What a signature's statement says, and how a bundle is typed.
const (
	PayloadType   = "application/vnd.in-toto+json"
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://skillsvc.dev/signature/v1"
	BundleMedia   = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// MaxBundleBytes bounds a bundle a client sends or a record keeps.
	MaxBundleBytes = 16 << 10
)

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

type statement struct {
	Type          string    `json:"_type"`
	Subject       []subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     struct {
		Skill string `json:"skill"`
	} `json:"predicate"`
}

// Signer is a private key a bundle is signed with.
type Signer struct {
	key crypto.Signer
	pub PublicKey
}

// PublicKey is a key a bundle is verified against, named as the policy
// names it ("" when read from a file for skillctl verify).
type PublicKey struct {
	Name string
	// ID is the key's fingerprint: the standard base64 of the sha256 of its
	// DER (PKIX) form, as sigstore-go hints keys; a bundle carries it as
	// its hint.
	ID  string
	key crypto.PublicKey
}

// ParsePrivateKey reads an unencrypted PEM private key: PKCS#8 ("PRIVATE
// KEY") or SEC 1 ("EC PRIVATE KEY"), ECDSA P-256 or Ed25519
// (ParsePrivateKeyPassword reads cosign's encrypted ones too).
func ParsePrivateKey(data []byte) (*Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("signing: no PEM block in the private key file")
	}
	var k any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case sigstoreKeyType, cosignKeyType:
		return nil, fmt.Errorf("%w: %s needs a password", ErrPassword, b.Type)
	case "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("signing: %s (encrypted PKCS#8) is not read; decrypt it (openssl pkcs8 -in KEY -out PLAIN) or use a cosign key pair (cosign generate-key-pair)", b.Type)
	default:
		return nil, fmt.Errorf("signing: PEM block %q is not a private key (PRIVATE KEY or EC PRIVATE KEY)", b.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return newSigner(k)
}

// ParsePublicKey reads a PEM public key ("PUBLIC KEY", PKIX): ECDSA P-256
// or Ed25519.
func ParsePublicKey(name string, data []byte) (PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PUBLIC KEY" {
		return PublicKey{}, errors.New("signing: no PEM PUBLIC KEY block in the public key file")
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return PublicKey{}, fmt.Errorf("signing: %w", err)
	}
	return newPublicKey(name, k)
}

func newPublicKey(name string, k crypto.PublicKey) (PublicKey, error) {
	switch k := k.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return PublicKey{}, errors.New("signing: only ECDSA P-256 and Ed25519 keys are supported")
		}
	case ed25519.PublicKey:
	default:
		return PublicKey{}, errors.New("signing: only ECDSA P-256 and Ed25519 keys are supported")
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return PublicKey{}, err
	}
	sum := sha256.Sum256(der)
	return PublicKey{Name: name, ID: base64.StdEncoding.EncodeToString(sum[:]), key: k}, nil
}

// Public is the signer's public key.
func (s *Signer) Public() PublicKey { return s.pub }

// PEM is the public key as a PEM file.
func (k PublicKey) PEM() []byte {
	der, _ := x509.MarshalPKIXPublicKey(k.key)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Sign makes the bundle of skill name's version digest ("sha256:<hex>").
func (s *Signer) Sign(_ context.Context, name, digest string) ([]byte, error) {
	h, err := hexOf(digest)
	if err != nil {
		return nil, err
	}
	st := statement{Type: StatementType, Subject: []subject{{Name: name, Digest: map[string]string{"sha256": h}}}, PredicateType: PredicateType}
	st.Predicate.Skill = name
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(PayloadType), PayloadType, len(payload), payload)
	var sig []byte
	if _, ok := s.key.(ed25519.PrivateKey); ok {
		sig, err = s.key.Sign(rand.Reader, pae, crypto.Hash(0))
	} else {
		sum := sha256.Sum256(pae)
		sig, err = s.key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	if err != nil {
		return nil, err
	}
	b := &protobundle.Bundle{
		MediaType: BundleMedia,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: s.pub.ID}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: PayloadType, Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	return protojson.Marshal(b)
}

func hexOf(digest string) (string, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if _, err := hex.DecodeString(h); !ok || err != nil || len(h) != 64 || strings.ToLower(h) != h {
		return "", fmt.Errorf("%w: %q is not a manifest digest (sha256:<64 hex digits>)", errkind.InvalidArgument, clip(digest))
	}
	return h, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ErrInvalid is a bundle that is not a valid signature of the version by
// any of the keys it was checked against.
var ErrInvalid = errors.New("invalid signature")

// Parse checks that data is a well-formed bundle of ours (size, a Sigstore
// bundle v0.3 holding one DSSE signature over an in-toto statement with our
// predicate and one sha256 subject, keyed) and returns the digest it names
// and the key hint it carries. It proves nothing about who signed it.
func Parse(data []byte) (digest, hint string, err error) {
	_, digest, hint, err = parse(data)
	return digest, hint, err
}

func parse(data []byte) (*protodsse.Envelope, string, string, error) {
	if len(data) > MaxBundleBytes {
		return nil, "", "", fmt.Errorf("%w: the bundle is %d bytes, over the %d-byte limit", errkind.InvalidArgument, len(data), MaxBundleBytes)
	}
	var b protobundle.Bundle
	if err := protojson.Unmarshal(data, &b); err != nil {
		return nil, "", "", fmt.Errorf("%w: not a Sigstore bundle: %v", errkind.InvalidArgument, clip(err.Error()))
	}
	if b.GetMediaType() != BundleMedia && b.GetMediaType() != "application/vnd.dev.sigstore.bundle+json;version=0.3" {
		return nil, "", "", fmt.Errorf("%w: the bundle's media type %q is not %s", errkind.InvalidArgument, clip(b.GetMediaType()), BundleMedia)
	}
	env := b.GetDsseEnvelope()
	if env == nil || env.GetPayloadType() != PayloadType || len(env.GetSignatures()) != 1 {
		return nil, "", "", fmt.Errorf("%w: the bundle holds no DSSE envelope of an in-toto statement with one signature", errkind.InvalidArgument)
	}
	pk := b.GetVerificationMaterial().GetPublicKey()
	if pk == nil {
		return nil, "", "", fmt.Errorf("%w: the bundle is not signed by a key (keyed signatures only)", errkind.InvalidArgument)
	}
	var st statement
	if err := json.Unmarshal(env.GetPayload(), &st); err != nil || st.Type != StatementType || st.PredicateType != PredicateType || len(st.Subject) != 1 {
		return nil, "", "", fmt.Errorf("%w: the bundle's statement is not a skillsvc signature (%s, one subject)", errkind.InvalidArgument, PredicateType)
	}
	d := "sha256:" + st.Subject[0].Digest["sha256"]
	if _, err := hexOf(d); err != nil {
		return nil, "", "", err
	}
	return env, d, pk.GetHint(), nil
}

// Verify checks the bundle data as a signature of digest by one of keys,
// and returns that key. A bundle signed by no key of keys, or of another
// digest, is ErrInvalid (FAILED_PRECONDITION); a malformed one
// INVALID_ARGUMENT. The DSSE signature is checked over its pre-auth
// encoding with sigstore's verifiers, as sigstore-go's bundle verifier
// does for a keyed bundle (signing_test.go checks the two agree).
func Verify(data []byte, digest string, keys []PublicKey) (PublicKey, error) {
	env, got, _, err := parse(data)
	if err != nil {
		return PublicKey{}, err
	}
	if _, err := hexOf(digest); err != nil {
		return PublicKey{}, err
	}
	if got != digest {
		return PublicKey{}, fmt.Errorf("%w: %w: the bundle signs %s, not %s", errkind.FailedPrecondition, ErrInvalid, got, digest)
	}
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(env.GetPayloadType()), env.GetPayloadType(), len(env.GetPayload()), env.GetPayload())
	sig := env.GetSignatures()[0].GetSig()
	for _, k := range keys {
		if verifyWith(k, sig, pae) == nil {
			return k, nil
		}
	}
	return PublicKey{}, fmt.Errorf("%w: %w: the bundle is not a valid signature of %s by %s", errkind.FailedPrecondition, ErrInvalid, digest, Labels(keys))
}

func verifyWith(k PublicKey, sig, pae []byte) error {
	var sv signature.Verifier
	var err error
	if ed, ok := k.key.(ed25519.PublicKey); ok {
		sv, err = signature.LoadED25519Verifier(ed)
	} else {
		sv, err = signature.LoadVerifier(k.key, crypto.SHA256)
	}
	if err != nil {
		return err
	}
	return sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(pae))
}

// Label names the key in messages: its name and fingerprint.
func (k PublicKey) Label() string {
	if k.Name == "" {
		return "key " + k.ID
	}
	return fmt.Sprintf("key %q (%s)", k.Name, k.ID)
}
