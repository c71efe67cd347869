package events_test

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// eventReplica is one skillsvc's catalog over the bucket and Redis, and its
// event receiver.
type eventReplica struct {
	lib *skills.Library
	rcv *events.Receiver
	reg *prometheus.Registry
}

// newEventReplica builds a replica whose indexes are served for an hour:
// only events can make a change show up in a test's time. Its cache,
// bucket and receiver count their work on its registry.
func newEventReplica(t *testing.T, srv *testserver.MinIO, bucket, redisAddr, keyPrefix string, cfg events.Config) eventReplica {
	t.Helper()
	reg := prometheus.NewRegistry()
	ccfg := cache.DefaultConfig()
	ccfg.Redis.Addrs, ccfg.Redis.KeyPrefix = []string{redisAddr}, keyPrefix
	c, err := cache.New(ccfg, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	scfg := skills.DefaultConfig()
	skillstest.Indexed(time.Hour)(&scfg)
	b := objstore.WrapWithMetrics(s3.NewWithClient(srv.Client(t), bucket), reg)
	lib, err := skills.New(b, mounts.Default(), scfg, slog.New(slog.DiscardHandler), skills.WithCache(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lib.Close)
	red, err := cache.NewRedis(ccfg.Redis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { red.Close() })
	rcv := newReceiver(t, cfg, lib.Catalog, events.Options{Bucket: bucket, Topic: red.Topic("inv"), Registerer: reg})
	return eventReplica{lib: lib, rcv: rcv, reg: reg}
}

func (r eventReplica) folders(t *testing.T) map[string]bool {
	t.Helper()
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Teams: "legal"})
	list, _, err := r.lib.Catalog.State(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range list {
		out[s.Dir] = true
	}
	return out
}

// within polls cond until it holds, failing after d: a bound on a failure,
// not a claim about speed.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not after %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMinIOBucketNotifications: a real MinIO posts its bucket notifications
// to replica A's endpoint; a skill written or deleted with a plain S3 call
// shows up on A and, told through Redis, on B, although both serve their
// indexes for an hour: only the events can have shown it. Each change is
// one event applied on A, and forgotten on B.
func TestMinIOBucketNotifications(t *testing.T) {
	const target = "skillsvc"
	var endpoint atomic.Pointer[events.Receiver] // A, once built
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rcv := endpoint.Load(); rcv != nil && r.URL.Path == "/events/s3" {
			rcv.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	t.Cleanup(hook.Close)
	// MinIO must know the endpoint when it starts, before the catalog over
	// it can be built: hence the handler set afterwards.
	srv := testserver.StartMinIO(t, testserver.WebhookEnv(target, hook.URL+"/events/s3", token)...)
	bucket := srv.NewBucket(t)
	s3c := srv.Client(t)
	put := func(key, body string) {
		t.Helper()
		if _, err := s3c.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	put("alice/skills/one/SKILL.md", skillstest.SkillMD("one", "First.", "body"))
	srv.NotifyWebhook(t, bucket, target)

	redis := testserver.SharedRedis(t).Addr
	prefix := "events-" + rand.Text() + ":"
	a := newEventReplica(t, srv, bucket, redis, prefix, config(t))
	b := newEventReplica(t, srv, bucket, redis, prefix, config(t))
	endpoint.Store(a.rcv)
	within(t, 30*time.Second, "B subscribed", func() bool {
		return counter(t, b.reg, "skillsvc_events_resyncs_total", "", "") >= 1
	})
	for name, r := range map[string]eventReplica{"A": a, "B": b} {
		if got := r.folders(t); !got["one"] || len(got) != 1 {
			t.Fatalf("%s before any change: %v", name, got)
		}
	}

	bothShow := func(folder string, want bool) func() bool {
		return func() bool { return a.folders(t)[folder] == want && b.folders(t)[folder] == want }
	}
	// applied counts the library changes A accepted from MinIO's posts
	// (which also carry the writes of the indexes skillsvc persists, ignored).
	applied := func() float64 {
		n := 0.0
		for _, c := range []string{"user_library", "shared_library", "team_library"} {
			n += counter(t, a.reg, "skillsvc_events_applied_total", "change", c)
		}
		return n
	}
	for i, step := range []struct {
		what   string
		change func()
		folder string
		shown  bool
	}{
		{"a skill put into alice's library", func() { put("alice/skills/two/SKILL.md", skillstest.SkillMD("two", "Added.", "body")) }, "two", true},
		{"a skill put into the shared library", func() { put("_shared/skills/three/SKILL.md", skillstest.SkillMD("three", "Shared.", "body")) }, "three", true},
		{"a skill put into alice's team's library", func() { put("_teams/legal/skills/four/SKILL.md", skillstest.SkillMD("four", "Legal's.", "body")) }, "four", true},
		{"a skill deleted from alice's library", func() {
			if _, err := s3c.DeleteObject(t.Context(), &awss3.DeleteObjectInput{Bucket: &bucket, Key: aws.String("alice/skills/two/SKILL.md")}); err != nil {
				t.Fatal(err)
			}
		}, "two", false},
	} {
		step.change()
		within(t, time.Minute, step.what+": its event applied", func() bool { return applied() >= float64(i+1) })
		within(t, time.Minute, step.what+": shown by both replicas", bothShow(step.folder, step.shown))
	}

	if n := counter(t, a.reg, "skillsvc_events_applied_total", "change", "user_library"); n != 2 {
		t.Errorf("A applied %v user library events, want 2", n)
	}
	if n := counter(t, a.reg, "skillsvc_events_applied_total", "change", "team_library"); n != 1 {
		t.Errorf("A applied %v team library events, want 1", n)
	}
	if n := counter(t, a.reg, "skillsvc_events_applied_total", "change", "shared_library"); n != 1 {
		t.Errorf("A applied %v shared library events, want 1", n)
	}
	// B may show a change by its own revalidation before A's message for
	// it arrives: wait for the messages, not for what B shows.
	within(t, time.Minute, "B applied A's 4 messages", func() bool {
		return counter(t, b.reg, "skillsvc_events_peer_messages_total", "outcome", "applied") >= 4
	})
}
