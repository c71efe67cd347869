package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// webhookToken is what MinIO sends (as "Bearer <token>") and the binaries
// read from --events.webhook-token-file.
const webhookToken = "e2e-webhook-token-0123456789abcdef"

// TestEventsReachEveryReplica runs two binaries on one bucket and one Redis,
// both serving library indexes for ten minutes, with MinIO's bucket
// notifications posted to the first: a SKILL.md uploaded with `aws s3 cp`
// is listed by both, and so is one removed with `aws s3 rm`. Only the
// events can do that: polling would take ten minutes.
func TestEventsReachEveryReplica(t *testing.T) {
	const target = "skillsvc"
	awsCLI := testserver.AWSCLI(t)
	// MinIO must know the webhook's address when it starts, before the
	// binaries it serves can: a proxy stands in for the first binary's HTTP
	// listener, as a Kubernetes Service would for the replicas.
	var upstream atomic.Pointer[url.URL]
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := upstream.Load()
		if u == nil {
			http.Error(w, "no replica yet", http.StatusServiceUnavailable)
			return
		}
		p := httputil.NewSingleHostReverseProxy(u)
		p.ErrorLog = log.New(io.Discard, "", 0) // MinIO may post after A stopped
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(hook.Close)
	srv := testserver.StartMinIO(t, testserver.WebhookEnv(target, hook.URL+"/events/s3", webhookToken)...)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	srv.NotifyWebhook(t, bucket, target)

	tokenFile := filepath.Join(t.TempDir(), "webhook-token")
	if err := os.WriteFile(tokenFile, []byte(webhookToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()),
		"--skills.index-refresh=10m", "--skills.index-max-stale=10m", "--events.webhook-token-file="+tokenFile)...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	upstream.Store(&url.URL{Scheme: "http", Host: a.httpAddr})
	bMetrics := metricsFor(t, b)
	pollUntil(t, 30*time.Second, "B subscribed to the other replicas' invalidations", func() bool {
		return bMetrics.value(t, "skillsvc_events_resyncs_total") >= 1
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	clients := map[string]skillsvcv1.SkillsServiceClient{
		"A": skillsvcv1.NewSkillsServiceClient(dial(t, a.addr)),
		"B": skillsvcv1.NewSkillsServiceClient(dial(t, b.addr)),
	}
	listed := func(name string) string {
		t.Helper()
		got, err := skillNames(alice, clients[name])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for name := range clients {
		if got := listed(name); got != allSkills {
			t.Fatalf("%s lists %q before the upload, want %q", name, got, allSkills)
		}
	}
	// bothList polls both replicas until each lists want: with indexes
	// kept for ten minutes only the events can show it. The deadline only
	// bounds a failure.
	bothList := func(start time.Time, what, want string) {
		t.Helper()
		var gotA, gotB string
		pollUntil(t, time.Minute, what+" on both replicas", func() bool {
			gotA, gotB = listed("A"), listed("B")
			return gotA == want && gotB == want
		})
		t.Logf("%s: on both replicas after %v", what, time.Since(start).Round(time.Millisecond))
	}
	aws := func(args ...string) time.Time {
		t.Helper()
		cmd := exec.CommandContext(ctx, awsCLI, append([]string{"--endpoint-url", srv.Endpoint, "s3"}, args...)...)
		cmd.Env = srv.AWSEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("aws s3 %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return time.Now()
	}

	skill := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: changelog\ndescription: Write the changelog.\n---\nList the changes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uploaded := aws("cp", "--only-show-errors", skill, "s3://"+bucket+"/alice/skills/changelog/SKILL.md")
	bothList(uploaded, "aws s3 cp of a SKILL.md", "changelog,"+allSkills)
	removed := aws("rm", "--only-show-errors", "s3://"+bucket+"/alice/skills/changelog/SKILL.md")
	bothList(removed, "aws s3 rm of a SKILL.md", allSkills)

	aMetrics := metricsFor(t, a)
	if n := aMetrics.value(t, `skillsvc_events_applied_total{change="user_library"}`); n < 2 {
		t.Errorf("A applied %v events to alice's library, want 2 or more", n)
	}
	if n := bMetrics.value(t, `skillsvc_events_peer_messages_total{outcome="applied"}`); n < 2 {
		t.Errorf("B applied %v invalidations from A, want 2 or more", n)
	}

	// The endpoint refuses a caller without the token, and any other method.
	for _, tc := range []struct {
		method, auth string
		want         int
	}{
		{http.MethodPost, "Bearer not-the-token-0123456789", http.StatusUnauthorized},
		{http.MethodPost, "", http.StatusUnauthorized},
		{http.MethodGet, "Bearer " + webhookToken, http.StatusMethodNotAllowed},
	} {
		req, err := http.NewRequestWithContext(ctx, tc.method, "http://"+a.httpAddr+"/events/s3", strings.NewReader(`{"Records":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s with Authorization %q: %s, want %d", tc.method, tc.auth, resp.Status, tc.want)
		}
	}
}

// TestSQSEventsReachEveryReplica runs two binaries consuming one SQS queue
// (moto's server) on one bucket and one Redis, with polling at the events
// defaults (a minute). A SKILL.md is uploaded and the queue is sent the
// record S3 would send for it: both replicas list it, long before their
// indexes would be revalidated.
func TestSQSEventsReachEveryReplica(t *testing.T) {
	sqsSrv := testserver.StartSQS(t)
	queue := sqsSrv.NewQueue(t)
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	putLibrary(put)
	args := s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()),
		"--skills.index-refresh=10m", "--skills.index-max-stale=10m", // only the message can bring the upload
		"--events.sqs.queue-url="+queue, "--events.sqs.endpoint="+sqsSrv.Endpoint, "--events.sqs.wait-time=1s")...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	for _, p := range []*proc{a, b} {
		m := metricsFor(t, p)
		pollUntil(t, 30*time.Second, "subscribed to the other replicas' invalidations", func() bool {
			return m.value(t, "skillsvc_events_resyncs_total") >= 1
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	clients := []skillsvcv1.SkillsServiceClient{
		skillsvcv1.NewSkillsServiceClient(dial(t, a.addr)), skillsvcv1.NewSkillsServiceClient(dial(t, b.addr)),
	}
	for _, c := range clients {
		if got, err := skillNames(alice, c); err != nil || got != allSkills {
			t.Fatalf("before the upload: %q, %v; want %q", got, err, allSkills)
		}
	}
	put("alice/skills/changelog/SKILL.md", "---\nname: changelog\ndescription: Write the changelog.\n---\nList the changes.\n")
	start := time.Now()
	msg := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1","eventName":"ObjectCreated:Put",` +
		`"s3":{"s3SchemaVersion":"1.0","bucket":{"name":"` + bucket + `","arn":"arn:aws:s3:::` + bucket + `"},` +
		`"object":{"key":"alice/skills/changelog/SKILL.md","size":80,"eTag":"0123456789abcdef0123456789abcdef"}}}]}`
	if _, err := sqsSrv.Client().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queue, MessageBody: &msg}); err != nil {
		t.Fatal(err)
	}
	want := "changelog," + allSkills
	pollUntil(t, time.Minute, "the upload listed on both replicas", func() bool {
		gotA, errA := skillNames(alice, clients[0])
		gotB, errB := skillNames(alice, clients[1])
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		return gotA == want && gotB == want
	})
	t.Logf("the upload on both replicas %v after its message was sent", time.Since(start).Round(time.Millisecond))
	applied := metricsFor(t, a).value(t, `skillsvc_events_sqs_messages_total{outcome="applied"}`) +
		metricsFor(t, b).value(t, `skillsvc_events_sqs_messages_total{outcome="applied"}`)
	if applied != 1 {
		t.Errorf("%v messages applied, want 1 (by one replica)", applied)
	}
}
