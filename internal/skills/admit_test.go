package skills

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// TestOwnSkillsReadOnceKeepNothing: users reading their own skills once
// each, as thousands of users do between two reads of one, keep neither
// the parses nor the replies, so the views every call needs stay held on a
// budget sized for them; one user asking again is kept from the second ask.
// Without admission the parses evict the views.
func TestOwnSkillsReadOnceKeepNothing(t *testing.T) {
	const users = 200
	b := objstoretest.NewBucket(t, tenantFiles(300, users+1, 5)) // the last one asks later
	sized := func(max int64) *Library {
		cfg := DefaultConfig()
		if max > 0 {
			cfg.MaxHeldBytes = max
		}
		lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lib.Close)
		for u := range users {
			if _, err := lib.Catalog.Skills(t.Context(), tenant(u), skillview.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return lib
	}
	// A budget with a tenth to spare over what listing every user holds.
	listed := sized(0).indexes.Held().Bytes()
	lib := sized(listed + listed/10)
	evicted := func() (n float64) {
		for _, kind := range []string{libindex.HeldIndex, views.HeldView, settings.HeldKind, views.HeldLayer} {
			n += testutil.ToFloat64(lib.metrics.HeldEvictions.WithLabelValues(kind))
		}
		return n
	}
	before := evicted()
	rc := replies.New(lib.Catalog.ReplyCacheBytes(), nil)
	builds := 0
	get := func(u int, name string) {
		t.Helper()
		if _, err := getReply(t.Context(), lib, rc, tenant(u), name, func(d skillview.Detail) ([]byte, error) {
			builds++
			return []byte(d.Body), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	own := []string{"skill-0007", "mine-1", "mine-2", "mine-3", "mine-4"}
	for u := range users {
		for _, name := range own {
			get(u, name)
		}
	}
	if n := evicted() - before; n != 0 {
		t.Errorf("reading each user's own skills once evicted %v indexes, views or settings, want none", n)
	}
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(heldSkillMD)); n != 0 {
		t.Errorf("%v parses of users' own SKILL.md files held after one read each, want none", n)
	}
	if builds != users*len(own) {
		t.Fatalf("%d replies built, want %d", builds, users*len(own))
	}
	// One user asking three times: kept from the second ask.
	builds = 0
	for range 3 {
		get(users, "mine-1")
	}
	if builds != 2 {
		t.Errorf("three asks of one skill built %d replies, want 2 (the first two, then kept)", builds)
	}
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(heldSkillMD)); n != 1 {
		t.Errorf("%v parses held after one user's second ask, want 1", n)
	}
	// The shared library's skills are kept at once.
	builds = 0
	get(1, "skill-0042")
	get(2, "skill-0042")
	if builds != 1 {
		t.Errorf("two users asking for a shared skill built %d replies, want 1", builds)
	}
}
