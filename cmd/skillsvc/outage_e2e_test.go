package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

type written struct{ thread, path string }

// TestStorageOutage stops MinIO while workers write through the real binary:
// calls answer UNAVAILABLE (never INTERNAL), readiness turns NOT_SERVING
// while liveness stays SERVING; after MinIO restarts the same skillsvc
// process serves again, and every write it acknowledged is there.
func TestStorageOutage(t *testing.T) {
	srv := testserver.StartMinIO(t) // our own: this test stops it
	bucket := srv.NewBucket(t)
	// Readiness is what is under test: checked every 100ms (not 5s), it
	// turns within a second instead of ten, and the test stays short.
	p := startBinary(t, minioEnv(srv), "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+srv.Endpoint, "--s3.path-style", "--s3.region="+srv.Region,
		"--probe.interval=100ms", "--probe.timeout=1s", "--probe.failures=2")
	conn := dialWithinLimits(t, p.addr) // the writers call in a loop
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	health := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var (
		mu    sync.Mutex
		acked = map[written]string{} // what the server acknowledged

		codesN = map[codes.Code]int{}
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			thread := fmt.Sprintf("t%d", w)
			id := grpctest.AsCaller(ctx, "alice", thread, "")
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				path, content := fmt.Sprintf("/workspace/f%05d.md", i), fmt.Sprintf("worker %d write %d\n", w, i)
				cctx, ccancel := context.WithTimeout(id, 10*time.Second)
				_, err := fsc.Write(cctx, &skillsvcv1.WriteRequest{Path: path, Content: content})
				ccancel()
				mu.Lock()
				codesN[status.Code(err)]++
				if err == nil {
					acked[written{thread, path}] = content
				}
				mu.Unlock()
			}
		})
	}
	count := func(c codes.Code) int {
		mu.Lock()
		defer mu.Unlock()
		return codesN[c]
	}
	// waitFor polls cond until it holds; the deadline only bounds a failure.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("timed out waiting for %s; codes so far %v\n%s", what, codesN, p.output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	healthOf := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		r, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("health check %q: %v", service, err)
		}
		return r.GetStatus()
	}

	waitFor("writes before the outage", func() bool { return count(codes.OK) >= 20 })
	srv.Stop(t)
	waitFor("UNAVAILABLE answers", func() bool { return count(codes.Unavailable) >= 4 })
	waitFor("readiness NOT_SERVING", func() bool { return healthOf("") == healthpb.HealthCheckResponse_NOT_SERVING })
	if s := healthOf("skillsvc.v1.FilesystemService"); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("FilesystemService health during the outage = %v", s)
	}
	if s := healthOf("liveness"); s != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("liveness during the outage = %v, want SERVING (a restart would not help)", s)
	}

	okBefore := count(codes.OK)
	srv.Restart(t)
	waitFor("readiness SERVING again", func() bool { return healthOf("") == healthpb.HealthCheckResponse_SERVING })
	waitFor("writes after the outage", func() bool { return count(codes.OK) >= okBefore+20 })
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for c, n := range codesN {
		// A call in flight when MinIO died may also run into its deadline.
		if c != codes.OK && c != codes.Unavailable && c != codes.DeadlineExceeded {
			t.Errorf("%d calls answered %v; an outage must be UNAVAILABLE", n, c)
		}
	}
	for w, content := range acked {
		rd, err := fsc.Read(grpctest.AsCaller(ctx, "alice", w.thread, ""), &skillsvcv1.ReadRequest{Path: w.path})
		if err != nil || rd.GetContent() != strings.TrimSuffix(content, "\n") {
			t.Errorf("acknowledged write %s %s lost: %q, %v", w.thread, w.path, rd.GetContent(), err)
		}
	}
	t.Logf("calls by code: %v; %d acknowledged writes verified", codesN, len(acked))
}
