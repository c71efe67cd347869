package usage

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestOrderVersion: counts that order skills alike share a version (a kept
// reply is rebuilt when its order changes, not on every activation); a new
// order, or a new tie, is a new version; no use at all is "".
func TestOrderVersion(t *testing.T) {
	v := orderVersion(map[string]int64{"pdf": 5, "xlsx": 3})
	for _, tc := range []struct {
		name   string
		counts map[string]int64
		same   bool
	}{
		{"more of the same order", map[string]int64{"pdf": 6, "xlsx": 3}, true},
		{"a new order", map[string]int64{"pdf": 3, "xlsx": 5}, false},
		{"a tie", map[string]int64{"pdf": 5, "xlsx": 5}, false},
		{"a new skill", map[string]int64{"pdf": 5, "xlsx": 3, "docx": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orderVersion(tc.counts) == v; got != tc.same {
				t.Errorf("same version %v, want %v", got, tc.same)
			}
		})
	}
	if orderVersion(nil) != "" || orderVersion(map[string]int64{"pdf": 0}) != "" {
		t.Error("no use has a version")
	}
}

// TestRanksReadOnlyUsedLibraries: Ranks read a library's counts over the
// days since the store first lists it as used (alice two days ago: three
// days; bob today: today alone), and a library nobody used not at all.
func TestRanksReadOnlyUsedLibraries(t *testing.T) {
	cfg := testConfig()
	store := NewMemoryStore(cfg)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, u := range []struct {
		user, skill string
		when        time.Time
	}{{"alice", "pdf", now.Add(-48 * time.Hour)}, {"bob", "xlsx", now}} {
		rec := NewRecorder(cfg, store, withClock(at(u.when)))
		rec.Record(t.Context(), activation(u.user, "t1", u.skill))
		if err := rec.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	reader := NewReader(cfg, store, nil)
	reader.now = at(now)
	k := NewRanks(reader)
	k.now = at(now)
	for _, tc := range []struct {
		user  string
		days  int
		names map[string]int64
	}{
		{"alice", 3, map[string]int64{"pdf": 1, skillview.UseKey("pdf", "v1"): 1}},
		{"bob", 1, map[string]int64{"xlsx": 1, skillview.UseKey("xlsx", "v1"): 1}},
		{"carol", 0, nil},
	} {
		c := caller(t, tc.user, "")
		if days, err := k.used(t.Context(), Own(c)); err != nil || days != tc.days {
			t.Errorf("%s: used over %d days (%v), want %d", tc.user, days, err, tc.days)
		}
		if counts, _ := k.Recent(c, skillview.LayerUser); counts != nil {
			t.Errorf("%s: counts %v before any read", tc.user, counts)
		}
		k.Wait()
		if counts, v := k.Recent(c, skillview.LayerUser); fmt.Sprint(counts) != fmt.Sprint(tc.names) || (v == "") != (tc.names == nil) {
			t.Errorf("%s: counts %v version %q, want %v", tc.user, counts, v, tc.names)
		}
	}
}
