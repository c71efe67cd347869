package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestBodyCutShortEndToEnd runs the binary on MinIO behind a proxy that
// breaks off GET bodies after their headers (closing or resetting the
// connection): a Read of the file is UNAVAILABLE with a retry delay, as a
// store that refused the request would be, not INTERNAL; once the store is
// whole the same Read succeeds.
func TestBodyCutShortEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, err := testserver.StartS3Proxy(srv.Endpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	p := startBinary(t, minioEnv(srv), "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+proxy.URL, "--s3.path-style", "--s3.region="+srv.Region)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	content := strings.Repeat("a line of the plan\n", 2000)
	if _, err := fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/plan.md", Content: content}); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []testserver.S3Cut{{After: 1000}, {After: 1000, Reset: true}} {
		proxy.Cut("GetObject", cut)
		_, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/plan.md"})
		st := status.Convert(err)
		if st.Code() != codes.Unavailable {
			t.Errorf("Read with the body cut (%+v): %v %q; want UNAVAILABLE", cut, st.Code(), st.Message())
		}
		if d, ok := retryinfo.Delay(err); !ok || d <= 0 {
			t.Errorf("Read with the body cut (%+v): details %v; want a retry delay", cut, st.Details())
		}
	}
	proxy.Cut("GetObject", testserver.S3Cut{})
	resp, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/plan.md"})
	if err != nil || resp.GetTotalLines() != 2000 {
		t.Fatalf("Read once the store is whole: %d lines, %v", resp.GetTotalLines(), err)
	}
}
