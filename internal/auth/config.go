package auth

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/skillsvc/skillsvc/internal/options"
)

// Authentication modes.
const (
	ModeInsecure = "insecure"
	ModeJWT      = "jwt"
)

// ErrInvalidConfig: the authentication settings do not fit together.
var ErrInvalidConfig = errors.New("auth: invalid configuration")

// Config chooses how callers are authenticated.
type Config struct {
	Mode string
	// AllowInsecureRemote lets insecure mode serve on a non-loopback
	// address, for deployments where a mesh or private network already
	// authenticates every caller.
	AllowInsecureRemote bool
	JWT                 JWTConfig
}

// JWTConfig configures bearer-token authentication. At least one key
// source is set; keys from several sources are used together, each pinned
// to its own algorithm.
type JWTConfig struct {
	SecretFile      string
	PublicKeyFile   string
	JWKSFile        string
	JWKSURL         string
	JWKSRefresh     time.Duration
	JWKSTimeout     time.Duration
	ReloadInterval  time.Duration
	Issuer          string
	Audience        string
	Leeway          time.Duration
	UserClaim       string
	ThreadClaim     string
	TicketClaim     string
	ScopeClaim      string
	PinClaim        string
	TeamsClaim      string
	SkillScopeClaim string
	HarnessClaim    string
	AdminScope      string
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "auth.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Mode, prefix+"mode", ModeInsecure, `How callers are authenticated: "jwt" requires a signed bearer token; "insecure" trusts the x-skillsvc-* identity metadata unverified and is refused on a non-loopback listener unless allow-insecure-remote is set.`)
	f.BoolVar(&c.AllowInsecureRemote, prefix+"allow-insecure-remote", false, "Allow insecure mode on a non-loopback listener (only behind something that authenticates every caller).")
	options.Tag(f, options.Basic, prefix+"mode")
	c.JWT.RegisterFlagsWithPrefix(prefix+"jwt.", f)
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "auth.jwt.".
func (c *JWTConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.SecretFile, prefix+"secret-file", "", "File holding the HS256 shared secret (at least 32 bytes); reloaded when it changes.")
	f.StringVar(&c.PublicKeyFile, prefix+"public-key-file", "", "PEM file of public keys or certificates (RSA: RS256, P-256: ES256, P-384: ES384, Ed25519: EdDSA); reloaded when it changes.")
	f.StringVar(&c.JWKSFile, prefix+"jwks-file", "", "JSON Web Key Set file of public signing keys (each pinned to its alg, or its key type's); reloaded when it changes.")
	f.StringVar(&c.JWKSURL, prefix+"jwks-url", "", "URL of the issuer's JSON Web Key Set, fetched at start and every jwks-refresh, and sooner when a token names an unknown key.")
	f.DurationVar(&c.JWKSRefresh, prefix+"jwks-refresh", 15*time.Minute, "How often jwks-url is fetched again.")
	f.DurationVar(&c.JWKSTimeout, prefix+"jwks-timeout", 10*time.Second, "Timeout of one jwks-url fetch.")
	f.DurationVar(&c.ReloadInterval, prefix+"reload-interval", 10*time.Second, "How often key files are checked for changes.")
	f.StringVar(&c.Issuer, prefix+"issuer", "", "Required iss claim; empty accepts any issuer.")
	f.StringVar(&c.Audience, prefix+"audience", "", "Required aud claim; empty accepts any audience.")
	f.DurationVar(&c.Leeway, prefix+"leeway", 30*time.Second, "Clock skew tolerated when checking exp, nbf and iat.")
	f.StringVar(&c.UserClaim, prefix+"user-claim", "user", "Claim holding the user ID.")
	f.StringVar(&c.ThreadClaim, prefix+"thread-claim", "thread", "Claim holding the thread ID.")
	f.StringVar(&c.TicketClaim, prefix+"ticket-claim", "ticket", "Claim holding the optional ticket ID.")
	f.StringVar(&c.ScopeClaim, prefix+"scope-claim", "scope", "Claim holding the token's scopes (a space-separated string or a list).")
	f.StringVar(&c.PinClaim, prefix+"pin-claim", "skillsvc_pin", `Claim that, when true (or "library"), pins the token's thread to the library it started with, as the x-skillsvc-pin header does per call; empty ignores it.`)
	f.StringVar(&c.TeamsClaim, prefix+"teams-claim", "teams", `Claim listing the caller's team IDs (a list of strings, or one comma-separated string), whose team libraries it reads; e.g. "groups". Empty: tokens name no teams.`)
	f.StringVar(&c.SkillScopeClaim, prefix+"skill-scope-claim", "skill_scope", `Claim naming the skill scope (a named skill set, docs/selection.md) every listing of the token's calls shows: it binds, and a request naming another scope is PERMISSION_DENIED. Empty ignores it.`)
	f.StringVar(&c.HarnessClaim, prefix+"harness-claim", "harness", `Claim naming the agent harness the token's caller runs in, which scopes match against skills' compatibility field; binds as the scope claim does. Empty ignores it.`)
	f.StringVar(&c.AdminScope, prefix+"admin-scope", "skillsvc:admin", "Scope that makes a token an admin token (AdminService; acting for a named user).")
	options.Tag(f, options.Basic, prefix+"secret-file", prefix+"public-key-file", prefix+"jwks-url", prefix+"issuer", prefix+"audience")
}

