package skills_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// replica is one skillsvc process: its own library and cache stack over the
// shared bucket and Redis, and its own count of storage calls.
type replica struct {
	lib    *skills.Library
	bucket *objstoretest.Faulty
}

// newRedisCache is the stack cmd/skillsvc builds with --cache.redis.addrs,
// under a key prefix of its own so tests can share a Redis.
func newRedisCache(t *testing.T, addr, keyPrefix string) cache.Cache {
	t.Helper()
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{addr}
	cfg.Redis.KeyPrefix = keyPrefix
	c, err := cache.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newReplicas starts n replicas over one in-memory bucket holding alice's
// skill "one" and the shared skill "two", all on the Redis at addr.
func newReplicas(t *testing.T, addr string, ttl time.Duration, n int) (*memory.Bucket, []replica) {
	t.Helper()
	lb := skillstest.New()
	lb.User("alice").Skill("one", "", "First version.", "")
	lb.Shared().Skill("two", "", "Shared.", "")
	mem := lb.Bucket(t)
	keyPrefix := "test-" + rand.Text() + ":"
	rs := make([]replica, n)
	for i := range rs {
		b := objstoretest.NewFaulty(mem)
		rs[i] = replica{
			lib:    skillstest.Library(t, b, skillstest.Indexed(ttl), skills.WithCache(newRedisCache(t, addr, keyPrefix))),
			bucket: b,
		}
	}
	return mem, rs
}

// descriptions lists alice's skills on r: description by folder.
func (r replica) descriptions(t *testing.T) map[string]string {
	t.Helper()
	return listedBy(t, r.lib, skillview.ListOptions{}, func(s skillview.Skill) string { return s.Description })
}

// calls returns r's List and GetRange calls so far.
func (r replica) calls() (lists, ranges int64) {
	return r.bucket.Calls(objstore.OpList), r.bucket.Calls(objstore.OpGetRange)
}

// TestRedisSharedAcrossReplicas: what one replica read, another serves from
// Redis: the heads at once, the listings within the index TTL.
func TestRedisSharedAcrossReplicas(t *testing.T) {
	_, rs := newReplicas(t, testserver.SharedRedis(t).Addr, time.Hour, 2)
	a, b := rs[0], rs[1]
	want := a.descriptions(t)
	if lists, ranges := a.calls(); lists != 2 || ranges != 2 {
		t.Fatalf("replica A made %d List and %d GetRange calls, want 2 and 2 (one per layer and skill)", lists, ranges)
	}
	got := b.descriptions(t)
	if got["one"] != "First version." || got["two"] != "Shared." || len(got) != len(want) {
		t.Errorf("replica B lists %v, replica A %v", got, want)
	}
	if lists, ranges := b.calls(); lists != 0 || ranges != 0 {
		t.Errorf("replica B made %d List and %d GetRange calls, want none: both come from Redis", lists, ranges)
	}
}

// TestRedisChangedSkillMD: a SKILL.md changed in the bucket is read from
// storage by one replica only; the other takes its head from Redis. (The
// replicas list on every call, so the change shows at once; the freshness
// bounds are TestIndexFreshness's.)
func TestRedisChangedSkillMD(t *testing.T) {
	mem, rs := newReplicas(t, testserver.SharedRedis(t).Addr, 0, 2)
	a, b := rs[0], rs[1]
	a.descriptions(t)
	b.descriptions(t)
	putAliceSkill(t, mem, "one", "Second version.", "")

	_, aRanges := a.calls()
	_, bRanges := b.calls()
	if got := a.descriptions(t); got["one"] != "Second version." || got["two"] != "Shared." {
		t.Errorf("replica A after the change: %v", got)
	}
	if got := b.descriptions(t); got["one"] != "Second version." || got["two"] != "Shared." {
		t.Errorf("replica B after the change: %v", got)
	}
	_, aRanges2 := a.calls()
	_, bRanges2 := b.calls()
	if n := aRanges2 - aRanges; n != 1 {
		t.Errorf("replica A read %d SKILL.md heads, want 1 (the changed one)", n)
	}
	if n := bRanges2 - bRanges; n != 0 {
		t.Errorf("replica B read %d SKILL.md heads, want 0: A cached the new version", n)
	}
}

// TestRedisOutage: with Redis down or hung, listing still answers on a
// replica that has nothing in process: from the persisted indexes, one GET
// per layer, without listing or reading a SKILL.md.
func TestRedisOutage(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*testing.T, *testserver.RestartableRedis)
	}{
		{"stopped", func(t *testing.T, r *testserver.RestartableRedis) { r.Stop(t) }},
		{"paused", func(t *testing.T, r *testserver.RestartableRedis) {
			r.Pause(t)
			t.Cleanup(func() { r.Resume(t) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			red := testserver.StartRestartableRedis(t)
			_, rs := newReplicas(t, red.Addr, time.Hour, 2)
			a, fresh := rs[0], rs[1]
			want := a.descriptions(t)
			tc.fail(t, red)
			got := fresh.descriptions(t) // fails the test on an error
			if got["one"] != want["one"] || got["two"] != want["two"] {
				t.Errorf("during the outage: %v, want %v", got, want)
			}
			lists, ranges := fresh.calls()
			if gets := fresh.bucket.Calls(objstore.OpGet); lists != 0 || ranges != 0 || gets != 3 {
				t.Errorf("during the outage: %d List, %d GetRange and %d Get calls, want 0, 0 and 3 (two persisted indexes, the settings)", lists, ranges, gets)
			}
		})
	}
}
