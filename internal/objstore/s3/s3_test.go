package s3_test

import (
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// TestAcceptanceMinIO proves the S3 backend against a real MinIO server,
// one fresh bucket per subtest.
func TestAcceptanceMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket {
		return s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	})
}

// TestAcceptanceMinIOWithMetrics proves the metrics wrapper, as deployed,
// changes nothing about the S3 backend's behaviour.
func TestAcceptanceMinIOWithMetrics(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket {
		return objstore.WrapWithMetrics(s3.NewWithClient(srv.Client(t), srv.NewBucket(t)), prometheus.NewRegistry())
	})
}

// TestNewFromConfig checks the production constructor: endpoint, path-style
// addressing and credentials from the standard AWS environment variables.
func TestNewFromConfig(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	b, err := s3.New(t.Context(), s3.Config{Bucket: bucket, Endpoint: srv.Endpoint, Region: srv.Region, PathStyle: true, MaxConnsPerHost: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	missing, err := s3.New(t.Context(), s3.Config{Bucket: "no-such-bucket-here", Endpoint: srv.Endpoint, Region: srv.Region, PathStyle: true, MaxConnsPerHost: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := missing.Check(t.Context()); err == nil {
		t.Error("Check of a missing bucket succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  s3.Config
		ok   bool
	}{
		{"ok", s3.Config{Bucket: "b", MaxConnsPerHost: 1}, true},
		{"no bucket", s3.Config{MaxConnsPerHost: 1}, false},
		{"no conns", s3.Config{Bucket: "b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
