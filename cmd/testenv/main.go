// Command testenv runs a disposable skillsvc on a real MinIO for the test
// suites written in other languages (clients/python, clients/ts), so they
// test the real binary with the provisioning the Go tests use
// (internal/testserver) instead of a copy of it.
//
//	testenv [--skillsvc PATH] [--user alice] [--library DIR] [--shared-library DIR] [--tls | --mtls]
//	        [--lift-limits REASON] [-- skillsvc flags]
//
// It starts MinIO on a free loopback port, creates a bucket, uploads the
// libraries with plain S3 PUTs (as users upload them; by default the
// example library, built in), starts skillsvc on it in insecure mode on
// loopback with the defaults a deployment gets (per-user limits included),
// and prints one JSON line to stdout once it serves:
//
//	{"grpc_addr":"127.0.0.1:PORT","http_addr":"127.0.0.1:PORT","user":"alice","s3_endpoint":"http://127.0.0.1:PORT",
//	 "bucket":"skillsvc","access_key":"…","secret_key":"…","region":"us-east-1"}
//
// With --tls, skillsvc serves TLS with a certificate for 127.0.0.1 from a
// throwaway CA, and the line adds "ca_file" (and a client certificate,
// "client_cert_file" and "client_key_file", issued by the same CA); --mtls
// also requires that client certificate.
//
// A suite that must run without the per-user limits passes --lift-limits
// with the reason, which is logged; skillsvc flags that lift a limit are
// refused without it.
//
// Outside a checkout of the repository it needs the skillsvc binary
// (--skillsvc or $SKILLSVC_BIN) and MinIO ($SKILLSVC_MINIO_BIN, or minio on
// the PATH); inside one it builds skillsvc when not given one. It fails
// with a message saying which is missing.
//
// It runs until its stdin reaches EOF or it gets SIGINT/SIGTERM, then stops
// both servers and removes their data, so a test harness that dies takes the
// servers with it. skillsvc's log goes to stderr.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skillsvc/skillsvc/examples"
	"github.com/skillsvc/skillsvc/internal/certs/certstest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const bucket = "skillsvc"

type options struct {
	skillsvc      string
	user          string
	library       string
	sharedLibrary string
	timeout       time.Duration
	tls, mtls     bool
	liftLimits    string
	extra         []string
}

// env is what testenv prints: everything a test needs to reach the
// service and, for out-of-band changes, the bucket.
type env struct {
	GRPCAddr   string `json:"grpc_addr"`
	HTTPAddr   string `json:"http_addr"`
	User       string `json:"user"`
	S3Endpoint string `json:"s3_endpoint"`
	Bucket     string `json:"bucket"`
	AccessKey  string `json:"access_key"`
	SecretKey  string `json:"secret_key"`
	Region     string `json:"region"`
	// With --tls or --mtls: PEM files of the CA and of a client certificate.
	CAFile         string `json:"ca_file,omitempty"`
	ClientCertFile string `json:"client_cert_file,omitempty"`
	ClientKeyFile  string `json:"client_key_file,omitempty"`
}

