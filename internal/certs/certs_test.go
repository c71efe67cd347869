package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/certs"
	"github.com/skillsvc/skillsvc/internal/certs/certstest"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
)

// serverName is the name every server certificate here is issued for and
// every client asks for.
const serverName = "localhost"

var loopback = []net.IP{net.IPv4(127, 0, 0, 1)}

func issueServer(t *testing.T, ca *certstest.CA) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.Issue(t, "skillsvc", []string{serverName}, loopback, false)
}

// writeServerPair issues a server certificate from ca and writes it and its
// key to dir.
func writeServerPair(t *testing.T, dir string, ca *certstest.CA) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM := issueServer(t, ca)
	return certstest.WriteFiles(t, dir, certPEM, keyPEM)
}

// issuePair issues a certificate without names from ca, for a client or a
// server, ready for a tls.Config.
func issuePair(t *testing.T, ca *certstest.CA, commonName string, client bool) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(ca.Issue(t, commonName, nil, nil, client))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func leaf(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pool(cas ...*certstest.CA) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AppendCertsFromPEM(ca.CertPEM())
	}
	return p
}

func clientConfig(roots *x509.CertPool, own ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: roots, ServerName: serverName, Certificates: own}
}

func newServer(t *testing.T, cfg certs.Config) *certs.Server {
	t.Helper()
	s, err := certs.New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// serveEcho serves TLS with cfg on a loopback port, echoing what clients
// send, and returns the address.
func serveEcho(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		closed bool
		conns  = map[net.Conn]struct{}{}
	)
	wg.Go(func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return lis.Addr().String()
}

// echo sends a byte over conn and reads it back. Only a round trip proves a
// TLS 1.3 server accepted the client: it refuses a client certificate after
// the client considers the handshake done.
func echo(conn *tls.Conn) error {
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte{42}); err != nil {
		return err
	}
	_, err := io.ReadFull(conn, make([]byte, 1))
	return err
}

// exchange connects to addr, does one round trip and hangs up.
func exchange(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	if err := echo(conn); err != nil {
		return tls.ConnectionState{}, err
	}
	return conn.ConnectionState(), nil
}

// presents fails unless a new connection to addr sees want as the server's
// certificate.
func presents(t *testing.T, addr string, cfg *tls.Config, want *x509.Certificate) {
	t.Helper()
	st, err := exchange(addr, cfg)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if got := st.PeerCertificates[0]; !got.Equal(want) {
		t.Fatalf("server presented serial %x (%s), want %x (%s)", got.SerialNumber, got.Issuer, want.SerialNumber, want.Issuer)
	}
}

