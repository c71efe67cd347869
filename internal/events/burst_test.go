package events_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// sum adds up the series of a counter or gauge on reg whose labels include
// labels.
func sum(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					n++
				}
			}
			if n == len(labels) {
				total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return total
}

// work is what a replica's drops cost: Redis deletes, storage deletes,
// messages to the other replicas.
type work struct{ redisDeletes, storageDeletes, published, drops float64 }

func workOf(t *testing.T, reg *prometheus.Registry) work {
	return work{
		redisDeletes:   sum(t, reg, "skillsvc_cache_requests_total", map[string]string{"operation": "delete", "level": "redis"}),
		storageDeletes: sum(t, reg, "skillsvc_objstore_operations_total", map[string]string{"operation": "delete"}),
		published:      sum(t, reg, "skillsvc_events_peer_messages_total", map[string]string{"outcome": "sent"}),
		drops:          sum(t, reg, "skillsvc_events_drops_total", nil),
	}
}

// burst is a replica A receiving bursts, B told by A through Redis, and a
// bucket where zed, another tenant, has a skill.
type burst struct {
	bucket string
	a, b   eventReplica
}

func newBurst(t *testing.T, cfgA events.Config) burst {
	t.Helper()
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	if _, err := srv.Client(t).PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String("zed/skills/notes/SKILL.md"),
		Body: strings.NewReader(skillstest.SkillMD("notes", "Zed's notes.", "body"))}); err != nil {
		t.Fatal(err)
	}
	redis := testserver.SharedRedis(t).Addr
	prefix := "events-" + rand.Text() + ":"
	bu := burst{bucket: bucket, a: newEventReplica(t, srv, bucket, redis, prefix, cfgA), b: newEventReplica(t, srv, bucket, redis, prefix, config(t))}
	within(t, 30*time.Second, "B subscribed", func() bool {
		return counter(t, bu.b.reg, "skillsvc_events_resyncs_total", "", "") >= 1
	})
	bu.served(t)
	return bu
}

// served checks that zed's skills are listed on both replicas, and that
// neither replica's Redis failed a call or opened its breaker.
func (bu burst) served(t *testing.T) {
	t.Helper()
	zed := mounts.Default().MustIdentify(mounts.Identity{User: "zed", Thread: "t1"})
	for _, r := range []eventReplica{bu.a, bu.b} {
		if list, _, err := r.lib.Catalog.State(t.Context(), zed); err != nil || len(list) != 1 {
			t.Fatalf("zed's skills: %v, %v", list, err)
		}
		if sum(t, r.reg, "skillsvc_cache_breaker_state", nil) != 0 || sum(t, r.reg, "skillsvc_cache_errors_total", map[string]string{"level": "redis"}) != 0 {
			t.Fatal("Redis failed a call or its breaker opened")
		}
	}
}

// post sends posts concurrent requests to A, each of records records, the
// record i of post p naming library(p*records+i), and checks each is 200.
func (bu burst) post(t *testing.T, posts, records int, library func(int) string) {
	t.Helper()
	bodies := make([]string, posts)
	for p := range posts {
		keys := make([]string, records)
		for i := range records {
			keys[i] = library(p*records+i) + fmt.Sprintf("/skills/s%d/SKILL.md", i)
		}
		bodies[p] = notification(bu.bucket, "s3:ObjectCreated:Put", keys...)
	}
	var wg sync.WaitGroup
	status := make([]int, posts)
	for p := range posts {
		wg.Go(func() { status[p] = post(bu.a.rcv, "Bearer "+token, bodies[p]).Code })
	}
	wg.Wait()
	for p, code := range status {
		if code != http.StatusOK {
			t.Errorf("post %d: %d, want 200", p, code)
		}
	}
}

// TestEventBursts: ten concurrent posts of 1,000 event records each, over
// 300 users' libraries, to a replica on real MinIO and Redis. Every post is
// accepted (200), the drops they cost are bounded by the libraries touched
// (each dropped once and rechecked once at most: a few Redis deletes, a
// storage delete and a message each), not by the records, and while they
// run the shared Redis never fails a call nor opens its breaker, so another
// tenant's reads on both replicas are served from it. The queue's bound is
// the number of libraries: a burst of 10,000 records, far larger, fits by
// coalescing.
func TestEventBursts(t *testing.T) {
	const posts, records, libraries = 10, 1000, 300
	cfg := config(t)
	cfg.MaxPending = libraries // lowered: the burst must coalesce to fit
	bu := newBurst(t, cfg)
	a, b := bu.a, bu.b
	before := workOf(t, a.reg)

	bu.post(t, posts, records, func(i int) string { return fmt.Sprintf("user%03d", i%libraries) })
	within(t, 2*time.Minute, "every drop and recheck done", func() bool {
		bu.served(t)
		return counter(t, a.reg, "skillsvc_events_pending", "", "") == 0
	})

	got := workOf(t, a.reg)
	d := work{got.redisDeletes - before.redisDeletes, got.storageDeletes - before.storageDeletes, got.published - before.published, got.drops - before.drops}
	t.Logf("%d records over %d libraries: %+v", posts*records, libraries, d)
	// A user's library drop deletes its index and its settings in Redis,
	// its persisted index in the bucket, and tells the other replicas.
	if d.drops < libraries || d.drops > 2*libraries {
		t.Errorf("%v drops for %d libraries, want from %d to %d", d.drops, libraries, libraries, 2*libraries)
	}
	if d.redisDeletes > 2*d.drops || d.storageDeletes > d.drops || d.published > d.drops {
		t.Errorf("the drops cost %+v, more than 2 Redis deletes, a storage delete and a message each", d)
	}
	if n := counter(t, a.reg, "skillsvc_events_applied_total", "change", "user_library"); n != posts*libraries {
		t.Errorf("%v changes accepted, want each library once a post (%d)", n, posts*libraries)
	}
	if n := counter(t, a.reg, "skillsvc_events_coalesced_total", "", ""); n < posts*libraries-d.drops {
		t.Errorf("%v changes coalesced: %v drops for %d changes", n, d.drops, posts*libraries)
	}
	within(t, time.Minute, "B applied A's messages", func() bool {
		return counter(t, b.reg, "skillsvc_events_peer_messages_total", "outcome", "applied") == d.published
	})
}

// TestEventBurstOfDistinctLibraries: ten concurrent posts of 1,000 records
// each, every record another user's library, as the attack: 10,000
// drops, up to --events.max-pending, all accepted (200) and queued. While
// the first thousand run, at the production pace, another tenant's reads
// are served on both replicas and Redis neither fails a call nor opens its
// breaker (before, 10,000 rechecks fired in the same second and did both).
func TestEventBurstOfDistinctLibraries(t *testing.T) {
	const posts, records = 10, 1000
	bu := newBurst(t, config(t))
	bu.post(t, posts, records, func(i int) string { return fmt.Sprintf("user%05d", i) })
	if n := counter(t, bu.a.reg, "skillsvc_events_applied_total", "change", "user_library"); n != posts*records {
		t.Fatalf("%v libraries accepted, want %d", n, posts*records)
	}
	within(t, 2*time.Minute, "a thousand drops done", func() bool {
		bu.served(t)
		return counter(t, bu.a.reg, "skillsvc_events_drops_total", "result", "ok") >= 1000
	})
	if n := counter(t, bu.a.reg, "skillsvc_events_drops_total", "result", "error"); n != 0 {
		t.Errorf("%v drops failed", n)
	}
}
