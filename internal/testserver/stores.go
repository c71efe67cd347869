package testserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The S3 stores besides MinIO that the acceptance suite and the
// write-safety probe run on (the store matrix, make test-stores), each
// seen as a *MinIO: an endpoint, credentials and a region are all the
// suites use. Restart and quotas are MinIO's alone.
const (
	versityBinEnv = "SKILLSVC_VERSITYGW_BIN"
	// S3EndpointEnv points the suites at any S3-compatible store, with
	// S3AccessKeyEnv, S3SecretKeyEnv and optionally S3RegionEnv.
	S3EndpointEnv  = "SKILLSVC_S3_ENDPOINT"
	S3AccessKeyEnv = "SKILLSVC_S3_ACCESS_KEY"
	S3SecretKeyEnv = "SKILLSVC_S3_SECRET_KEY"
	S3RegionEnv    = "SKILLSVC_S3_REGION"
)

// StartMotoS3 starts moto's server (`make tools` installs it) for this test
// and returns it as an S3 store; t.Cleanup stops it.
func StartMotoS3(t testing.TB) *MinIO {
	t.Helper()
	s := StartSQS(t) // moto serves every service from one port
	return &MinIO{Endpoint: s.Endpoint, AccessKey: "test", SecretKey: "test", Region: s.Region}
}

// StartVersityGW starts versitygw on its posix backend (a temporary
// directory; `make tools` installs it) for this test; t.Cleanup stops it.
func StartVersityGW(t testing.TB) *MinIO {
	t.Helper()
	Integration(t, "versitygw")
	bin, err := findBinary(versityBinEnv, inRepoTools("versitygw"), onPath("versitygw"))
	if err != nil {
		unavailable(t, "versitygw", versityBinEnv, fmt.Errorf("finding versitygw: %w", err))
	}
	return startRetrying(t, "versitygw", versityBinEnv, func() (*MinIO, *process, error) { return startVersityOnce(bin) })
}

func startVersityOnce(bin string) (*MinIO, *process, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	dir, err := os.MkdirTemp("", "skillsvc-versitygw-")
	if err != nil {
		return nil, nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, nil, err
	}
	m := &MinIO{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), AccessKey: "skillsvc-test", SecretKey: "skillsvc-test-secret", Region: minioRegion}
	args := []string{"--access", m.AccessKey, "--secret", m.SecretKey, "--region", m.Region, "--port", "127.0.0.1:" + strconv.Itoa(port), "posix", data}
	p, err := startProcess("versitygw", dir, bin, args, serverEnv("VGW_"))
	if err != nil {
		return nil, nil, err
	}
	// An S3 server answers an unsigned request 403: any answer will do.
	if err := waitHTTPReady(p, m.Endpoint, port, func(int) bool { return true }); err != nil {
		p.stop()
		return nil, nil, err
	}
	return m, p, nil
}

// EnvS3 is the store $SKILLSVC_S3_ENDPOINT names, with its credentials,
// or nil when it is unset. Suites create (and remove) buckets of fresh
// random names on it, never touching existing ones.
func EnvS3() *MinIO {
	ep := os.Getenv(S3EndpointEnv)
	if ep == "" {
		return nil
	}
	region := os.Getenv(S3RegionEnv)
	if region == "" {
		region = minioRegion
	}
	return &MinIO{Endpoint: ep, AccessKey: os.Getenv(S3AccessKeyEnv), SecretKey: os.Getenv(S3SecretKeyEnv), Region: region}
}

// S3Store is one store of the matrix: its name and how to start it.
type S3Store struct {
	Name  string
	Start func(t testing.TB) *MinIO
}

// S3Stores are the stores `make test` proves the S3 backend on: MinIO,
// moto and versitygw, plus $SKILLSVC_S3_ENDPOINT's as "env" when set.
func S3Stores() []S3Store {
	stores := []S3Store{{"minio", SharedMinIO}, {"moto", StartMotoS3}, {"versitygw", StartVersityGW}}
	if m := EnvS3(); m != nil {
		stores = append(stores, S3Store{"env", func(testing.TB) *MinIO { return m }})
	}
	return stores
}
