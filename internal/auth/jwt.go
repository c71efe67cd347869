package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// AuthorizationKey is the metadata key carrying "Bearer <token>".
const AuthorizationKey = "authorization"

const (
	// maxTokenBytes bounds the work one call can ask of the parser; real
	// tokens are well under 1 KiB.
	maxTokenBytes = 8 << 10
	// minSecretBytes is HS256's key size: a shorter secret is guessable.
	minSecretBytes = 32
	minRSABits     = 2048
)

// JWT verifies a bearer token and takes the identity from its claims only;
// identity metadata headers are ignored. Each key verifies exactly one
// algorithm (HS256 secret, RS256, ES256 P-256, EdDSA), so a token cannot
// choose how it is checked: "none", another algorithm, or HS256 keyed with
// the public key's bytes all fail.
type JWT struct {
	keys   map[string][]jwt.VerificationKey // by algorithm
	parser *jwt.Parser
	claims JWTConfig // claim names
}

// newJWT builds a JWT authenticator from loaded keys; cfg supplies the
// claim names, issuer, audience and leeway.
func newJWT(cfg JWTConfig, keys map[string][]jwt.VerificationKey) *JWT {
	methods := make([]string, 0, len(keys))
	for alg := range keys {
		methods = append(methods, alg)
	}
	slices.Sort(methods)
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return &JWT{keys: keys, parser: jwt.NewParser(opts...), claims: cfg}
}

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(ctx context.Context) (mounts.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vs := md.Get(AuthorizationKey)
	switch {
	case len(vs) == 0:
		return mounts.Identity{}, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	case len(vs) > 1:
		return mounts.Identity{}, fmt.Errorf("%w: authorization given %d times", ErrUnauthenticated, len(vs))
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(vs[0]), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return mounts.Identity{}, fmt.Errorf("%w: authorization is not a bearer token", ErrUnauthenticated)
	}
	return j.verify(token)
}

// verify checks token and returns the identity in its claims. Reasons are
// fixed strings: the parser's own errors may quote parts of the token.
func (j *JWT) verify(token string) (mounts.Identity, error) {
	var id mounts.Identity
	if len(token) > maxTokenBytes {
		return id, fmt.Errorf("%w: token too long", ErrUnauthenticated)
	}
	claims := jwt.MapClaims{}
	if _, err := j.parser.ParseWithClaims(token, claims, j.key); err != nil {
		return id, fmt.Errorf("%w: %s", ErrUnauthenticated, tokenReason(err))
	}
	var err error
	if id.User, err = j.claim(claims, j.claims.UserClaim, "user", true); err != nil {
		return mounts.Identity{}, err
	}
	if id.Thread, err = j.claim(claims, j.claims.ThreadClaim, "thread", true); err != nil {
		return mounts.Identity{}, err
	}
	if id.Ticket, err = j.claim(claims, j.claims.TicketClaim, "ticket", false); err != nil {
		return mounts.Identity{}, err
	}
	return id, nil
}

func (j *JWT) key(t *jwt.Token) (any, error) {
	keys := j.keys[t.Method.Alg()]
	if len(keys) == 0 {
		return nil, errors.New("no key for the algorithm")
	}
	return jwt.VerificationKeySet{Keys: keys}, nil
}

// claim returns the string claim name as an ID of kind. The value is never
// quoted back: it came from the token.
func (j *JWT) claim(claims jwt.MapClaims, name, kind string, required bool) (string, error) {
	v, ok := claims[name]
	if !ok {
		if required {
			return "", fmt.Errorf("%w: token has no %s claim %q", ErrUnauthenticated, kind, name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok || mounts.ValidateID(kind, s) != nil {
		return "", fmt.Errorf("%w: token claim %q is not a valid %s id", ErrUnauthenticated, name, kind)
	}
	return s, nil
}

func tokenReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{jwt.ErrTokenMalformed, "malformed token"},
		{jwt.ErrTokenUnverifiable, "token not verifiable with the configured keys"},
		{jwt.ErrTokenSignatureInvalid, "invalid token signature"},
		{jwt.ErrTokenRequiredClaimMissing, "token lacks a required claim"},
		{jwt.ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, "token not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "token issued in the future"},
		{jwt.ErrTokenInvalidAudience, "token audience not accepted"},
		{jwt.ErrTokenInvalidIssuer, "token issuer not accepted"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "invalid token"
}

// loadSecret reads an HS256 secret; one trailing newline, as editors
// write, is not part of it.
func loadSecret(path string) (map[string][]jwt.VerificationKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: reading jwt secret: %w", err)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) < minSecretBytes {
		return nil, fmt.Errorf("%w: jwt secret must be at least %d bytes", ErrInvalidConfig, minSecretBytes)
	}
	return map[string][]jwt.VerificationKey{jwt.SigningMethodHS256.Alg(): {b}}, nil
}

// loadPublicKeys reads PEM public keys (PUBLIC KEY, RSA PUBLIC KEY or
// CERTIFICATE blocks) and files each under the one algorithm it verifies.
func loadPublicKeys(path string) (map[string][]jwt.VerificationKey, error) {
	rest, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: reading jwt public keys: %w", err)
	}
	keys := map[string][]jwt.VerificationKey{}
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var pub any
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				pub = cert.PublicKey
			}
		default:
			// A private key here means it was copied to the server.
			return nil, fmt.Errorf("%w: jwt public key file: block %d is %q, want a public key or certificate", ErrInvalidConfig, n, block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: jwt public key file: block %d: %v", ErrInvalidConfig, n, err)
		}
		alg, err := algorithmFor(pub)
		if err != nil {
			return nil, fmt.Errorf("%w: jwt public key file: block %d: %v", ErrInvalidConfig, n, err)
		}
		keys[alg] = append(keys[alg], pub)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: jwt public key file holds no PEM public key", ErrInvalidConfig)
	}
	return keys, nil
}

// algorithmFor pins the one algorithm a public key verifies.
func algorithmFor(pub any) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return "", fmt.Errorf("RSA key of %d bits, want at least %d", k.N.BitLen(), minRSABits)
		}
		return jwt.SigningMethodRS256.Alg(), nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", errors.New("ECDSA key not on P-256, which ES256 needs")
		}
		return jwt.SigningMethodES256.Alg(), nil
	case ed25519.PublicKey:
		return jwt.SigningMethodEdDSA.Alg(), nil
	default:
		return "", fmt.Errorf("unsupported key type %T", pub)
	}
}
