package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// TestStorageIdentity: replicas naming one storage alike share a keyspace
// (an endpoint's case and trailing slash, a relative or linked data
// directory do not matter); another bucket, endpoint or directory is
// another keyspace.
func TestStorageIdentity(t *testing.T) {
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
	for _, same := range [][2]Config{
		{onS3("http://minio:9000", "a"), onS3("HTTP://MinIO:9000/", "a")},
		{onS3("", "a"), onS3("", "a")},
		{local(dir), local(filepath.Base(dir))},
		{local(dir), local(link)},
	} {
		if a, b := storageIdentity(same[0]), storageIdentity(same[1]); a != b {
			t.Errorf("%q and %q: want one identity", a, b)
		}
	}
	for _, other := range [][2]Config{
		{onS3("http://minio:9000", "a"), onS3("http://minio:9000", "b")},
		{onS3("http://minio:9000", "a"), onS3("http://minio2:9000", "a")},
		{onS3("http://minio:9000", "a"), onS3("", "a")},
		{onS3("http://minio:9000/x", "a"), onS3("http://minio:9000/X", "a")},
		{local(dir), local(t.TempDir())},
	} {
		if a, b := storageIdentity(other[0]), storageIdentity(other[1]); a == b {
			t.Errorf("%q: one identity for two storages", a)
		}
	}
}
