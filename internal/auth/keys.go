package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/skillsvc/skillsvc/internal/filewatch"
)

const (
	// minSecretBytes is HS256's key size: a shorter secret is guessable.
	minSecretBytes = 32
	minRSABits     = 2048
	// maxJWKSBytes bounds a key set read from a file or URL.
	maxJWKSBytes = 1 << 20
)

// verifier is one verification key, pinned to the one algorithm it checks.
type verifier struct {
	kid string // empty when the source names none
	key jwt.VerificationKey
}

// keySet holds verification keys by algorithm. A token's header picks the
// algorithm only among those the keys are pinned to, so "none", a stronger
// or weaker variant, or HS256 keyed with a public key's bytes never verify.
type keySet map[string][]verifier

func (s keySet) add(alg string, kid string, key jwt.VerificationKey) {
	s[alg] = append(s[alg], verifier{kid: kid, key: key})
}

func (s keySet) merge(o keySet) {
	for alg, vs := range o {
		s[alg] = append(s[alg], vs...)
	}
}

// lookup returns the keys for a token signed with alg and naming kid (which
// may be empty): the keys with that kid when some have it, else every key
// of the algorithm. known reports whether kid was found.
func (s keySet) lookup(alg, kid string) (keys []jwt.VerificationKey, known bool) {
	var all []jwt.VerificationKey
	for _, v := range s[alg] {
		if kid != "" && v.kid == kid {
			keys = append(keys, v.key)
		}
		all = append(all, v.key)
	}
	if len(keys) > 0 {
		return keys, true
	}
	return all, kid == ""
}

// keySource is where the current keys come from; keys are read per call so
// a rotation applies to the next token.
type keySource interface {
	keys() keySet
	// unknownKID tells a source that refreshes from a URL that a token
	// named a key it does not hold: the issuer may have rotated.
	unknownKID()
	close()
}

// parseSecret reads an HS256 secret; one trailing newline, as editors
// write, is not part of it.
func parseSecret(b []byte) (keySet, error) {
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) < minSecretBytes {
		return nil, fmt.Errorf("%w: jwt secret must be at least %d bytes", ErrInvalidConfig, minSecretBytes)
	}
	s := keySet{}
	s.add(jwt.SigningMethodHS256.Alg(), "", bytes.Clone(b))
	return s, nil
}

// parsePEM reads PEM public keys (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE
// blocks) and files each under the one algorithm it verifies.
func parsePEM(rest []byte) (keySet, error) {
	s := keySet{}
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var pub any
		var err error
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
		alg, err := algorithmFor(pub, "")
		if err != nil {
			return nil, fmt.Errorf("%w: jwt public key file: block %d: %v", ErrInvalidConfig, n, err)
		}
		s.add(alg, "", pub)
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%w: jwt public key file holds no PEM public key", ErrInvalidConfig)
	}
	return s, nil
}

// parseJWKS reads a JSON Web Key Set (RFC 7517). Keys whose use is not
// "sig" are skipped; symmetric keys and private key material are refused,
// since a key set is public by design.
func parseJWKS(b []byte) (keySet, error) {
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("%w: jwks larger than %d bytes", ErrInvalidConfig, maxJWKSBytes)
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%w: jwks: %v", ErrInvalidConfig, err)
	}
	s := keySet{}
	for i, m := range set.Keys {
		if m.USE != "" && m.USE != jwkset.UseSig {
			continue
		}
		if m.KTY == jwkset.KtyOct || m.D != "" || m.K != "" {
			return nil, fmt.Errorf("%w: jwks key %d holds secret or private key material", ErrInvalidConfig, i)
		}
		// No x5u fetching: a key set must not make us follow its URLs.
		k, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			return nil, fmt.Errorf("%w: jwks key %d: %v", ErrInvalidConfig, i, err)
		}
		alg, err := algorithmFor(k.Key(), string(m.ALG))
		if err != nil {
			return nil, fmt.Errorf("%w: jwks key %d: %v", ErrInvalidConfig, i, err)
		}
		s.add(alg, m.KID, k.Key())
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%w: jwks holds no signing key", ErrInvalidConfig)
	}
	return s, nil
}

