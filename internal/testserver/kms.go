package testserver

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

const (
	kmsBinEnv    = "SKILLSVC_LOCALKMS_BIN"
	cosignBinEnv = "SKILLSVC_COSIGN_BIN"
)

// LocalKMS is a running AWS KMS-compatible server, local-kms (`make tools`
// installs it), which signs a MessageType DIGEST as AWS KMS does and as
// sigstore's awskms provider asks (moto's server hashes such a digest
// again). It speaks plain HTTP; kmstest puts TLS in front.
type LocalKMS struct {
	Endpoint string // http://127.0.0.1:PORT
	Region   string
}

// StartLocalKMS starts local-kms for this test; t.Cleanup stops it.
func StartLocalKMS(t testing.TB) *LocalKMS {
	t.Helper()
	Integration(t, "local-kms")
	bin, err := findBinary(kmsBinEnv, inRepoTools("local-kms"), onPath("local-kms"))
	if err != nil {
		unavailable(t, "local-kms (KMS)", kmsBinEnv, fmt.Errorf("finding local-kms: %w", err))
	}
	return startRetrying(t, "local-kms (KMS)", kmsBinEnv, func() (*LocalKMS, *process, error) { return startKMSOnce(bin) })
}

func startKMSOnce(bin string) (*LocalKMS, *process, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	dir, err := os.MkdirTemp("", "skillsvc-kms-")
	if err != nil {
		return nil, nil, err
	}
	const region = "eu-west-2"
	env := serverEnv("KMS_", "PORT="+strconv.Itoa(port), "KMS_REGION="+region, "KMS_DATA_PATH="+filepath.Join(dir, "data"), "KMS_SEED_PATH="+filepath.Join(dir, "none.yaml"))
	p, err := startProcess("local-kms", dir, bin, nil, env)
	if err != nil {
		return nil, nil, err
	}
	k := &LocalKMS{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Region: region}
	// local-kms answers a GET with 405: it is up.
	if err := waitHTTPReady(p, k.Endpoint+"/", port, func(code int) bool { return code == http.StatusMethodNotAllowed }); err != nil {
		p.stop()
		return nil, nil, err
	}
	return k, p, nil
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
