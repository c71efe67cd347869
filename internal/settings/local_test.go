package settings

import (
	"crypto/rand"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

var alice = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})

// The flags' defaults the catalog builds its store with:
// --skills.settings-ttl, --skills.index-max-stale, --skills.settings-key.
const (
	testTTL      = time.Hour
	testMaxStale = 30 * time.Second
	testKey      = "{user}/settings/skills.json"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// replica is one replica's store of the users' settings over b and c.
func replica(b objstore.Bucket, c cache.Cache, clk *clock) *Store {
	m := libindex.NewMetrics(prometheus.NewRegistry())
	st := NewStore(b, c, testTTL, testMaxStale, func(user string) string { return strings.Replace(testKey, "{user}", user, 1) }, cache.NewHeld(64<<20, m.HeldMetrics), libindex.NewCacheLog(slog.New(slog.DiscardHandler)), m)
	st.Now = clk.Now
	return st
}

// setDisabled disables (or enables) skill name for alice through st.
func setDisabled(t *testing.T, st *Store, name string, disabled bool) {
	t.Helper()
	err := st.Update(t.Context(), alice, func(s *User) bool {
		if slices.Contains(s.Disabled, name) == disabled {
			return false
		}
		if disabled {
			s.Disabled = append(s.Disabled, name)
		} else {
			s.Disabled = slices.DeleteFunc(s.Disabled, func(n string) bool { return n == name })
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSettingsHeldInProcess: with Redis, a replica keeps a user's settings
// in process for --skills.index-max-stale (at least --cache.lru.max-ttl),
// so a warm call asks Redis nothing; a change made through a replica is
// that replica's next read, another replica's within the bound, or at once
// when it is told (DropLocal, which the catalog's Forget calls).
func TestSettingsHeldInProcess(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{testserver.SharedRedis(t).Addr}
	cfg.Redis.KeyPrefix = "test-" + rand.Text() + ":"
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	type replicaOf struct {
		st  *Store
		reg *prometheus.Registry // the cache's metrics
	}
	newReplica := func() replicaOf {
		reg := prometheus.NewRegistry()
		c, err := cache.New(cfg, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return replicaOf{st: replica(b, c, clk), reg: reg}
	}
	a, other := newReplica(), newReplica()
	disabled := func(r replicaOf) bool {
		t.Helper()
		s, err := r.st.Get(t.Context(), alice)
		if err != nil {
			t.Fatal(err)
		}
		return s.DisabledSet()["one"]
	}
	redisFetches := func(r replicaOf) float64 {
		t.Helper()
		families, err := r.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if f.GetName() == "skillsvc_cache_requests_total" && labels["operation"] == "fetch" && labels["level"] == "redis" {
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatal("no skillsvc_cache_requests_total{operation=fetch,level=redis}")
		return 0
	}
	disabled(a)
	disabled(other)

	before := redisFetches(other)
	for range 3 {
		disabled(other)
	}
	if n := redisFetches(other) - before; n != 0 {
		t.Errorf("warm listings fetched from Redis %v times, want 0", n)
	}

	setDisabled(t, a.st, "one", true)
	if !disabled(a) {
		t.Error("the replica that disabled skill one lists it enabled")
	}
	if disabled(other) {
		t.Error("the other replica dropped its copy before --skills.index-max-stale without being told: is it still held?")
	}
	bound := max(cache.DefaultConfig().LRU.MaxTTL, testMaxStale)
	if got := other.st.localTTL; got != bound {
		t.Errorf("settings held in process for %v, want %v", got, bound)
	}
	clk.Advance(bound - time.Second)
	if disabled(other) {
		t.Errorf("the other replica dropped its copy %v after reading it without being told", bound-time.Second)
	}
	clk.Advance(time.Second)
	if !disabled(other) {
		t.Errorf("the other replica lists skill one enabled %v after it was disabled", bound)
	}

	setDisabled(t, a.st, "one", false)
	other.st.DropLocal("alice")
	if disabled(other) {
		t.Error("the other replica, told of the change (Forget), still lists skill one disabled")
	}

	setDisabled(t, a.st, "one", true)
	other.st.DropAllLocal()
	if !disabled(other) {
		t.Error("the other replica, after ForgetAll, still lists skill one enabled")
	}
}

// TestSettingsDecodedOnce: with the in-process cache only (the embedded
// default), which keeps no copy of a user's settings for a time, a call
// that reads the same cached bytes as the last takes their decoding
// instead of decoding them again (a JSON decode a call, 7% of a warm
// GetSkill's CPU in BenchmarkGetSkillGRPC); bytes another writer changed
// are decoded afresh.
func TestSettingsDecodedOnce(t *testing.T) {
	b := objstoretest.NewBucket(t, nil)
	shared := cache.NewLRU(1 << 20)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	a, other := replica(b, shared, clk), replica(b, shared, clk)
	if got := a.localTTL; got != 0 {
		t.Fatalf("in-process cache: settings kept for %v, want no copy for a time", got)
	}
	setDisabled(t, a, "one", true)
	get := func(st *Store) User {
		t.Helper()
		s, err := st.Get(t.Context(), alice)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first, second := get(a), get(a)
	if !slices.Equal(first.Disabled, []string{"one"}) || !slices.Equal(second.Disabled, []string{"one"}) {
		t.Fatalf("disabled = %v then %v, want [one]", first.Disabled, second.Disabled)
	}
	if &first.Disabled[0] != &second.Disabled[0] {
		t.Error("the same cached settings were decoded twice")
	}
	// Another writer of the same cache: a's next read sees its bytes.
	setDisabled(t, other, "two", true)
	if got := get(a).Disabled; !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("after another writer's change, disabled = %v, want [one two]", got)
	}
}
