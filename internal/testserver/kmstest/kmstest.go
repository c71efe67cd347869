// Package kmstest serves an AWS KMS-compatible server to tests as
// sigstore's awskms provider reaches one: local-kms
// (testserver.StartLocalKMS) behind a TLS front on 127.0.0.1, since the
// provider speaks HTTPS to the endpoint a key URI names, with a
// certificate of its own trusted through AWS_CA_BUNDLE.
package kmstest

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
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

// KMS is a KMS-compatible server reachable over TLS.
type KMS struct {
	// Endpoint is the TLS front's host:port, as an awskms:// URI names it.
	Endpoint string
	// CABundle is the PEM file of the front's certificate.
	CABundle string
	Region   string
	plain    string
}

// Start starts the server and its TLS front for this test; t.Cleanup
// stops them.
func Start(t testing.TB) *KMS {
	t.Helper()
	lk := testserver.StartLocalKMS(t)
	u, err := url.Parse(lk.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	addr, ca, stop, err := tlsFront(u)
	if err != nil {
		t.Fatalf("kmstest: the TLS front: %v", err)
	}
	t.Cleanup(stop)
	k := &KMS{Endpoint: addr, CABundle: filepath.Join(t.TempDir(), "kms-ca.pem"), Region: lk.Region, plain: lk.Endpoint}
	if err := os.WriteFile(k.CABundle, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

// tlsFront serves a reverse proxy to target over TLS on 127.0.0.1 and
// returns its address, its certificate (PEM) and how to stop it.
func tlsFront(target *url.URL) (string, []byte, func(), error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, nil, err
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
		return "", nil, nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		return "", nil, nil, err
	}
	srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln.Addr().String(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), func() { srv.Close() }, nil
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
		t.Fatalf("kmstest: creating a KMS key: %v", err)
	}
	if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String("alias/" + alias), TargetKeyId: out.KeyMetadata.KeyId}); err != nil {
		t.Fatalf("kmstest: naming a KMS key: %v", err)
	}
	pk, err := c.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: out.KeyMetadata.KeyId})
	if err != nil {
		t.Fatalf("kmstest: a KMS key's public key: %v", err)
	}
	pub, err := x509.ParsePKIXPublicKey(pk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return "awskms://" + k.Endpoint + "/alias/" + alias, pub
}
