package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file drive publishes through the binary on MinIO
// behind testserver.S3Proxy, which sees, holds or refuses each request:
// whatever fails part-way, the live copy is one version whole.

// proxied starts an S3 proxy in front of srv and the binary on bucket
// through it (insecure mode, production defaults), with args.
func proxied(t *testing.T, srv *testserver.MinIO, bucket string, args ...string) (*testserver.S3Proxy, *proc) {
	t.Helper()
	proxy, err := testserver.StartS3Proxy(srv.Endpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	return proxy, startProxied(t, srv, bucket, proxy, args...)
}

func startProxied(t *testing.T, srv *testserver.MinIO, bucket string, proxy *testserver.S3Proxy, args ...string) *proc {
	t.Helper()
	return startBinary(t, minioEnv(srv), append([]string{"--storage=s3", "--s3.bucket=" + bucket, "--s3.endpoint=" + proxy.URL, "--s3.path-style", "--s3.region=" + srv.Region}, args...)...)
}

// mixFiles is version k of skill "mix": SKILL.md and three files saying k.
func mixFiles(k int) map[string]string {
	return map[string]string{
		"SKILL.md": skillMDOf("mix", fmt.Sprintf("Version %d.", k), "Body.\n"),
		"a.md":     fmt.Sprint(k), "b.md": fmt.Sprint(k), "references/c.md": fmt.Sprint(k),
	}
}

// liveMix reads alice's live copy of "mix" from MinIO directly and says
// which version it is, failing the test if it mixes versions.
func liveMix(t *testing.T, srv *testserver.MinIO, bucket string) int {
	t.Helper()
	got := map[string]string{}
	s3c := srv.Client(t)
	for _, k := range bucketKeys(t, srv, bucket) {
		rel, ok := strings.CutPrefix(k, "alice/skills/mix/")
		if !ok {
			continue
		}
		out, err := s3c.GetObject(t.Context(), &awss3.GetObjectInput{Bucket: &bucket, Key: aws.String(k)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(out.Body)
		out.Body.Close()
		got[rel] = string(b)
	}
	var k int
	_, err := fmt.Sscanf(got["SKILL.md"], "---\nname: mix\ndescription: Version %d.", &k)
	want := mixFiles(k)
	ok := err == nil && len(got) == len(want) && strings.HasPrefix(got["SKILL.md"], want["SKILL.md"]) // a round may follow
	for rel, body := range want {
		ok = ok && (rel == "SKILL.md" || got[rel] == body)
	}
	if !ok {
		t.Fatalf("the live copy mixes versions or misses a file: %q", got)
	}
	return k
}

// intents lists the intent objects left in the bucket.
func intents(t *testing.T, srv *testserver.MinIO, bucket string) []string {
	t.Helper()
	var out []string
	for _, k := range bucketKeys(t, srv, bucket) {
		if strings.HasPrefix(k, "_shared/versions/intents/") {
			out = append(out, k)
		}
	}
	return out
}

var accessDenied = &testserver.S3Refusal{Status: http.StatusForbidden, Code: "AccessDenied"}

// isLive says whether an S3 key is a file of alice's live "mix".
func isLive(key string) bool { return strings.HasPrefix(key, "alice/skills/mix/") }

// TestPublishRefusedPartWayEndToEnd: storage refuses the n-th write of a
// publish, for every n: the publish answers success with version 2 whole,
// or an error with version 1 whole; never a mix.
func TestPublishRefusedPartWayEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, p := proxied(t, srv, bucket)
	lib := skillsvcv1.NewLibraryServiceClient(dialWithinLimits(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	for n := 1; ; n++ {
		if _, err := lib.DeleteSkill(alice, &skillsvcv1.DeleteSkillRequest{Name: "mix"}); err != nil && n > 1 {
			t.Fatal(err)
		}
		if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix", Message: fmt.Sprint(n)}, mixFiles(1)); err != nil {
			t.Fatal(err)
		}
		var puts, refused atomic.Int64
		proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
			if op == "PutObject" && puts.Add(1) == int64(n) {
				refused.Add(1)
				return accessDenied
			}
			return nil
		})
		// A new version each round: its files all new.
		files := mixFiles(2)
		files["SKILL.md"] += fmt.Sprintf("Round %d.\n", n)
		_, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, files)
		proxy.OnRequest(nil)
		if refused.Load() == 0 {
			break // the publish made fewer writes
		}
		live := liveMix(t, srv, bucket)
		if (err == nil) != (live == 2) {
			t.Fatalf("write %d refused: the publish answered %v, the live copy is version %d", n, err, live)
		}
		if n > 30 {
			t.Fatal("over 30 writes for a publish of four files")
		}
	}
}

// TestPublishCanceledPartWayEndToEnd: a client that gives up while the
// live copy is being written leaves it whole: the publish, committed,
// finishes without it.
func TestPublishCanceledPartWayEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, p := proxied(t, srv, bucket)
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(1)); err != nil {
		t.Fatal(err)
	}
	held, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, fin sync.Once
	var live atomic.Int64
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		switch {
		case op == "PutObject" && isLive(key) && live.Add(1) == 2:
			once.Do(func() { close(held) })
			<-release // the second live file waits for the client to go
		case op == "DeleteObject" && strings.Contains(key, "/intents/"):
			fin.Do(func() { close(finished) })
		}
		return nil
	})
	ctx, cancel := context.WithCancel(alice)
	errc := make(chan error, 1)
	go func() {
		_, err := pushFolder(ctx, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(2))
		errc <- err
	}()
	<-held
	cancel()
	grpctest.WantCode(t, <-errc, codes.Canceled)
	close(release)
	select {
	case <-finished:
	case <-time.After(30 * time.Second): // only without the fix
	}
	proxy.OnRequest(nil)
	if got := liveMix(t, srv, bucket); got != 2 {
		t.Fatalf("the committed publish left version %d live", got)
	}
}

