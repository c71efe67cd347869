package signing

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore/pkg/signature/kms"
	"github.com/sigstore/sigstore/pkg/signature/options"
	// The KMS providers a key reference may name; each registers its
	// scheme with kms. Only AWS KMS, to keep the binaries small.
	_ "github.com/sigstore/sigstore/pkg/signature/kms/aws"
)

// The PEM types of cosign's encrypted private keys (cosign
// generate-key-pair): scrypt and secretbox over the PKCS#8 key, as
// go-securesystemslib's encrypted package writes them.
const (
	sigstoreKeyType = "ENCRYPTED SIGSTORE PRIVATE KEY"
	cosignKeyType   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// ErrPassword is an encrypted key whose password is missing or wrong.
var ErrPassword = errors.New("signing: wrong password for the encrypted private key")

// IsKMS reports whether ref names a key in a KMS ("awskms://...") rather
// than a file.
func IsKMS(ref string) bool { return strings.Contains(ref, "://") }

// kmsProvider checks that ref is of a registered KMS provider. Without
// the check, sigstore's kms.Get would run a "sigstore-kms-<scheme>"
// plugin program found on PATH for any other scheme.
func kmsProvider(ref string) error {
	ps := kms.SupportedProviders()
	slices.Sort(ps)
	for _, p := range ps {
		if strings.HasPrefix(ref, p) {
			return nil
		}
	}
	return fmt.Errorf("signing: key reference %q: unsupported KMS (supported: %s)", clip(ref), strings.Join(ps, ", "))
}

// LoadSigner opens the private key ref names: a KMS key ("awskms://
// [ENDPOINT]/KEY_ID_OR_ALIAS", signing in the KMS, credentials from the
// provider's usual environment) or a PEM file, cosign's encrypted key
// files decrypted with the password password returns (called only for
// them).
func LoadSigner(ctx context.Context, ref string, password func() ([]byte, error)) (*Signer, error) {
	if !IsKMS(ref) {
		data, err := os.ReadFile(ref)
		if err != nil {
			return nil, err
		}
		return ParsePrivateKeyPassword(data, password)
	}
	if err := kmsProvider(ref); err != nil {
		return nil, err
	}
	sv, err := kms.Get(ctx, ref, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing: %s: %w", clip(ref), err)
	}
	cs, _, err := sv.CryptoSigner(ctx, func(error) {})
	if err != nil {
		return nil, fmt.Errorf("signing: %s: %w", clip(ref), err)
	}
	pub, err := kmsPublicKey(ctx, "", ref, sv)
	if err != nil {
		return nil, err
	}
	return &Signer{key: cs, pub: pub}, nil
}

// LoadPublicKey reads the public key ref names: a KMS key's (fetched from
// the KMS, which keeps the private key) or a PEM file's.
func LoadPublicKey(ctx context.Context, name, ref string) (PublicKey, error) {
	if !IsKMS(ref) {
		data, err := os.ReadFile(ref)
		if err != nil {
			return PublicKey{}, err
		}
		return ParsePublicKey(name, data)
	}
	if err := kmsProvider(ref); err != nil {
		return PublicKey{}, err
	}
	sv, err := kms.Get(ctx, ref, crypto.SHA256)
	if err != nil {
		return PublicKey{}, fmt.Errorf("signing: %s: %w", clip(ref), err)
	}
	return kmsPublicKey(ctx, name, ref, sv)
}

func kmsPublicKey(ctx context.Context, name, ref string, sv kms.SignerVerifier) (PublicKey, error) {
	k, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		return PublicKey{}, fmt.Errorf("signing: the public key of %s: %w", clip(ref), err)
	}
	pub, err := newPublicKey(name, k)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w (%s; in AWS KMS, a key of spec ECC_NIST_P256)", err, clip(ref))
	}
	return pub, nil
}

// ParsePrivateKeyPassword reads a PEM private key as ParsePrivateKey does,
// and also cosign's encrypted key files (ENCRYPTED SIGSTORE PRIVATE KEY,
// ENCRYPTED COSIGN PRIVATE KEY), decrypted with go-securesystemslib as
// cosign does, with the password password returns.
func ParsePrivateKeyPassword(data []byte, password func() ([]byte, error)) (*Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil || (b.Type != sigstoreKeyType && b.Type != cosignKeyType) {
		return ParsePrivateKey(data)
	}
	if password == nil {
		return nil, fmt.Errorf("%w: %s needs a password", ErrPassword, b.Type)
	}
	pass, err := password()
	if err != nil {
		return nil, err
	}
	der, err := encrypted.Decrypt(b.Bytes, pass)
	if err != nil {
		// secretbox cannot tell a wrong password from a damaged file.
		return nil, fmt.Errorf("%w (or the key file is damaged): %v", ErrPassword, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("signing: the decrypted key: %w", err)
	}
	return newSigner(k)
}

func newSigner(k any) (*Signer, error) {
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("signing: unsupported private key")
	}
	pub, err := newPublicKey("", s.Public())
	if err != nil {
		return nil, err
	}
	return &Signer{key: s, pub: pub}, nil
}
