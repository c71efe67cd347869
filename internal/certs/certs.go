package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/skillsvc/skillsvc/internal/filewatch"
)

// Server holds a listener's certificate and client CAs, kept current as
// their files change.
type Server struct {
	cfg        Config
	minVersion uint16
	pair       *filewatch.Value[*tls.Certificate]
	clientCAs  *filewatch.Value[*x509.CertPool] // nil without a client CA file
}

// New loads the files cfg names, failing if any is missing or unusable, and
// then rereads them every cfg.ReloadInterval until Close. A change that does
// not load (a certificate whose key has not been written yet) keeps the
// previous certificate or CAs.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, fmt.Errorf("%w: TLS needs cert-file and key-file", ErrInvalidConfig)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	minVersion, _ := cfg.minVersion() // Validate checked it.
	interval := cfg.ReloadInterval
	if interval == 0 {
		interval = -1 // filewatch reads 0 as its default and a negative interval as never.
	}
	s := &Server{cfg: cfg, minVersion: minVersion}
	var err error
	s.pair, err = filewatch.Watch([]string{cfg.CertFile, cfg.KeyFile}, interval, parseKeyPair(log), log)
	if err != nil {
		return nil, s.pairError(err)
	}
	if cfg.ClientCAFile != "" {
		s.clientCAs, err = filewatch.Watch([]string{cfg.ClientCAFile}, interval, parseClientCAs(log), log)
		if err != nil {
			s.pair.Close()
			return nil, s.clientCAError(err)
		}
	}
	return s, nil
}

// TLSConfig returns a server config that presents the current certificate
// and, with a client CA file, requires a client certificate signed by one of
// the current CAs; rotations apply to the next handshake. Call it once per
// listener: net/http's ServeTLS modifies the config it is given.
//
// NextProtos is left empty for each server to declare what it speaks:
// credentials.NewTLS adds "h2", also to the per-connection config below,
// and http.Server.ServeTLS adds "h2" (unless HTTP/2 is off) and "http/1.1"
// to this very config. A fixed list here would offer h2 from an HTTP/1-only
// server, which then fails every HTTP/2 client.
func (s *Server) TLSConfig() *tls.Config {
	c := &tls.Config{
		MinVersion:     s.minVersion,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.pair.Load(), nil },
	}
	if s.clientCAs != nil {
		// ClientCAs is a plain field, read by every handshake; the callback
		// is crypto/tls's hook for changing it per connection. It copies c
		// at each handshake, so whatever the server set on c before serving
		// (ALPN above, cipher suites) still applies. Go checks a resumed
		// session's client chain against these CAs too, so a session ticket
		// does not outlive a CA's removal.
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cc := c.Clone()
			cc.GetConfigForClient = nil
			cc.ClientCAs = s.clientCAs.Load()
			cc.ClientAuth = tls.RequireAndVerifyClientCert
			return cc, nil
		}
	}
	return c
}

// Certificate returns the leaf of the certificate being served.
func (s *Server) Certificate() *x509.Certificate { return s.pair.Load().Leaf }

// Check rereads the files now, as the poller does, and reports why a change
// did not load; the previous certificate or CAs stay in use then.
func (s *Server) Check() error {
	var errs []error
	if _, err := s.pair.Check(); err != nil {
		errs = append(errs, s.pairError(err))
	}
	if s.clientCAs != nil {
		if _, err := s.clientCAs.Check(); err != nil {
			errs = append(errs, s.clientCAError(err))
		}
	}
	return errors.Join(errs...)
}

// Close stops rereading the files; the last certificate and CAs stay in use.
func (s *Server) Close() {
	s.pair.Close()
	if s.clientCAs != nil {
		s.clientCAs.Close()
	}
}

func (s *Server) pairError(err error) error {
	return fmt.Errorf("certs: cert-file %s and key-file %s: %w", s.cfg.CertFile, s.cfg.KeyFile, err)
}

func (s *Server) clientCAError(err error) error {
	return fmt.Errorf("certs: client-ca-file %s: %w", s.cfg.ClientCAFile, err)
}

func parseKeyPair(log *slog.Logger) filewatch.Parse[*tls.Certificate] {
	return func(contents [][]byte) (*tls.Certificate, error) {
		certPEM, keyPEM := contents[0], contents[1]
		if err := wholePEM(certPEM); err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
		if err := wholePEM(keyPEM); err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, err
		}
		if cert.Leaf == nil { // GODEBUG=x509keypairleaf=0
			if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
				return nil, err
			}
		}
		leaf := cert.Leaf
		attrs := []any{"subject", leaf.Subject.String(), "serial", leaf.SerialNumber.Text(16), "not_after", leaf.NotAfter}
		if time.Now().After(leaf.NotAfter) {
			log.Warn("loaded an expired TLS certificate", attrs...)
		} else {
			log.Info("loaded TLS certificate", attrs...)
		}
		return &cert, nil
	}
}

func parseClientCAs(log *slog.Logger) filewatch.Parse[*x509.CertPool] {
	return func(contents [][]byte) (*x509.CertPool, error) {
		if err := wholePEM(contents[0]); err != nil {
			return nil, err
		}
		// Not x509.CertPool.AppendCertsFromPEM: it skips certificates it
		// cannot parse, and a CA silently missing refuses its clients.
		pool := x509.NewCertPool()
		n := 0
		for rest := contents[0]; ; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				continue
			}
			ca, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("certificate %d: %w", n+1, err)
			}
			pool.AddCert(ca)
			n++
		}
		if n == 0 {
			return nil, errors.New("no PEM certificates")
		}
		log.Info("loaded TLS client CAs", "count", n)
		return pool, nil
	}
}

// wholePEM fails when data follows the last complete PEM block: a file read
// while being written ends in a truncated block, which pem.Decode, and so
// tls.X509KeyPair, would skip without a word.
func wholePEM(b []byte) error {
	rest := b
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return errors.New("incomplete PEM block or data after the last one")
	}
	return nil
}