// TestPublishKilledPartWayEndToEnd: a replica SIGKILLed while writing the
// live copy leaves an intent; the next start rolls it forward, so the live
// copy is the new version whole.
func TestPublishKilledPartWayEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, p := proxied(t, srv, bucket)
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(1)); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var live atomic.Int64
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		if op == "PutObject" && isLive(key) && live.Add(1) >= 2 {
			once.Do(func() { close(held) })
			<-release
			return accessDenied // never forwarded: the process is gone
		}
		return nil
	})
	go pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(2))
	<-held
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.done <- <-p.done
	close(release)
	proxy.OnRequest(nil)
	// A new replica finishes it at start.
	startProxied(t, srv, bucket, proxy)
	for deadline := time.Now().Add(30 * time.Second); len(intents(t, srv, bucket)) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polling storage for the recovery's end, not timing it
	}
	if got := liveMix(t, srv, bucket); got != 2 {
		t.Fatalf("after recovery the live copy is version %d", got)
	}
}

// TestPublishKeyTooLongEndToEnd: a file whose key would pass S3's 1,024
// bytes is INVALID_ARGUMENT naming the limit, before any write.
func TestPublishKeyTooLongEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, p := proxied(t, srv, bucket)
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	seg := strings.Repeat("x", 250)
	files := mixFiles(1)
	files[seg+"/"+seg+"/"+seg+"/"+seg+"/"+seg[:15]+".md"] = "long" // 1,022 bytes: a valid path
	var puts atomic.Int64
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		if op == "PutObject" && (strings.Contains(key, "/versions/") || isLive(key)) {
			puts.Add(1) // not the catalog's own index
		}
		return nil
	})
	_, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, files)
	grpctest.WantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "1024-byte limit") {
		t.Fatalf("%v names no limit", err)
	}
	if n := puts.Load(); n != 0 {
		t.Fatalf("%d writes before the refusal", n)
	}
}

// TestPublishCommittedRedisDownEndToEnd: Redis hanging right after a
// publish committed (its intent written) costs the other replicas their
// notice, not the publish: it answers success and is live.
func TestPublishCommittedRedisDownEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	red := testserver.StartRestartableRedis(t)
	proxy, p := proxied(t, srv, bucket, redisFlags(&red.Redis, newKeyPrefix())...)
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(1)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		if op == "PutObject" && isLive(key) { // past the commit point
			once.Do(func() { red.Pause(t) }) // hung: every call runs into its timeout
		}
		return nil
	})
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(2)); err != nil {
		t.Fatalf("a committed publish answered %v with Redis down", err)
	}
	if got := liveMix(t, srv, bucket); got != 2 {
		t.Fatalf("live copy is version %d", got)
	}
}

// TestVersionListingPagedEndToEnd: a page of ListSkillVersions reads the
// records of its page from storage, however many versions the skill has.
func TestVersionListingPagedEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, p := proxied(t, srv, bucket)
	lib := skillsvcv1.NewLibraryServiceClient(dialWithinLimits(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	var records atomic.Int64
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		if op == "GetObject" && strings.Contains(key, "/skills/mix/v/") {
			records.Add(1)
		}
		return nil
	})
	const size = 3
	published := 0
	for _, n := range []int{8, 24} {
		for ; published < n; published++ {
			if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "mix"}, mixFiles(published)); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		token := ""
		for pages := 0; ; pages++ {
			before := records.Load()
			resp, err := lib.ListSkillVersions(alice, &skillsvcv1.ListSkillVersionsRequest{Name: "mix", PageSize: size, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			if got := records.Load() - before; got > size {
				t.Fatalf("%d versions: page %d read %d records from storage, for %d versions shown", n, pages, got, len(resp.GetVersions()))
			}
			for _, v := range resp.GetVersions() {
				seen[v.GetId()] = true
			}
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
		if len(seen) != n {
			t.Fatalf("listed %d of %d versions", len(seen), n)
		}
	}
}

// TestPublishMemoryBudgetEndToEnd: publishes draw on one memory budget per
// replica: while one holds it, another is RESOURCE_EXHAUSTED with a retry
// delay after a short wait, and goes through once the first is done.
func TestPublishMemoryBudgetEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	// A budget of 1 MiB (128 MiB by default) that two folders of 700 KB
	// pass: tightened, not lifted.
	proxy, p := proxied(t, srv, bucket, "--library.memory-budget=1048576")
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	folder := func(name string) map[string]string {
		return map[string]string{"SKILL.md": skillMDOf(name, "Big.", "Body.\n"), "data.md": strings.Repeat(name, 700<<10/len(name))}
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		if op == "PutObject" && strings.Contains(key, "/versions/blobs/") {
			once.Do(func() { close(held); <-release }) // the first publish waits, holding its folder
		}
		return nil
	})
	first := make(chan error, 1)
	go func() {
		_, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "one"}, folder("one"))
		first <- err
	}()
	<-held
	_, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "two"}, folder("two"))
	grpctest.WantCode(t, err, codes.ResourceExhausted)
	if d, ok := retryinfo.Delay(err); !ok || d <= 0 {
		t.Fatalf("%v carries no retry delay", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "two"}, folder("two")); err != nil {
		t.Fatalf("after the first publish: %v", err)
	}
}
