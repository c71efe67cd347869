package testserver

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
)

const (
	kmsBinEnv    = "SKILLSVC_LOCALKMS_BIN"
	cosignBinEnv = "SKILLSVC_COSIGN_BIN"
	kmsRegion    = "eu-west-2"
)

// KMS is a running AWS KMS-compatible server: local-kms (`make tools`
// installs it), which signs with MessageType DIGEST as AWS KMS does and as
// sigstore's awskms provider asks (moto's server hashes such a digest
// again). sigstore's provider speaks HTTPS to an endpoint named in the key
// URI, so the test serves local-kms behind a TLS front on 127.0.0.1 with
// a certificate of its own, trusted through AWS_CA_BUNDLE.
type KMS struct {
	// Endpoint is the TLS front's host:port, as an awskms:// URI names it.
	Endpoint string
	// CABundle is the PEM file of the front's certificate.
	CABundle string
	Region   string
	plain    string // http://127.0.0.1:PORT of local-kms itself
}

// StartKMS starts a KMS-compatible server for this test; t.Cleanup stops
// it.
func StartKMS(t testing.TB) *KMS {
	t.Helper()
	Integration(t, "local-kms")
	bin, err := findBinary(kmsBinEnv, inRepoTools("local-kms"), onPath("local-kms"))
	if err != nil {
		unavailable(t, "local-kms (KMS)", kmsBinEnv, fmt.Errorf("finding local-kms: %w", err))
	}
	k := startRetrying(t, "local-kms (KMS)", kmsBinEnv, func() (*KMS, *process, error) { return startKMSOnce(bin) })
	front, ca, err := tlsFront(k.plain)
	if err != nil {
		t.Fatalf("testserver: the KMS TLS front: %v", err)
	}
	t.Cleanup(func() { front.Close() })
	k.Endpoint = front.Addr
	k.CABundle = filepath.Join(t.TempDir(), "kms-ca.pem")
	if err := os.WriteFile(k.CABundle, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

func startKMSOnce(bin string) (*KMS, *process, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	dir, err := os.MkdirTemp("", "skillsvc-kms-")
	if err != nil {
		return nil, nil, err
	}
	env := serverEnv("KMS_", "PORT="+strconv.Itoa(port), "KMS_REGION="+kmsRegion, "KMS_DATA_PATH="+filepath.Join(dir, "data"), "KMS_SEED_PATH="+filepath.Join(dir, "none.yaml"))
	p, err := startProcess("local-kms", dir, bin, nil, env)
	if err != nil {
		return nil, nil, err
	}
	k := &KMS{Region: kmsRegion, plain: "http://127.0.0.1:" + strconv.Itoa(port)}
	// local-kms answers a GET with 405: it is up.
	if err := waitHTTPReady(p, k.plain+"/", port, func(code int) bool { return code == http.StatusMethodNotAllowed }); err != nil {
		p.stop()
		return nil, nil, err
	}
	return k, p, nil
}

// front is a TLS reverse proxy on 127.0.0.1.
type front struct {
	Addr string
	srv  *http.Server
}

func (f *front) Close() { f.srv.Close() }

func tlsFront(target string) (*front, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "skillsvc test KMS"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		return nil, nil, err
	}
	f := &front{Addr: ln.Addr().String(), srv: &http.Server{Handler: httputil.NewSingleHostReverseProxy(u), ReadHeaderTimeout: 10 * time.Second}}
	go f.srv.Serve(ln)
	return f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// Env is what a client of the server needs in its environment: static
// credentials, the region and the CA bundle trusting the TLS front.
func (k *KMS) Env() map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": k.Region,
		"AWS_CA_BUNDLE": k.CABundle, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
}

// NewSigningKey creates an ECC_NIST_P256 signing key with the alias
// alias/<alias> and returns its awskms:// URI (by alias, through the TLS
// front) and its public key.
func (k *KMS) NewSigningKey(t testing.TB, alias string) (string, crypto.PublicKey) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := kms.New(kms.Options{
		Region: k.Region, BaseEndpoint: aws.String(k.plain),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{KeySpec: kmstypes.KeySpecEccNistP256, KeyUsage: kmstypes.KeyUsageTypeSignVerify})
	if err != nil {
		t.Fatalf("testserver: creating a KMS key: %v", err)
	}
	if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String("alias/" + alias), TargetKeyId: out.KeyMetadata.KeyId}); err != nil {
		t.Fatalf("testserver: naming a KMS key: %v", err)
	}
	pk, err := c.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: out.KeyMetadata.KeyId})
	if err != nil {
		t.Fatalf("testserver: a KMS key's public key: %v", err)
	}
	pub, err := x509.ParsePKIXPublicKey(pk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return "awskms://" + k.Endpoint + "/alias/" + alias, pub
}

// Cosign is the path of the cosign binary (`make tools` installs it),
// or the test skips (fails under CI or SKILLSVC_REQUIRE_SERVERS=1).
func Cosign(t testing.TB) string {
	t.Helper()
	Integration(t, "cosign")
	bin, err := findBinary(cosignBinEnv, inRepoTools("cosign"), onPath("cosign"))
	if err != nil {
		unavailable(t, "cosign", cosignBinEnv, fmt.Errorf("finding cosign: %w", err))
	}
	return bin
}
