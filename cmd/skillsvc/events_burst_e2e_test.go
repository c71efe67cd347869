package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// eventPost is an S3 event notification of one ObjectCreated record per
// key, as MinIO posts it.
func eventPost(bucket string, keys []string) string {
	type rec struct {
		EventName string `json:"eventName"`
		S3        struct {
			Bucket struct {
				Name string `json:"name"`
			} `json:"bucket"`
			Object struct {
				Key string `json:"key"`
			} `json:"object"`
		} `json:"s3"`
	}
	var n struct {
		Records []rec `json:"Records"`
	}
	for _, k := range keys {
		var r rec
		r.EventName, r.S3.Bucket.Name, r.S3.Object.Key = "s3:ObjectCreated:Put", bucket, strings.ReplaceAll(k, "/", "%2F")
		n.Records = append(n.Records, r)
	}
	b, _ := json.Marshal(n)
	return string(b)
}

// TestEventBurstsLeaveOtherTenantsServed: ten concurrent webhook posts of
// 1,000 event records each, over 500 users' libraries, to a binary with
// the production defaults. Every post is answered 200, bob (another
// tenant) publishes and reads his skill meanwhile, the Redis breaker never
// opens and Redis never fails a call, and the drops cost Redis, storage and
// the replicas' topic a bounded amount: at most two drops a library
// touched, not one a record.
func TestEventBurstsLeaveOtherTenantsServed(t *testing.T) {
	const posts, records, libraries = 10, 1000, 500
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	tokenFile := filepath.Join(t.TempDir(), "webhook-token")
	if err := os.WriteFile(tokenFile, []byte(webhookToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()), "--events.webhook-token-file="+tokenFile)...)...)
	m := metricsFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bob := grpctest.AsCaller(ctx, "bob", "t1", "")
	skillsAPI := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
	if _, err := skillNames(bob, skillsAPI); err != nil {
		t.Fatal(err)
	}

	// The work drops do, and the Redis failures, so far.
	type cost struct{ drops, redisDeletes, storageDeletes, published, redisErrors float64 }
	costNow := func() cost {
		body := m.scrape(t)
		c := cost{
			drops:          seriesValue(t, body, `skillsvc_events_drops_total{result="ok"}`) + seriesValue(t, body, `skillsvc_events_drops_total{result="error"}`),
			redisDeletes:   seriesValue(t, body, `skillsvc_cache_requests_total{level="redis",operation="delete"}`),
			storageDeletes: seriesValue(t, body, `skillsvc_objstore_operations_total{operation="delete"}`),
			published:      seriesValue(t, body, `skillsvc_events_peer_messages_total{outcome="sent"}`),
		}
		for _, op := range []string{"fetch", "store", "delete", "lock"} {
			c.redisErrors += seriesValue(t, body, `skillsvc_cache_errors_total{level="redis",operation="`+op+`"}`)
		}
		if state := seriesValue(t, body, "skillsvc_cache_breaker_state"); state != 0 {
			t.Fatalf("the Redis breaker is %v (0 closed)", state)
		}
		return c
	}
	before := costNow()

	status := make([]int, posts)
	var wg sync.WaitGroup
	for i := range posts {
		keys := make([]string, records)
		for j := range records {
			keys[j] = fmt.Sprintf("user%03d/skills/s%d/SKILL.md", (i*records+j)%libraries, j)
		}
		body := eventPost(bucket, keys)
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/events/s3", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+webhookToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			status[i] = resp.StatusCode
		})
	}
	// Bob publishes and reads while the posts are taken and their drops run.
	if _, err := pushFolder(bob, lib, &skillsvcv1.PublishSkillHeader{Name: "changelog"}, map[string]string{"SKILL.md": skillMDOf("changelog", "Write the changelog.", "List the changes.\n")}); err != nil {
		t.Fatalf("bob's publish during the burst: %v", err)
	}
	if g, err := skillsAPI.GetSkill(bob, &skillsvcv1.GetSkillRequest{Path: "changelog"}); err != nil || !strings.Contains(g.GetBody(), "List the changes.") {
		t.Fatalf("bob's GetSkill during the burst: %v", err)
	}
	wg.Wait()
	for i, code := range status {
		if code != http.StatusOK {
			t.Errorf("post %d: %d, want 200", i, code)
		}
	}
	pollUntil(t, 2*time.Minute, "every drop and recheck done", func() bool {
		if got, err := skillNames(bob, skillsAPI); err != nil || got != "changelog,csv" {
			t.Fatalf("bob lists %q, %v during the burst", got, err)
		}
		costNow() // the breaker stays closed
		return m.value(t, "skillsvc_events_pending") == 0
	})

	after := costNow()
	d := cost{after.drops - before.drops, after.redisDeletes - before.redisDeletes, after.storageDeletes - before.storageDeletes, after.published - before.published, after.redisErrors - before.redisErrors}
	t.Logf("%d records over %d libraries cost %+v", posts*records, libraries, d)
	touched := float64(libraries + 1) // and bob's, told by his publish
	if d.redisErrors != 0 {
		t.Errorf("%v Redis calls failed during the burst", d.redisErrors)
	}
	if d.drops < libraries || d.drops > 2*touched {
		t.Errorf("%v drops for %v libraries touched, want at most two each", d.drops, touched)
	}
	// A user's library drop deletes its index and its settings in Redis,
	// its persisted index in the bucket, and tells the other replicas;
	// bob's publish adds a drop of its own and its writes.
	if d.redisDeletes > 2*d.drops+4 || d.storageDeletes > d.drops+4 || d.published > d.drops {
		t.Errorf("%v drops cost %v Redis deletes, %v storage deletes and %v messages: more than 2, 1 and 1 each", d.drops, d.redisDeletes, d.storageDeletes, d.published)
	}
}
