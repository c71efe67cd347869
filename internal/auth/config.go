package auth

import (
	"errors"
	"flag"
	"fmt"
	"time"
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
	Mode string    `yaml:"mode"`
	JWT  JWTConfig `yaml:"jwt"`
}

// JWTConfig configures bearer-token authentication. Exactly one of
// SecretFile (HS256) and PublicKeyFile (RS256, ES256 or EdDSA) is set.
type JWTConfig struct {
	SecretFile    string        `yaml:"secret_file"`
	PublicKeyFile string        `yaml:"public_key_file"`
	Issuer        string        `yaml:"issuer"`
	Audience      string        `yaml:"audience"`
	Leeway        time.Duration `yaml:"leeway"`
	UserClaim     string        `yaml:"user_claim"`
	ThreadClaim   string        `yaml:"thread_claim"`
	TicketClaim   string        `yaml:"ticket_claim"`
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "auth.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Mode, prefix+"mode", ModeInsecure, `How callers are authenticated: "insecure" trusts the x-skillsvc-* identity metadata unverified; "jwt" requires a signed bearer token.`)
	c.JWT.RegisterFlagsWithPrefix(prefix+"jwt.", f)
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "auth.jwt.".
func (c *JWTConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.SecretFile, prefix+"secret-file", "", "File holding the HS256 shared secret (at least 32 bytes).")
	f.StringVar(&c.PublicKeyFile, prefix+"public-key-file", "", "PEM file of public keys or certificates: RSA keys verify RS256, P-256 ECDSA keys ES256, Ed25519 keys EdDSA.")
	f.StringVar(&c.Issuer, prefix+"issuer", "", "Required iss claim; empty accepts any issuer.")
	f.StringVar(&c.Audience, prefix+"audience", "", "Required aud claim; empty accepts any audience.")
	f.DurationVar(&c.Leeway, prefix+"leeway", 30*time.Second, "Clock skew tolerated when checking exp, nbf and iat.")
	f.StringVar(&c.UserClaim, prefix+"user-claim", "user", "Claim holding the user ID.")
	f.StringVar(&c.ThreadClaim, prefix+"thread-claim", "thread", "Claim holding the thread ID.")
	f.StringVar(&c.TicketClaim, prefix+"ticket-claim", "ticket", "Claim holding the optional ticket ID.")
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

// Validate checks the settings without reading the key files.
func (c *JWTConfig) Validate() error {
	switch {
	case (c.SecretFile == "") == (c.PublicKeyFile == ""):
		return fmt.Errorf("%w: jwt mode needs exactly one of jwt.secret-file and jwt.public-key-file", ErrInvalidConfig)
	case c.Leeway < 0:
		return fmt.Errorf("%w: jwt leeway must not be negative", ErrInvalidConfig)
	case c.UserClaim == "" || c.ThreadClaim == "" || c.TicketClaim == "":
		return fmt.Errorf("%w: jwt user, thread and ticket claim names must not be empty", ErrInvalidConfig)
	case c.UserClaim == c.ThreadClaim || c.UserClaim == c.TicketClaim || c.ThreadClaim == c.TicketClaim:
		return fmt.Errorf("%w: jwt user, thread and ticket claim names must differ", ErrInvalidConfig)
	}
	return nil
}

// DefaultConfig returns the flag defaults (insecure mode).
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// New returns the Authenticator cfg describes, loading key files in jwt
// mode.
func New(cfg Config) (Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode == ModeInsecure {
		return Metadata{}, nil
	}
	load, path := loadPublicKeys, cfg.JWT.PublicKeyFile
	if cfg.JWT.SecretFile != "" {
		load, path = loadSecret, cfg.JWT.SecretFile
	}
	keys, err := load(path)
	if err != nil {
		return nil, err
	}
	return newJWT(cfg.JWT, keys), nil
}
