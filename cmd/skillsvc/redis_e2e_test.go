package main

import (
	"context"
	"crypto/rand"
	"reflect"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestRedisCacheEndToEnd runs two binaries on one MinIO bucket and one
// Redis (configured by flag and by environment variable): the second one's
// first ListSkills returns the same skills without listing or reading a
// SKILL.md, since the first one cached both.
func TestRedisCacheEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	put := s3Put(t, srv, bucket)
	put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\n")
	put("_shared/skills/data/csv/SKILL.md", "---\nname: csv\ndescription: Clean CSV files.\n---\n")
	keyPrefix := "e2e-" + rand.Text() + ":"
	args := []string{"--storage=s3", "--s3.bucket=" + bucket, "--s3.endpoint=" + srv.Endpoint, "--s3.path-style", "--s3.region=" + srv.Region,
		"--skills.index-refresh=1h", "--skills.index-max-stale=1h", "--skills.stale-if-error=1h", "--library.recover-every=1h", "--cache.redis.key-prefix=" + keyPrefix, "--metrics.listen=127.0.0.1:0"}
	first := startBinary(t, minioEnv(srv), append(args, "--cache.redis.addrs="+red.Addr)...)
	second := startBinary(t, minioEnv(srv, "SKILLSVC_CACHE_REDIS_ADDRS="+red.Addr), args...)

	list := func(p *proc) []string {
		t.Helper()
		resp, err := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)).ListSkills(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range resp.GetSkills() {
			out = append(out, s.GetName()+":"+s.GetDescription())
		}
		return out
	}
	want := list(first)
	if len(want) != 2 {
		t.Fatalf("first binary lists %q", want)
	}
	// The second binary's own storage work at start (its recovery pass
	// lists the publishes' intents) is not the catalog's: count around the
	// call. Recovery runs again only after --library.recover-every.
	m := metricsFor(t, second)
	ops := func() (list, getRange float64) {
		return m.value(t, `skillsvc_objstore_operations_total{operation="list"}`), m.value(t, `skillsvc_objstore_operations_total{operation="get_range"}`)
	}
	list0, range0 := ops()
	if got := list(second); !reflect.DeepEqual(got, want) {
		t.Errorf("second binary lists %q, first %q", got, want)
	}
	if list1, range1 := ops(); list1 != list0 || range1 != range0 {
		t.Errorf("second binary read storage to answer: %v listings, %v ranged reads", list1-list0, range1-range0)
	}
}