// algorithmFor pins the one algorithm a public key verifies: the stated
// one (a JWK's "alg") if it fits the key, else the key type's usual one.
func algorithmFor(pub any, stated string) (string, error) {
	var fits []string
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return "", fmt.Errorf("RSA key of %d bits, want at least %d", k.N.BitLen(), minRSABits)
		}
		fits = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			fits = []string{"ES256"}
		case elliptic.P384():
			fits = []string{"ES384"}
		case elliptic.P521():
			fits = []string{"ES512"}
		default:
			return "", errors.New("ECDSA key on an unsupported curve")
		}
	case ed25519.PublicKey:
		fits = []string{"EdDSA"}
	default:
		return "", fmt.Errorf("unsupported key type %T", pub)
	}
	if stated == "" {
		return fits[0], nil
	}
	if !slices.Contains(fits, stated) {
		return "", fmt.Errorf("algorithm %q does not fit a %T key", stated, pub)
	}
	return stated, nil
}

// fileKeys is a key file kept current by polling: a rotated file applies
// to the next token, and a bad edit keeps the previous keys.
type fileKeys struct{ v *filewatch.Value[keySet] }

func openKeyFile(path string, parse func([]byte) (keySet, error), interval time.Duration, log *slog.Logger) (*fileKeys, error) {
	v, err := filewatch.Watch([]string{path}, interval, func(c [][]byte) (keySet, error) { return parse(c[0]) }, log)
	if err != nil {
		return nil, err
	}
	return &fileKeys{v: v}, nil
}

func (f *fileKeys) keys() keySet { return f.v.Load() }
func (f *fileKeys) unknownKID()  {}
func (f *fileKeys) close()       { f.v.Close() }

// urlKeys is a JWKS fetched from the issuer, refreshed every interval and,
// at most once per minRefresh, when a token names a key it lacks (the
// issuer rotated). A failed refresh keeps the last good set.
type urlKeys struct {
	url     string
	client  *http.Client
	log     *slog.Logger
	cur     atomic.Pointer[keySet]
	soon    *rate.Limiter // refreshes for unknown key IDs
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// minRefresh spaces refreshes asked for by unknown key IDs, so tokens with
// made-up kids cannot turn us into a load on the issuer.
const minRefresh = 30 * time.Second

func openKeyURL(ctx context.Context, url string, interval, timeout time.Duration, log *slog.Logger) (*urlKeys, error) {
	u := &urlKeys{
		url: url, client: &http.Client{Timeout: timeout}, log: log,
		soon: rate.NewLimiter(rate.Every(minRefresh), 1),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if err := u.refresh(ctx); err != nil {
		return nil, err
	}
	go u.loop(interval)
	return u, nil
}

func (u *urlKeys) refresh(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url, nil)
	if err != nil {
		return fmt.Errorf("%w: jwks url: %v", ErrInvalidConfig, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := u.client.Do(req)
	if err != nil {
		return fmt.Errorf("auth: fetching jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: fetching jwks: %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("auth: fetching jwks: %w", err)
	}
	s, err := parseJWKS(b)
	if err != nil {
		return err
	}
	u.cur.Store(&s)
	return nil
}

func (u *urlKeys) loop(interval time.Duration) {
	defer close(u.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-t.C:
		case <-u.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), u.client.Timeout)
		if err := u.refresh(ctx); err != nil {
			u.log.Warn("refreshing the jwks failed; keeping the previous keys", "url", u.url, "err", err)
		}
		cancel()
	}
}

func (u *urlKeys) keys() keySet { return *u.cur.Load() }

func (u *urlKeys) unknownKID() {
	if !u.soon.Allow() {
		return
	}
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

func (u *urlKeys) close() {
	u.stopped.Do(func() { close(u.stop) })
	<-u.done
}

// sources is every configured key source read as one set.
type sources []keySource

func (ss sources) keys() keySet {
	if len(ss) == 1 {
		return ss[0].keys()
	}
	all := keySet{}
	for _, s := range ss {
		all.merge(s.keys())
	}
	return all
}

func (ss sources) unknownKID() {
	for _, s := range ss {
		s.unknownKID()
	}
}

func (ss sources) close() {
	for _, s := range ss {
		s.close()
	}
}