// Validate checks the settings without reading the key files.
func (c *Config) Validate() error {
	switch c.Mode {
	case ModeInsecure:
		return nil
	case ModeJWT:
		return c.JWT.Validate()
	default:
		return fmt.Errorf("%w: unknown auth mode %q: want %s or %s", ErrInvalidConfig, c.Mode, ModeInsecure, ModeJWT)
	}
}

// ErrInsecureRemote: insecure mode on an address others can reach.
var ErrInsecureRemote = fmt.Errorf("%w: auth.mode=insecure trusts identity metadata as sent, so it serves only on a loopback address; use --auth.mode=jwt, or --auth.allow-insecure-remote behind something that authenticates every caller", ErrInvalidConfig)

// CheckListener refuses insecure mode on a listen address that is not
// loopback unless AllowInsecureRemote is set.
func (c *Config) CheckListener(addr string) error {
	if c.Mode != ModeInsecure || c.AllowInsecureRemote || Loopback(addr) {
		return nil
	}
	return fmt.Errorf("%w (listen address %s)", ErrInsecureRemote, addr)
}

// Loopback reports whether a listen address (host:port) accepts only local
// connections. An empty host or 0.0.0.0 listens everywhere.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Validate checks the settings without reading the key files.
func (c *JWTConfig) Validate() error {
	switch {
	case c.SecretFile == "" && c.PublicKeyFile == "" && c.JWKSFile == "" && c.JWKSURL == "":
		return fmt.Errorf("%w: jwt mode needs a key: jwt.secret-file, jwt.public-key-file, jwt.jwks-file or jwt.jwks-url", ErrInvalidConfig)
	case c.Leeway < 0:
		return fmt.Errorf("%w: jwt leeway must not be negative", ErrInvalidConfig)
	case c.JWKSURL != "" && (c.JWKSRefresh <= 0 || c.JWKSTimeout <= 0):
		return fmt.Errorf("%w: jwt jwks-refresh and jwks-timeout must be positive", ErrInvalidConfig)
	case c.ReloadInterval < 0:
		return fmt.Errorf("%w: jwt reload-interval must not be negative", ErrInvalidConfig)
	case c.UserClaim == "" || c.ThreadClaim == "" || c.TicketClaim == "" || c.ScopeClaim == "":
		return fmt.Errorf("%w: jwt user, thread, ticket and scope claim names must not be empty", ErrInvalidConfig)
	case len(map[string]bool{c.UserClaim: true, c.ThreadClaim: true, c.TicketClaim: true, c.ScopeClaim: true}) != 4:
		return fmt.Errorf("%w: jwt user, thread, ticket and scope claim names must differ", ErrInvalidConfig)
	case c.PinClaim != "" && map[string]bool{c.UserClaim: true, c.ThreadClaim: true, c.TicketClaim: true, c.ScopeClaim: true}[c.PinClaim]:
		return fmt.Errorf("%w: jwt pin claim name must differ from the user, thread, ticket and scope claims", ErrInvalidConfig)
	case c.TeamsClaim != "" && map[string]bool{c.UserClaim: true, c.ThreadClaim: true, c.TicketClaim: true, c.ScopeClaim: true, c.PinClaim: true}[c.TeamsClaim]:
		return fmt.Errorf("%w: jwt teams claim name must differ from the user, thread, ticket, scope and pin claims", ErrInvalidConfig)
	case c.SkillScopeClaim != "" && c.SkillScopeClaim == c.HarnessClaim,
		c.SkillScopeClaim != "" && map[string]bool{c.UserClaim: true, c.ThreadClaim: true, c.TicketClaim: true, c.ScopeClaim: true, c.PinClaim: true, c.TeamsClaim: true}[c.SkillScopeClaim],
		c.HarnessClaim != "" && map[string]bool{c.UserClaim: true, c.ThreadClaim: true, c.TicketClaim: true, c.ScopeClaim: true, c.PinClaim: true, c.TeamsClaim: true}[c.HarnessClaim]:
		return fmt.Errorf("%w: jwt skill-scope and harness claim names must differ from each other and from the other claims", ErrInvalidConfig)
	case c.AdminScope == "":
		return fmt.Errorf("%w: jwt admin-scope must not be empty", ErrInvalidConfig)
	}
	if c.JWKSURL != "" {
		u, err := url.Parse(c.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: jwt jwks-url must be an http(s) URL", ErrInvalidConfig)
		}
	}
	return nil
}

// DefaultConfig returns the flag defaults (insecure mode).
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// New returns the Authenticator cfg describes, loading its keys in jwt
// mode. Close it to stop watching key files and URLs.
func New(ctx context.Context, cfg Config, log *slog.Logger) (Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == ModeInsecure {
		return Metadata{}, nil
	}
	j := cfg.JWT
	var srcs sources
	fail := func(err error) (Authenticator, error) {
		srcs.close()
		return nil, err
	}
	for _, f := range []struct {
		path  string
		parse func([]byte) (keySet, error)
	}{{j.SecretFile, parseSecret}, {j.PublicKeyFile, parsePEM}, {j.JWKSFile, parseJWKS}} {
		if f.path == "" {
			continue
		}
		s, err := openKeyFile(f.path, f.parse, j.ReloadInterval, log)
		if err != nil {
			return fail(err)
		}
		srcs = append(srcs, s)
	}
	if j.JWKSURL != "" {
		s, err := openKeyURL(ctx, j.JWKSURL, j.JWKSRefresh, j.JWKSTimeout, log)
		if err != nil {
			return fail(err)
		}
		srcs = append(srcs, s)
	}
	return newJWT(j, srcs), nil
}
