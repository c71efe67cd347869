package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// TestStorageIdentity: replicas naming one storage share a keyspace
// however they spell it (an endpoint's case, trailing slash and default
// port, AWS by an empty or an explicit endpoint, a relative or linked data
// directory); another bucket, endpoint or directory is another keyspace.
func TestStorageIdentity(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	onS3 := func(endpoint, bucket string) Config {
		return Config{Storage: "s3", S3: s3.Config{Endpoint: endpoint, Bucket: bucket}}
	}
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(dir))
	local := func(d string) Config { return Config{Storage: "local", DataDir: d} }
	onAWS := func(endpoint, region, bucket string) Config {
		return Config{Storage: "s3", S3: s3.Config{Endpoint: endpoint, Region: region, Bucket: bucket}}
	}
	for _, same := range [][2]Config{
		{onS3("http://minio:9000", "a"), onS3("HTTP://MinIO:9000/", "a")},
		{onS3("http://minio:9000", "a"), onS3("http://minio:9000/", "a")},
		{onS3("https://minio", "a"), onS3("https://minio:443", "a")},
		{onS3("", "a"), onS3("", "a")},
		{onAWS("", "eu-west-1", "a"), onAWS("https://s3.eu-west-1.amazonaws.com", "eu-west-1", "a")},
		{onAWS("", "us-east-1", "a"), onAWS("https://s3.amazonaws.com:443", "us-east-1", "a")},
		{local(dir), local(filepath.Base(dir))},
		{local(dir), local(link)},
	} {
		if a, b := identity(t, same[0]), identity(t, same[1]); a != b {
			t.Errorf("%q and %q: want one identity", a, b)
		}
	}
	for _, other := range [][2]Config{
		{onS3("http://minio:9000", "a"), onS3("http://minio:9000", "b")},
		{onS3("http://minio:9000", "a"), onS3("http://minio2:9000", "a")},
		{onS3("http://minio:9000", "a"), onS3("", "a")},
		{onS3("http://minio:9000/x", "a"), onS3("http://minio:9000/X", "a")},
		{local(dir), local(t.TempDir())},
		{onAWS("", "eu-west-1", "a"), onAWS("", "cn-north-1", "a")},
	} {
		if a := identity(t, other[0]); a == identity(t, other[1]) {
			t.Errorf("%q: one identity for two storages", a)
		}
	}
}

func identity(t *testing.T, cfg Config) string {
	t.Helper()
	id, _, err := storageIdentity(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStorageIdentityReadable: the start's log line names the storage the
// keyspace was derived from, as normalized.
func TestStorageIdentityReadable(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Storage: "s3", S3: s3.Config{Endpoint: "HTTP://MinIO:9000/", Bucket: "b"}}, "s3 http://minio:9000 bucket b"},
		{Config{Storage: "s3", S3: s3.Config{Region: "eu-west-1", Bucket: "b"}}, "s3 AWS bucket b"},
		{Config{Storage: "s3", S3: s3.Config{Region: "cn-north-1", Bucket: "b"}}, "s3 AWS aws-cn bucket b"},
	} {
		if _, got, err := storageIdentity(t.Context(), tc.cfg); err != nil || got != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.cfg.S3, got, err, tc.want)
		}
	}
}
