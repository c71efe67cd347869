package s3_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestPutOutOfSpace: the answers S3-compatible stores give when they have
// no room for a write are ErrNoSpace (ErrTooLarge for an object over the
// size limit), RESOURCE_EXHAUSTED with a caller message that names no key,
// where before a 507 read as a passing outage and the others as internal
// errors or, for Ceph's 403, as AccessDenied. The SDK sends each PUT once:
// none of these is worth a retry.
func TestPutOutOfSpace(t *testing.T) {
	offlineCredentials(t)

	// The codes, statuses and descriptions are the servers' own: MinIO's
	// cmd/api-errors.go and Ceph's rgw_common.cc.
	for _, tc := range []struct {
		name   string
		status int
		code   string // "" for a bare status without a body
		desc   string
		want   error
		msg    string
	}{
		{"MinIO drives full", http.StatusInsufficientStorage, "XMinioStorageFull",
			"Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.",
			objstore.ErrNoSpace, "storage is full"},
		{"MinIO bucket quota", http.StatusBadRequest, "XMinioAdminBucketQuotaExceeded", "Bucket quota exceeded",
			objstore.ErrNoSpace, "storage is full"},
		{"Ceph RGW quota", http.StatusForbidden, "QuotaExceeded", "",
			objstore.ErrNoSpace, "storage is full"},
		{"507 without a body", http.StatusInsufficientStorage, "", "",
			objstore.ErrNoSpace, "storage is full"},
		{"object over the size limit", http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.",
			objstore.ErrTooLarge, "file is too large for storage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var puts atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					puts.Add(1)
				}
				if tc.code == "" {
					w.WriteHeader(tc.status)
					return
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
					`<Error><Code>%s</Code><Message>%s</Message><Key>alice/a.md</Key><BucketName>b</BucketName>`+
					`<Resource>/b/alice/a.md</Resource><RequestId>1</RequestId><HostId>h</HostId></Error>`, tc.code, tc.desc)
			}))
			t.Cleanup(srv.Close)
			b, err := s3.New(t.Context(), s3.Config{Bucket: "b", Endpoint: srv.URL, Region: "us-east-1", PathStyle: true, MaxConnsPerHost: 4})
			if err != nil {
				t.Fatal(err)
			}

			_, err = b.Put(t.Context(), "alice/a.md", strings.NewReader("x"), 1, objstore.PutOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put err = %v, want %v", err, tc.want)
			}
			if k := errkind.Of(err); k != errkind.ResourceExhausted {
				t.Errorf("kind = %v, want ResourceExhausted", k)
			}
			if msg := errkind.Message(err); msg != tc.msg {
				t.Errorf("caller message = %q, want %q", msg, tc.msg)
			}
			// The store's answer stays in the chain for the log.
			var apiErr smithy.APIError
			if tc.code != "" && (!errors.As(err, &apiErr) || apiErr.ErrorCode() != tc.code) {
				t.Errorf("err %v lost the store's code %s", err, tc.code)
			}
			if n := puts.Load(); n != 1 {
				t.Errorf("the SDK sent %d PUTs, want 1 (no retry)", n)
			}
		})
	}
}

// TestPutOverQuotaMinIO: a real MinIO refusing a write over its bucket's
// hard quota is ErrNoSpace, the object is not stored, and writes that fit
// still succeed.
func TestPutOverQuotaMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	srv.SetBucketQuota(t, bucket, 1024)
	b := s3.NewWithClient(srv.Client(t), bucket)

	if _, err := b.Put(t.Context(), "alice/small.md", strings.NewReader("fits"), 4, objstore.PutOptions{}); err != nil {
		t.Fatalf("Put under the quota: %v", err)
	}
	big := strings.Repeat("x", 2048)
	_, err := b.Put(t.Context(), "alice/big.md", strings.NewReader(big), int64(len(big)), objstore.PutOptions{})
	if !errors.Is(err, objstore.ErrNoSpace) {
		t.Fatalf("Put over the quota: err = %v, want ErrNoSpace", err)
	}
	if msg := errkind.Message(err); msg != "storage is full" {
		t.Errorf("caller message = %q", msg)
	}
	if _, err := b.Stat(t.Context(), "alice/big.md"); !objstore.IsNotFound(err) {
		t.Errorf("Stat of the refused object: err = %v, want not found", err)
	}
}