func TestConfigFlags(t *testing.T) {
	var c certs.Config
	f := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlagsWithPrefix("tls.", f)
	if c.ReloadInterval != 10*time.Second || c.MinVersion != "1.2" || c.Enabled() {
		t.Fatalf("defaults = %+v, enabled %v; want 10s, 1.2, disabled", c, c.Enabled())
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: Validate = %v", err)
	}
	args := []string{"-tls.cert-file=c.pem", "-tls.key-file=k.pem", "-tls.client-ca-file=ca.pem", "-tls.reload-interval=1m", "-tls.min-version=1.3"}
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	want := certs.Config{CertFile: "c.pem", KeyFile: "k.pem", ClientCAFile: "ca.pem", ReloadInterval: time.Minute, MinVersion: "1.3"}
	if c != want || !c.Enabled() {
		t.Fatalf("parsed %+v, want %+v, enabled", c, want)
	}
	if c := certs.DefaultConfig(); c.Enabled() || c.ReloadInterval != 10*time.Second {
		t.Fatalf("DefaultConfig = %+v", c)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  certs.Config
		ok   bool
	}{
		{"off", certs.Config{}, true},
		{"cert and key", certs.Config{CertFile: "c", KeyFile: "k"}, true},
		{"client CA", certs.Config{CertFile: "c", KeyFile: "k", ClientCAFile: "ca"}, true},
		{"TLS 1.2", certs.Config{CertFile: "c", KeyFile: "k", MinVersion: "1.2"}, true},
		{"TLS 1.3", certs.Config{CertFile: "c", KeyFile: "k", MinVersion: "1.3"}, true},
		{"no reloading", certs.Config{CertFile: "c", KeyFile: "k", ReloadInterval: 0}, true},
		{"cert without key", certs.Config{CertFile: "c"}, false},
		{"key without cert", certs.Config{KeyFile: "k"}, false},
		{"client CA without cert", certs.Config{ClientCAFile: "ca"}, false},
		{"TLS 1.1", certs.Config{CertFile: "c", KeyFile: "k", MinVersion: "1.1"}, false},
		{"version spelled differently", certs.Config{CertFile: "c", KeyFile: "k", MinVersion: "TLS1.3"}, false},
		{"negative interval", certs.Config{CertFile: "c", KeyFile: "k", ReloadInterval: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok && err != nil {
				t.Fatalf("Validate = %v, want nil", err)
			}
			if !tc.ok && !errors.Is(err, certs.ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestNewFails(t *testing.T) {
	ca := certstest.NewCA(t, "server CA")
	certPEM, keyPEM := issueServer(t, ca)
	_, otherKey := issueServer(t, ca)
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		filewatchtest.Write(t, p, data)
		return p
	}
	certFile, keyFile := file("cert.pem", certPEM), file("key.pem", keyPEM)
	otherKeyFile := file("other-key.pem", otherKey)
	missing := filepath.Join(dir, "missing.pem")
	caBundle := ca.CertPEM()
	for _, tc := range []struct {
		name     string
		cfg      certs.Config
		wantIs   error // nil: any error
		contains string
	}{
		{name: "TLS off", cfg: certs.Config{}, wantIs: certs.ErrInvalidConfig},
		{name: "invalid config", cfg: certs.Config{CertFile: certFile}, wantIs: certs.ErrInvalidConfig},
		{name: "missing cert", cfg: certs.Config{CertFile: missing, KeyFile: keyFile}, wantIs: fs.ErrNotExist},
		{name: "missing key", cfg: certs.Config{CertFile: certFile, KeyFile: missing}, wantIs: fs.ErrNotExist},
		{name: "key of another cert", cfg: certs.Config{CertFile: certFile, KeyFile: otherKeyFile}, contains: "does not match"},
		{name: "key as cert", cfg: certs.Config{CertFile: keyFile, KeyFile: keyFile}},
		{name: "truncated cert", cfg: certs.Config{CertFile: file("half-cert.pem", certPEM[:len(certPEM)/2]), KeyFile: keyFile}, contains: "incomplete PEM"},
		{name: "missing client CA", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: missing}, wantIs: fs.ErrNotExist},
		{name: "empty client CA bundle", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: file("empty.pem", nil)}, contains: "no PEM certificates"},
		{name: "client CA bundle of text", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: file("text.pem", []byte("not a certificate\n"))}},
		{name: "client CA bundle of a key", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: keyFile}, contains: "no PEM certificates"},
		{name: "truncated client CA bundle", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: file("half-ca.pem", append(bytes.Clone(caBundle), caBundle[:len(caBundle)/2]...))}, contains: "incomplete PEM"},
		{name: "corrupt client CA", cfg: certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: file("corrupt-ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))}, contains: "certificate 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := certs.New(tc.cfg, nil)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("New = %v, want %v", err, tc.wantIs)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(tc.contains)) {
				t.Errorf("New = %v, want it to mention %q", err, tc.contains)
			}
		})
	}
	t.Run("valid files", func(t *testing.T) {
		s := newServer(t, certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: file("ca.pem", caBundle)})
		if got := s.Certificate(); !got.Equal(leaf(t, certPEM)) {
			t.Fatalf("Certificate = serial %x", got.SerialNumber)
		}
	})
}

