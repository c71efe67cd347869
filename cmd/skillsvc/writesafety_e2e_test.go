package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestWriteSafetyProbe runs the binary on MinIO behind a proxy that drops
// If-Match and If-None-Match (a store that answers every conditional
// write 200, as s3rver and Garage do): it refuses to start, naming what
// the store ignored; with --s3.read-only-if-unsafe it serves reads, refuses
// every write FAILED_PRECONDITION and reports the "writes" health service
// NOT_SERVING with the reason logged. On MinIO itself it takes writes and
// leaves no probe key behind.
func TestWriteSafetyProbe(t *testing.T) {
	bin := binary(t)
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	unsafe := srv.IgnoringConditions(t)
	// alice's workspace file, written as users upload (no conditions).
	if _, err := srv.Client(t).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("alice/threads/t1/a.txt"), Body: strings.NewReader("hello")}); err != nil {
		t.Fatal(err)
	}

	t.Run("refused", func(t *testing.T) {
		s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
			Bin: bin, Args: append(unsafe.S3Flags(bucket), "--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0"),
			Env: unsafe.SkillsvcEnv(), Dir: t.TempDir(),
		}, 30*time.Second)
		if err == nil {
			s.Stop()
			t.Fatal("skillsvc started on a store that ignores conditional writes")
		}
		for _, want := range []string{"refusing the store", "ignores conditional writes", "If-None-Match: *", "If-Match (a write with a wrong ETag succeeded)", "--s3.read-only-if-unsafe"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("start error does not say %q:\n%v", want, err)
			}
		}
	})

	t.Run("read-only", func(t *testing.T) {
		p := startBinary(t, minioEnv(unsafe), append(unsafe.S3Flags(bucket), "--s3.read-only-if-unsafe")...)
		conn := dial(t, p.addr)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := testserver.WaitServing(ctx, conn); err != nil {
			t.Fatal(err)
		}
		hc := healthpb.NewHealthClient(conn)
		if st, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "writes"}); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("health of writes = %v, %v; want NOT_SERVING", st, err)
		}
		fsc := skillsvcv1.NewFilesystemServiceClient(conn)
		alice := grpctest.AsCaller(ctx, "alice", "t1", "")
		rd, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/a.txt"})
		if err != nil || rd.GetContent() != "hello" {
			t.Errorf("Read = %v, %v; want hello", rd, err)
		}
		_, err = fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/b.txt", Content: "x"})
		grpctest.WantCode(t, err, codes.FailedPrecondition)
		if err == nil || !strings.Contains(err.Error(), "ignores conditional writes") {
			t.Errorf("Write error %v does not say why", err)
		}
		_, err = fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", IfMatch: rd.GetEtag()})
		grpctest.WantCode(t, err, codes.FailedPrecondition)
		if out := p.output(); !strings.Contains(out, "storage read-only") || !strings.Contains(out, "If-None-Match: *") {
			t.Errorf("the log does not say why writes are refused:\n%s", out)
		}
	})

	t.Run("accepted", func(t *testing.T) {
		bucket := srv.NewBucket(t)
		p := startBinary(t, minioEnv(srv), srv.S3Flags(bucket)...)
		conn := dial(t, p.addr)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := testserver.WaitServing(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if st, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "writes"}); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health of writes = %v, %v; want SERVING", st, err)
		}
		fsc := skillsvcv1.NewFilesystemServiceClient(conn)
		if _, err := fsc.Write(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/b.txt", Content: "x"}); err != nil {
			t.Fatalf("Write on MinIO: %v", err)
		}
		p.cmd.Process.Signal(os.Interrupt)
		p.done <- <-p.done
		out, err := srv.Client(t).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(app.WriteProbeRoot)})
		if err != nil || len(out.Contents) != 0 {
			t.Errorf("probe keys left after shutdown: %v, %v", out.Contents, err)
		}
	})
}
