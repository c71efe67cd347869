package s3_test

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestBodyCutShort: a GET whose body the store (here a proxy in front of a
// real MinIO) breaks off after its headers, closed or reset midway, reads
// as ErrUnavailable (an outage a retry may get past), not as an unknown
// error the gRPC edge would answer INTERNAL; the whole body reads fine
// again once the store is whole.
func TestBodyCutShort(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, err := testserver.StartS3Proxy(srv.Endpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	b, err := s3.New(t.Context(), s3.Config{Bucket: bucket, Endpoint: proxy.URL, Region: srv.Region, PathStyle: true, MaxConnsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	if _, err := b.Put(t.Context(), "alice/big.txt", strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	reads := map[string]func() (io.ReadCloser, error){
		"Get": func() (io.ReadCloser, error) {
			rc, _, err := b.Get(t.Context(), "alice/big.txt")
			return rc, err
		},
		"GetRange": func() (io.ReadCloser, error) {
			rc, _, err := b.GetRange(t.Context(), "alice/big.txt", 16, 32<<10)
			return rc, err
		},
	}
	for _, cut := range []testserver.S3Cut{{After: 1000}, {After: 1000, Reset: true}} {
		proxy.Cut("GetObject", cut)
		for name, read := range reads {
			rc, err := read()
			if err != nil {
				t.Fatalf("%s (cut %+v): %v; the headers came whole", name, cut, err)
			}
			_, err = io.ReadAll(rc)
			rc.Close()
			if !errors.Is(err, objstore.ErrUnavailable) || errkind.Of(err) != errkind.Unavailable {
				t.Errorf("%s (cut %+v): reading the body: %v (kind %v); want ErrUnavailable", name, cut, err, errkind.Of(err))
			}
		}
	}
	proxy.Cut("GetObject", testserver.S3Cut{})
	rc, _, err := b.Get(t.Context(), "alice/big.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, err := io.ReadAll(rc); err != nil || string(got) != content {
		t.Fatalf("whole again: read %d bytes, %v", len(got), err)
	}
}