func TestRotation(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(t *testing.T, first *certstest.CA) *certstest.CA
	}{
		{"same CA, new serial", func(_ *testing.T, first *certstest.CA) *certstest.CA { return first }},
		{"new CA", func(t *testing.T, _ *certstest.CA) *certstest.CA { return certstest.NewCA(t, "next server CA") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca1 := certstest.NewCA(t, "server CA")
			ca2 := tc.next(t, ca1)
			cert1, key1 := issueServer(t, ca1)
			cert2, key2 := issueServer(t, ca2)
			certFile, keyFile := certstest.WriteFiles(t, t.TempDir(), cert1, key1)
			s := newServer(t, certs.Config{CertFile: certFile, KeyFile: keyFile})
			addr := serveEcho(t, s.TLSConfig())
			client := clientConfig(pool(ca1, ca2))
			presents(t, addr, client, leaf(t, cert1))

			// A connection made before the rotation outlives it.
			before, err := tls.Dial("tcp", addr, client)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { before.Close() })
			if err := echo(before); err != nil {
				t.Fatal(err)
			}

			// The new certificate lands before its key: keep the old pair.
			filewatchtest.Write(t, certFile, cert2)
			if err := s.Check(); err == nil {
				t.Fatal("Check accepted a certificate with the previous key")
			}
			presents(t, addr, client, leaf(t, cert1))

			filewatchtest.Write(t, keyFile, key2)
			if err := s.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if !s.Certificate().Equal(leaf(t, cert2)) {
				t.Fatal("Certificate did not change")
			}
			presents(t, addr, client, leaf(t, cert2))

			if err := echo(before); err != nil {
				t.Fatalf("connection from before the rotation: %v", err)
			}
			if !before.ConnectionState().PeerCertificates[0].Equal(leaf(t, cert1)) {
				t.Fatal("connection from before the rotation changed certificate")
			}
		})
	}
}

