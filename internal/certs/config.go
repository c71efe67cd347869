package certs

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/skillsvc/skillsvc/internal/options"
)

// ErrInvalidConfig: the TLS settings do not fit together.
var ErrInvalidConfig = errors.New("certs: invalid configuration")

// Config says where a listener's certificate, key and optional client CA
// bundle live. TLS is off when neither file is set.
type Config struct {
	CertFile       string
	KeyFile        string
	ClientCAFile   string
	ReloadInterval time.Duration
	MinVersion     string
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "tls.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.CertFile, prefix+"cert-file", "", "PEM file holding the server certificate, followed by any intermediates. Empty (with key-file) serves plaintext.")
	f.StringVar(&c.KeyFile, prefix+"key-file", "", "PEM file holding the private key of cert-file.")
	f.StringVar(&c.ClientCAFile, prefix+"client-ca-file", "", "PEM bundle of CA certificates; when set, clients must present a certificate signed by one of them.")
	f.DurationVar(&c.ReloadInterval, prefix+"reload-interval", 10*time.Second, "How often the certificate, key and client CA files are checked for changes; 0 disables reloading.")
	f.StringVar(&c.MinVersion, prefix+"min-version", "1.2", `Lowest TLS version accepted: "1.2" or "1.3".`)
	options.Tag(f, options.Basic, prefix+"cert-file", prefix+"key-file", prefix+"client-ca-file")
}

// Enabled reports whether TLS is configured. A half configuration counts as
// enabled so that Validate, not a silent plaintext listener, reports it.
func (c *Config) Enabled() bool { return c.CertFile != "" || c.KeyFile != "" }

// Validate checks the settings without reading the files.
func (c *Config) Validate() error {
	switch {
	case (c.CertFile == "") != (c.KeyFile == ""):
		return fmt.Errorf("%w: cert-file and key-file must be set together", ErrInvalidConfig)
	case c.ClientCAFile != "" && c.CertFile == "":
		return fmt.Errorf("%w: client-ca-file needs cert-file and key-file", ErrInvalidConfig)
	case c.ReloadInterval < 0:
		return fmt.Errorf("%w: reload-interval must not be negative", ErrInvalidConfig)
	}
	_, err := c.minVersion()
	return err
}

// minVersion maps MinVersion to a crypto/tls constant; empty means "1.2",
// so that a Config written as a struct literal works.
func (c *Config) minVersion() (uint16, error) {
	switch c.MinVersion {
	case "", "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	default:
		return 0, fmt.Errorf("%w: unknown min-version %q: want 1.2 or 1.3", ErrInvalidConfig, c.MinVersion)
	}
}

// DefaultConfig returns the flag defaults (TLS off).
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}
