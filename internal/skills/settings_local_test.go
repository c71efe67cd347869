package skills

import (
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestSettingsHeldInProcess: with Redis, a replica keeps a user's settings
// in process for --skills.index-max-stale (at least --cache.lru.max-ttl),
// so a warm call asks Redis nothing; a change made through a replica is
// that replica's next read, another replica's within the bound, or at once
// when it is told (Forget).
func TestSettingsHeldInProcess(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")}))
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{testserver.SharedRedis(t).Addr}
	cfg.Redis.KeyPrefix = "test-" + rand.Text() + ":"
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	type replica struct {
		lib *Library
		reg *prometheus.Registry // the cache's metrics
	}
	newReplica := func() replica {
		reg := prometheus.NewRegistry()
		c, err := cache.New(cfg, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		lib, _ := replicaOf(t, b, c, clk)
		lib.Catalog.settings.now = clk.Now
		return replica{lib: lib, reg: reg}
	}
	a, other := newReplica(), newReplica()
	disabled := func(r replica) bool {
		t.Helper()
		list, err := r.lib.Catalog.Skills(t.Context(), alice, ListOptions{IncludeDisabled: true})
		if err != nil || len(list) != 1 {
			t.Fatalf("Skills = %+v, %v; want skill one", list, err)
		}
		return list[0].Disabled
	}
	redisFetches := func(r replica) float64 {
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

	if _, err := a.lib.Catalog.SetEnabled(t.Context(), alice, "one", false); err != nil {
		t.Fatal(err)
	}
	if !disabled(a) {
		t.Error("the replica that disabled skill one lists it enabled")
	}
	if disabled(other) {
		t.Error("the other replica dropped its copy before --skills.index-max-stale without being told: is it still held?")
	}
	bound := max(cache.DefaultConfig().LRU.MaxTTL, DefaultConfig().IndexMaxStale)
	if got := other.lib.Catalog.settings.localTTL; got != bound {
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

	if _, err := a.lib.Catalog.SetEnabled(t.Context(), alice, "one", true); err != nil {
		t.Fatal(err)
	}
	ch := other.lib.Catalog.ChangeOf("alice/settings/skills.json")
	if ch.Kind != Settings {
		t.Fatalf("ChangeOf(settings) = %+v", ch)
	}
	if err := other.lib.Catalog.Forget(ch); err != nil {
		t.Fatal(err)
	}
	if disabled(other) {
		t.Error("the other replica, told of the change (Forget), still lists skill one disabled")
	}

	if _, err := a.lib.Catalog.SetEnabled(t.Context(), alice, "one", false); err != nil {
		t.Fatal(err)
	}
	other.lib.Catalog.ForgetAll()
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
	b := objstoretest.NewBucket(t, map[string]string{
		"alice/skills/one/SKILL.md": skillMD("one"),
		"alice/skills/two/SKILL.md": skillMD("two"),
	})
	shared := cache.NewLRU(1 << 20)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	a, _ := replicaOf(t, b, shared, clk)
	other, _ := replicaOf(t, b, shared, clk)
	if got := a.Catalog.settings.localTTL; got != 0 {
		t.Fatalf("in-process cache: settings kept for %v, want no copy for a time", got)
	}
	if _, err := a.Catalog.SetEnabled(t.Context(), alice, "one", false); err != nil {
		t.Fatal(err)
	}
	get := func(lib *Library) settings {
		t.Helper()
		s, err := lib.Catalog.settings.get(t.Context(), alice)
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
	if _, err := other.Catalog.SetEnabled(t.Context(), alice, "two", false); err != nil {
		t.Fatal(err)
	}
	if got := get(a).Disabled; !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("after another writer's change, disabled = %v, want [one two]", got)
	}
}