func TestRotationByPolling(t *testing.T) {
	ca := certstest.NewCA(t, "server CA")
	cert1, key1 := issueServer(t, ca)
	cert2, key2 := issueServer(t, ca)
	dir := t.TempDir()
	certFile, keyFile := certstest.WriteFiles(t, dir, cert1, key1)
	s := newServer(t, certs.Config{CertFile: certFile, KeyFile: keyFile, ReloadInterval: 10 * time.Millisecond})
	addr := serveEcho(t, s.TLSConfig())
	client := clientConfig(ca.Pool())
	presents(t, addr, client, leaf(t, cert1))

	certstest.WriteFiles(t, dir, cert2, key2)
	want := leaf(t, cert2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := exchange(addr, client)
		if err != nil {
			t.Fatalf("handshake during rotation: %v", err)
		}
		if st.PeerCertificates[0].Equal(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the poller did not pick up the new certificate within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClientCertificates(t *testing.T) {
	serverCA := certstest.NewCA(t, "server CA")
	caA, caB := certstest.NewCA(t, "client CA A"), certstest.NewCA(t, "client CA B")
	dir := t.TempDir()
	certFile, keyFile := writeServerPair(t, dir, serverCA)
	caFile := filepath.Join(dir, "client-ca.pem")
	filewatchtest.Write(t, caFile, caA.CertPEM())
	s := newServer(t, certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile})
	addr := serveEcho(t, s.TLSConfig())

	roots := serverCA.Pool()
	clients := map[string]*tls.Config{
		"no certificate":        clientConfig(roots),
		"A":                     clientConfig(roots, issuePair(t, caA, "alice", true)),
		"B":                     clientConfig(roots, issuePair(t, caB, "bob", true)),
		"A, server usage only":  clientConfig(roots, issuePair(t, caA, "mallory", false)),
		"self-signed as client": clientConfig(roots, issuePair(t, certstest.NewCA(t, "eve"), "eve", true)),
	}
	bundleAB := append(bytes.Clone(caA.CertPEM()), caB.CertPEM()...)
	// Steps run in order against the one server: a CA rotation from A to B
	// through a bundle of both.
	for _, step := range []struct {
		name      string
		caPEM     []byte // written to the CA file before the step, unless nil
		checkFail bool
		accepted  []string
	}{
		{name: "A", accepted: []string{"A"}},
		{name: "A and B", caPEM: bundleAB, accepted: []string{"A", "B"}},
		{name: "B", caPEM: caB.CertPEM(), accepted: []string{"B"}},
		{name: "empty bundle keeps B", caPEM: []byte{}, checkFail: true, accepted: []string{"B"}},
		{name: "truncated bundle keeps B", caPEM: bundleAB[:len(bundleAB)-40], checkFail: true, accepted: []string{"B"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.caPEM != nil {
				filewatchtest.Write(t, caFile, step.caPEM)
			}
			if err := s.Check(); (err != nil) != step.checkFail {
				t.Fatalf("Check = %v, want failure %v", err, step.checkFail)
			}
			for name, cfg := range clients {
				_, err := exchange(addr, cfg)
				want := false
				for _, a := range step.accepted {
					want = want || a == name
				}
				if want && err != nil {
					t.Errorf("client %s refused: %v", name, err)
				}
				if !want && err == nil {
					t.Errorf("client %s accepted", name)
				}
			}
		})
	}
}

// A client that resumes a TLS session skips certificate verification; it
// must not carry an acceptance past the removal of its CA.
func TestClientCertificatesResumption(t *testing.T) {
	serverCA := certstest.NewCA(t, "server CA")
	caA, caB := certstest.NewCA(t, "client CA A"), certstest.NewCA(t, "client CA B")
	dir := t.TempDir()
	certFile, keyFile := writeServerPair(t, dir, serverCA)
	caFile := filepath.Join(dir, "client-ca.pem")
	filewatchtest.Write(t, caFile, caA.CertPEM())
	s := newServer(t, certs.Config{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile})
	addr := serveEcho(t, s.TLSConfig())

	client := clientConfig(serverCA.Pool(), issuePair(t, caA, "alice", true))
	client.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	if _, err := exchange(addr, client); err != nil {
		t.Fatal(err)
	}
	st, err := exchange(addr, client)
	if err != nil {
		t.Fatal(err)
	}
	if !st.DidResume {
		t.Fatal("the second connection did not resume; the test proves nothing")
	}

	filewatchtest.Write(t, caFile, caB.CertPEM())
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if st, err := exchange(addr, client); err == nil {
		t.Fatalf("client of a removed CA accepted (resumed: %v)", st.DidResume)
	}
}

func TestMinVersion(t *testing.T) {
	ca := certstest.NewCA(t, "server CA")
	clientCA := certstest.NewCA(t, "client CA")
	dir := t.TempDir()
	certFile, keyFile := writeServerPair(t, dir, ca)
	caFile := filepath.Join(dir, "client-ca.pem")
	filewatchtest.Write(t, caFile, clientCA.CertPEM())
	clientCert := issuePair(t, clientCA, "alice", true)
	for _, tc := range []struct {
		name       string
		minVersion string
		clientCA   bool
		clientMax  uint16
		want       uint16 // 0: refused
	}{
		{"default, TLS 1.2 client", "", false, tls.VersionTLS12, tls.VersionTLS12},
		{"1.2, TLS 1.2 client", "1.2", false, tls.VersionTLS12, tls.VersionTLS12},
		{"1.2, TLS 1.3 client", "1.2", false, tls.VersionTLS13, tls.VersionTLS13},
		{"1.3, TLS 1.2 client", "1.3", false, tls.VersionTLS12, 0},
		{"1.3, TLS 1.3 client", "1.3", false, tls.VersionTLS13, tls.VersionTLS13},
		{"1.3 with client CA, TLS 1.2 client", "1.3", true, tls.VersionTLS12, 0},
		{"1.2 with client CA, TLS 1.2 client", "1.2", true, tls.VersionTLS12, tls.VersionTLS12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := certs.Config{CertFile: certFile, KeyFile: keyFile, MinVersion: tc.minVersion}
			if tc.clientCA {
				cfg.ClientCAFile = caFile
			}
			addr := serveEcho(t, newServer(t, cfg).TLSConfig())
			client := clientConfig(ca.Pool(), clientCert)
			client.MaxVersion = tc.clientMax
			st, err := exchange(addr, client)
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("accepted %s", tls.VersionName(st.Version))
			case tc.want != 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != 0 && st.Version != tc.want:
				t.Fatalf("negotiated %s, want %s", tls.VersionName(st.Version), tls.VersionName(tc.want))
			}
		})
	}
}

