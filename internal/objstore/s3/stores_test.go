package s3_test

import (
	"errors"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestStores is the store matrix: the acceptance suite and the
// write-safety probe on every store testserver.S3Stores names (MinIO,
// moto, versitygw, and $SKILLSVC_S3_ENDPOINT's when set). MinIO's
// acceptance runs in TestAcceptanceMinIO.
func TestStores(t *testing.T) {
	for _, st := range testserver.S3Stores() {
		t.Run(st.Name, func(t *testing.T) {
			srv := st.Start(t)
			newBucket := func(t *testing.T) objstore.Bucket { return s3.NewWithClient(srv.Client(t), srv.NewBucket(t)) }
			if st.Name != "minio" {
				t.Run("Acceptance", func(t *testing.T) { objstoretest.AcceptanceTest(t, newBucket) })
			}
			t.Run("WriteSafety", func(t *testing.T) {
				b := newBucket(t)
				if err := objstore.CheckWriteSafety(t.Context(), b, "_skillsvc/write-probe/k"); err != nil {
					t.Fatalf("the write-safety probe refuses %s: %v", st.Name, err)
				}
				if page, err := b.List(t.Context(), objstore.ListOptions{}); err != nil || len(page.Objects) != 0 {
					t.Errorf("after the probe: %v, %v; want nothing left", page.Objects, err)
				}
			})
		})
	}
}

// TestWriteSafetyRefusesIgnoredConditions: MinIO behind a proxy that drops
// If-Match and If-None-Match is refused, each ignored condition named.
func TestWriteSafetyRefusesIgnoredConditions(t *testing.T) {
	srv := testserver.SharedMinIO(t).IgnoringConditions(t)
	b := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	err := objstore.CheckWriteSafety(t.Context(), b, "_skillsvc/write-probe/k")
	var unsafe *objstore.UnsafeError
	if !errors.As(err, &unsafe) || len(unsafe.Ignored) != 3 {
		t.Fatalf("CheckWriteSafety = %v, want If-None-Match, If-Match and concurrent creates named", err)
	}
}
