package skills

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestSettingsForget: with Redis, a replica holds a user's settings in
// process (internal/settings: TestSettingsHeldInProcess), so another
// replica's change reaches it when it is told: the change of the settings
// object (ChangeOf) that Forget applies, or ForgetAll.
func TestSettingsForget(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")})
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{testserver.SharedRedis(t).Addr}
	cfg.Redis.KeyPrefix = "test-" + rand.Text() + ":"
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	newReplica := func() *Library {
		c, err := cache.New(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		lib, _ := replicaOf(t, b, c, clk)
		lib.Catalog.settings.Now = clk.Now
		return lib
	}
	a, other := newReplica(), newReplica()
	disabled := func(lib *Library) bool {
		t.Helper()
		list, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{IncludeDisabled: true})
		if err != nil || len(list) != 1 {
			t.Fatalf("Skills = %+v, %v; want skill one", list, err)
		}
		return list[0].Disabled
	}
	disabled(a)
	disabled(other)

	if _, err := a.Catalog.SetEnabled(t.Context(), alice, "one", false); err != nil {
		t.Fatal(err)
	}
	if !disabled(a) {
		t.Error("the replica that disabled skill one lists it enabled")
	}
	if disabled(other) {
		t.Error("the other replica dropped its copy without being told: is it still held?")
	}
	ch := other.Catalog.ChangeOf("alice/settings/skills.json")
	if ch.Kind != layout.Settings {
		t.Fatalf("ChangeOf(settings) = %+v", ch)
	}
	if err := other.Catalog.Forget(ch); err != nil {
		t.Fatal(err)
	}
	if !disabled(other) {
		t.Error("the other replica, told of the change (Forget), still lists skill one enabled")
	}

	if _, err := a.Catalog.SetEnabled(t.Context(), alice, "one", true); err != nil {
		t.Fatal(err)
	}
	other.Catalog.ForgetAll()
	if disabled(other) {
		t.Error("the other replica, after ForgetAll, still lists skill one disabled")
	}
}