func TestGRPC(t *testing.T) {
	for _, mutual := range []bool{false, true} {
		name := map[bool]string{false: "TLS", true: "mutual TLS"}[mutual]
		t.Run(name, func(t *testing.T) {
			ca1, ca2 := certstest.NewCA(t, "server CA"), certstest.NewCA(t, "next server CA")
			clientCA := certstest.NewCA(t, "client CA")
			dir := t.TempDir()
			certFile, keyFile := writeServerPair(t, dir, ca1)
			cfg := certs.Config{CertFile: certFile, KeyFile: keyFile}
			var clientCerts []tls.Certificate
			if mutual {
				cfg.ClientCAFile = filepath.Join(dir, "client-ca.pem")
				filewatchtest.Write(t, cfg.ClientCAFile, clientCA.CertPEM())
				clientCerts = append(clientCerts, issuePair(t, clientCA, "alice", true))
			}
			s := newServer(t, cfg)

			gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(s.TLSConfig())))
			healthpb.RegisterHealthServer(gs, health.NewServer())
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- gs.Serve(lis) }()
			t.Cleanup(func() {
				gs.Stop()
				if err := <-served; err != nil {
					t.Errorf("Serve: %v", err)
				}
			})

			check := func(t *testing.T, tlsCfg *tls.Config) error {
				t.Helper()
				conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
				if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
					t.Fatalf("health = %v, want SERVING", resp.GetStatus())
				}
				return err
			}
			if err := check(t, clientConfig(ca1.Pool(), clientCerts...)); err != nil {
				t.Fatalf("health check: %v", err)
			}
			if mutual {
				if err := check(t, clientConfig(ca1.Pool())); status.Code(err) != codes.Unavailable {
					t.Fatalf("client without a certificate: %v, want Unavailable", err)
				}
			}

			writeServerPair(t, dir, ca2)
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			if err := check(t, clientConfig(ca2.Pool(), clientCerts...)); err != nil {
				t.Fatalf("health check after rotation: %v", err)
			}
			if err := check(t, clientConfig(ca1.Pool(), clientCerts...)); status.Code(err) != codes.Unavailable {
				t.Fatalf("client trusting only the old CA after rotation: %v, want Unavailable", err)
			}
		})
	}
}

func TestHTTPS(t *testing.T) {
	// h1, h2 and both are what a server or a client speaks.
	h1, h2, both := new(http.Protocols), new(http.Protocols), new(http.Protocols)
	h1.SetHTTP1(true)
	h2.SetHTTP2(true)
	both.SetHTTP1(true)
	both.SetHTTP2(true)
	for _, tc := range []struct {
		name      string
		mutual    bool
		server    *http.Protocols // nil: net/http's default, both
		client    *http.Protocols
		wantProto string
	}{
		{"HTTP/1.1", false, nil, h1, "HTTP/1.1"},
		{"HTTP/2", false, nil, h2, "HTTP/2.0"},
		{"HTTP/2 preferred", false, nil, both, "HTTP/2.0"},
		{"server without HTTP/2", false, h1, both, "HTTP/1.1"},
		{"HTTP/1.1, mutual TLS", true, nil, h1, "HTTP/1.1"},
		{"HTTP/2, mutual TLS", true, nil, h2, "HTTP/2.0"},
		{"HTTP/2 preferred, mutual TLS", true, nil, both, "HTTP/2.0"},
		// The per-connection config must not offer h2 on its own.
		{"server without HTTP/2, mutual TLS", true, h1, both, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca, clientCA := certstest.NewCA(t, "server CA"), certstest.NewCA(t, "client CA")
			dir := t.TempDir()
			certFile, keyFile := writeServerPair(t, dir, ca)
			cfg := certs.Config{CertFile: certFile, KeyFile: keyFile}
			client := clientConfig(ca.Pool())
			if tc.mutual {
				cfg.ClientCAFile = filepath.Join(dir, "client-ca.pem")
				filewatchtest.Write(t, cfg.ClientCAFile, clientCA.CertPEM())
				client.Certificates = []tls.Certificate{issuePair(t, clientCA, "alice", true)}
			}
			s := newServer(t, cfg)

			srv := &http.Server{
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, r.Proto)
				}),
				TLSConfig: s.TLSConfig(),
				Protocols: tc.server,
			}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- srv.ServeTLS(lis, "", "") }()
			t.Cleanup(func() {
				srv.Close()
				if err := <-served; !errors.Is(err, http.ErrServerClosed) {
					t.Errorf("ServeTLS: %v", err)
				}
			})

			tr := &http.Transport{TLSClientConfig: client, Protocols: tc.client}
			t.Cleanup(tr.CloseIdleConnections)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+lis.Addr().String()+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Proto != tc.wantProto || string(body) != tc.wantProto {
				t.Fatalf("got %s %s %q, want 200 over %s", resp.Proto, resp.Status, body, tc.wantProto)
			}

			if tc.mutual {
				anon := &http.Transport{TLSClientConfig: clientConfig(ca.Pool()), Protocols: tc.client}
				t.Cleanup(anon.CloseIdleConnections)
				if resp, err := (&http.Client{Transport: anon, Timeout: 10 * time.Second}).Do(req); err == nil {
					resp.Body.Close()
					t.Fatal("client without a certificate got a response")
				}
			}
		})
	}
}
