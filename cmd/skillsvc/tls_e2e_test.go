package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/certs/certstest"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file check TLS, mTLS and certificate rotation, and
// that insecure mode is refused on a public address.

// tlsDial connects with TLS trusting roots, presenting certs.
func tlsDial(t *testing.T, addr string, roots *x509.CertPool, certs ...tls.Certificate) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// metricsURL finds p's metrics address in its log, as an https URL when
// the binary said it serves TLS there.
func metricsURL(t *testing.T, p *proc) string {
	t.Helper()
	for line := range strings.Lines(p.output()) {
		var rec struct {
			Msg, Addr string
			TLS       bool `json:"tls"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving metrics" {
			if rec.TLS {
				return "https://" + rec.Addr + "/metrics"
			}
			return "http://" + rec.Addr + "/metrics"
		}
	}
	t.Fatalf("no metrics address logged:\n%s", p.output())
	return ""
}

// getMetrics fetches url with TLS trusting roots; it returns the status
// code and body, or the error.
func getMetrics(url string, roots *x509.CertPool, certs ...tls.Certificate) (int, string, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestTLSEndToEnd serves gRPC and metrics over TLS, rotates the server
// certificate to another CA under the running binary, and requires client
// certificates from a second binary.
func TestTLSEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	call := func(conn *grpc.ClientConn) error {
		cctx, cancel := context.WithTimeout(alice, 10*time.Second)
		defer cancel()
		_, err := skillsvcv1.NewFilesystemServiceClient(conn).Write(cctx, &skillsvcv1.WriteRequest{Path: "/workspace/tls.md", Content: "over tls"})
		return err
	}
	// fresh makes one call on a connection of its own, so it handshakes now.
	fresh := func(addr string, roots *x509.CertPool, certs ...tls.Certificate) error {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return call(conn)
	}

	ca1, ca2 := certstest.NewCA(t, "ca-one"), certstest.NewCA(t, "ca-two")
	dir := t.TempDir()
	certPEM, keyPEM := ca1.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certFile, keyFile := certstest.WriteFiles(t, dir, certPEM, keyPEM)
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f,
		"--tls.cert-file="+certFile, "--tls.key-file="+keyFile, "--tls.reload-interval=100ms",
		"--metrics.listen=127.0.0.1:0", "--metrics.tls")...)...)

	if err := call(tlsDial(t, p.addr, ca1.Pool())); err != nil {
		t.Fatalf("TLS client trusting CA1: %v", err)
	}
	grpctest.WantCode(t, call(dial(t, p.addr)), codes.Unavailable)
	grpctest.WantCode(t, fresh(p.addr, ca2.Pool()), codes.Unavailable)

	murl := metricsURL(t, p)
	if !strings.HasPrefix(murl, "https://") {
		t.Fatalf("metrics served at %s, want https", murl)
	}
	if code, body, err := getMetrics(murl, ca1.Pool()); err != nil || code != http.StatusOK || !strings.Contains(body, "grpc_server_handled_total") {
		t.Errorf("metrics over HTTPS trusting CA1 = %d, %v:\n%.300s", code, err, body)
	}
	if code, _, err := getMetrics("http://"+strings.TrimPrefix(murl, "https://"), nil); err == nil && code == http.StatusOK {
		t.Errorf("metrics answered plain HTTP with 200")
	}

	// Rotate to a certificate from CA2.
	certPEM, keyPEM = ca2.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certstest.WriteFiles(t, dir, certPEM, keyPEM)
	pollUntil(t, 15*time.Second, "the server to present the CA2 certificate", func() bool { return fresh(p.addr, ca2.Pool()) == nil })
	grpctest.WantCode(t, fresh(p.addr, ca1.Pool()), codes.Unavailable)
	if code, _, err := getMetrics(murl, ca2.Pool()); err != nil || code != http.StatusOK {
		t.Errorf("metrics trusting CA2 after the rotation = %d, %v", code, err)
	}
	if _, _, err := getMetrics(murl, ca1.Pool()); err == nil {
		t.Errorf("metrics still verify with CA1 after the rotation")
	}
	if procExited(p) {
		t.Fatalf("skillsvc exited:\n%s", p.output())
	}

	// Client certificates required.
	clientCA, otherCA := certstest.NewCA(t, "clients"), certstest.NewCA(t, "other-clients")
	mtlsDir := t.TempDir()
	caFile := filepath.Join(mtlsDir, "client-ca.pem")
	filewatchtest.Replace(t, caFile, clientCA.CertPEM())
	certPEM, keyPEM = ca1.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certFile, keyFile = certstest.WriteFiles(t, mtlsDir, certPEM, keyPEM)
	m := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f,
		"--tls.cert-file="+certFile, "--tls.key-file="+keyFile, "--tls.client-ca-file="+caFile, "--tls.reload-interval=100ms",
		"--metrics.listen=127.0.0.1:0", "--metrics.tls")...)...)
	keyPair := func(certPEM, keyPEM []byte) tls.Certificate {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	worker := keyPair(clientCA.Issue(t, "worker", nil, nil, true))
	stranger := keyPair(otherCA.Issue(t, "worker", nil, nil, true))
	serverUse := keyPair(clientCA.Issue(t, "worker", nil, nil, false)) // right CA, not for clients

	grpctest.WantCode(t, fresh(m.addr, ca1.Pool()), codes.Unavailable)
	grpctest.WantCode(t, fresh(m.addr, ca1.Pool(), stranger), codes.Unavailable)
	grpctest.WantCode(t, fresh(m.addr, ca1.Pool(), serverUse), codes.Unavailable)
	if err := fresh(m.addr, ca1.Pool(), worker); err != nil {
		t.Errorf("client with a certificate from the client CA: %v", err)
	}
	// The certificate admits the connection; the token still decides the call.
	wc := tlsDial(t, m.addr, ca1.Pool(), worker)
	_, err := skillsvcv1.NewFilesystemServiceClient(wc).Write(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/x.md", Content: "x"})
	grpctest.WantCode(t, err, codes.Unauthenticated)

	mm := metricsURL(t, m)
	if _, _, err := getMetrics(mm, ca1.Pool()); err == nil {
		t.Errorf("metrics served without a client certificate")
	}
	if code, _, err := getMetrics(mm, ca1.Pool(), worker); err != nil || code != http.StatusOK {
		t.Errorf("metrics with a client certificate = %d, %v", code, err)
	}
}

// TestInsecureRemoteRefused checks that insecure mode will not listen on a
// non-loopback address unless told to, and says which flag allows it.
func TestInsecureRemoteRefused(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	bin := binary(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		t.Run(listen, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(srv.S3Flags(bucket), "--listen="+listen, "--log.format=json")...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), minioEnv(srv)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
				t.Fatalf("skillsvc --listen=%s in insecure mode: %v, want a non-zero exit\n%s", listen, err, out)
			}
			if !strings.Contains(string(out), "--auth.allow-insecure-remote") {
				t.Errorf("the refusal does not name --auth.allow-insecure-remote:\n%s", out)
			}
		})
	}

	// Allowed, it serves and warns.
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), "--listen=0.0.0.0:0", "--auth.allow-insecure-remote")...)
	var warned bool
	for line := range strings.Lines(p.output()) {
		var rec struct {
			Level, Msg string
			Remote     bool `json:"allow_insecure_remote"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == "WARN" && strings.Contains(rec.Msg, "insecure") && rec.Remote {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning about insecure mode on a remote listener:\n%s", p.output())
	}
	_, port, err := net.SplitHostPort(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, net.JoinHostPort("127.0.0.1", port)))
	if _, err := fsc.Write(grpctest.AsCaller(t.Context(), "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "x"}); err != nil {
		t.Errorf("Write to the allowed insecure remote listener: %v", err)
	}

	// jwt mode needs no such flag on any address.
	f := newJWTFixture(t)
	startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f, "--listen=0.0.0.0:0")...)...)
}
