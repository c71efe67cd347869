package objstoretest

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// ForEachBackend runs suite once per real backend, as subtests "local" (a
// temp directory) and "minio" (a real MinIO server, see testserver), and
// "env" on the store $SKILLSVC_S3_ENDPOINT names when set (testserver.EnvS3:
// how make test-stores runs these suites on other stores), each call of
// newBucket giving a fresh empty bucket. Packages using it call
// testserver.Shutdown from TestMain.
func ForEachBackend(t *testing.T, suite func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket)) {
	t.Run("local", func(t *testing.T) {
		suite(t, func(t *testing.T) objstore.Bucket {
			b, err := local.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		})
	})
	t.Run("minio", func(t *testing.T) {
		srv := testserver.SharedMinIO(t)
		suite(t, func(t *testing.T) objstore.Bucket {
			return s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
		})
	})
	if srv := testserver.EnvS3(); srv != nil {
		t.Run("env", func(t *testing.T) {
			suite(t, func(t *testing.T) objstore.Bucket {
				return s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
			})
		})
	}
}