func main() {
	var o options
	fs := flag.NewFlagSet("testenv", flag.ContinueOnError)
	fs.StringVar(&o.skillsvc, "skillsvc", os.Getenv("SKILLSVC_BIN"), "skillsvc binary (default $SKILLSVC_BIN, else built from ./cmd/skillsvc)")
	fs.StringVar(&o.user, "user", "alice", "user whose library --library is")
	fs.StringVar(&o.library, "library", "", "folder uploaded to <user>/skills/ (default: the example library, examples/skills, built in; \"-\" for none)")
	fs.StringVar(&o.sharedLibrary, "shared-library", "", "folder uploaded to the shared library, _shared/skills/")
	fs.DurationVar(&o.timeout, "start-timeout", 2*time.Minute, "how long the servers may take to start")
	fs.BoolVar(&o.tls, "tls", false, "serve TLS with a certificate from a throwaway CA")
	fs.BoolVar(&o.mtls, "mtls", false, "like --tls, and require a client certificate from that CA")
	fs.StringVar(&o.liftLimits, "lift-limits", "", "why this suite runs skillsvc with the per-user limits off (default: the limits stay on)")
	// A harness shows the last lines testenv wrote: the error, not the usage.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.Usage()
			return
		}
		fmt.Fprintf(os.Stderr, "testenv: %v (testenv -h lists the flags)\n", err)
		os.Exit(2)
	}
	o.extra = fs.Args()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	// The example library is built in, so only building skillsvc needs a
	// checkout: testenv runs from anywhere given a binary.
	library := examples.Skills()
	switch o.library {
	case "", "-":
	default:
		library = os.DirFS(o.library)
	}
	dir, err := os.MkdirTemp("", "skillsvc-testenv-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.skillsvc == "" {
		if _, err := testserver.RepoRoot(); err != nil {
			return fmt.Errorf("no skillsvc binary: pass --skillsvc or set SKILLSVC_BIN, or run testenv inside a skillsvc checkout to build one (%w)", err)
		}
		if o.skillsvc, err = testserver.BuildSkillsvc(ctx, dir); err != nil {
			return err
		}
	}
	// skillsvc runs in dir.
	if o.skillsvc, err = filepath.Abs(o.skillsvc); err != nil {
		return err
	}

	m, stopMinIO, err := testserver.RunMinIO()
	if err != nil {
		return fmt.Errorf("minio: %w (build it with `make tools`, or set SKILLSVC_MINIO_BIN)", err)
	}
	defer stopMinIO()
	c := m.S3()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	if o.library != "-" {
		if err := upload(ctx, c, library, o.user+"/skills/"); err != nil {
			return fmt.Errorf("--library %s: %w", o.library, err)
		}
	}
	if o.sharedLibrary != "" {
		if err := upload(ctx, c, os.DirFS(o.sharedLibrary), "_shared/skills/"); err != nil {
			return fmt.Errorf("--shared-library %s: %w", o.sharedLibrary, err)
		}
	}

	args := append(m.S3Flags(bucket), "--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0",
		"--metrics.listen=127.0.0.1:0", "--auth.mode=insecure")
	var (
		tlsFiles env
		health   *tls.Config // how RunSkillsvc's health check connects
	)
	if o.tls || o.mtls {
		tlsArgs, files, cfg, err := issueCertificates(dir, o.mtls)
		if err != nil {
			return err
		}
		args, tlsFiles, health = append(args, tlsArgs...), files, cfg
	}
	wait := []string{"serving http"}
	if slices.Contains(o.extra, "--http.listen=") {
		wait = nil // HTTP turned off
	}
	s, err := testserver.RunSkillsvc(ctx, testserver.SkillsvcConfig{
		Bin: o.skillsvc, Args: append(args, o.extra...), Env: m.SkillsvcEnv(), Dir: dir, Log: os.Stderr, Wait: wait, TLS: health,
		LiftLimits: o.liftLimits,
	}, o.timeout)
	if err != nil {
		return err
	}
	defer s.Stop()

	out, _ := json.Marshal(env{
		GRPCAddr: s.Addrs["serving"], HTTPAddr: s.Addrs["serving http"], User: o.user,
		S3Endpoint: m.Endpoint, Bucket: bucket, AccessKey: m.AccessKey, SecretKey: m.SecretKey, Region: m.Region,
		CAFile: tlsFiles.CAFile, ClientCertFile: tlsFiles.ClientCertFile, ClientKeyFile: tlsFiles.ClientKeyFile,
	})
	fmt.Println(string(out))

	stdinClosed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-stdinClosed:
	case <-ctx.Done():
	case <-s.Done():
		return fmt.Errorf("skillsvc exited:\n%s", s.Tail())
	}
	return nil
}

// upload puts every regular file of lib at prefix + its slash path.
func upload(ctx context.Context, c *s3.Client, lib fs.FS, prefix string) error {
	return fs.WalkDir(lib, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		f, err := lib.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		key := prefix + p
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: f}); err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		return nil
	})
}

// issueCertificates writes a throwaway CA, a server certificate for
// 127.0.0.1 and localhost, and a client certificate under dir, and returns
// skillsvc's TLS flags, the files a client needs, and a client TLS config
// with that client certificate.
func issueCertificates(dir string, requireClient bool) (args []string, files env, client *tls.Config, err error) {
	var f fatal
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(fatal); ok {
				err = e.err
				return
			}
			panic(r)
		}
	}()
	ca := certstest.NewCA(f, "skillsvc testenv CA")
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(filepath.Join(tlsDir, "client"), 0o700); err != nil {
		return nil, env{}, nil, err
	}
	files.CAFile = filepath.Join(tlsDir, "ca.pem")
	if err := os.WriteFile(files.CAFile, ca.CertPEM(), 0o600); err != nil {
		return nil, env{}, nil, err
	}
	cert, key := ca.Issue(f, "skillsvc", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, false)
	certFile, keyFile := certstest.WriteFiles(f, tlsDir, cert, key)
	cert, key = ca.Issue(f, "testenv client", nil, nil, true)
	files.ClientCertFile, files.ClientKeyFile = certstest.WriteFiles(f, filepath.Join(tlsDir, "client"), cert, key)
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, env{}, nil, err
	}
	args = []string{"--tls.cert-file=" + certFile, "--tls.key-file=" + keyFile}
	if requireClient {
		args = append(args, "--tls.client-ca-file="+files.CAFile)
	}
	client = &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return args, files, client, nil
}

// fatal lets certstest, written for tests, report a failure to a program:
// Fatalf panics with it and issueCertificates recovers it as an error.
type fatal struct{ err error }

func (fatal) Helper() {}

func (fatal) Fatalf(format string, args ...any) { panic(fatal{fmt.Errorf(format, args...)}) }
