package usagemetrics

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// TestCounting: every event is counted by kind, layer kind and surface
// (unknown surfaces as "other", malformed layers not at all) and handed on;
// every series exists before any use, so dashboards find them.
func TestCounting(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := usage.DefaultConfig()
	agg := usage.NewRecorder(cfg, usage.NewMemoryStore(cfg))
	rec := Counting(agg, reg)
	c := rec.(*counting)
	if n := testutil.CollectAndCount(c.uses); n != len(kinds)*len(layers)*len(surfaces) {
		t.Fatalf("%d series before any use, want every one", n)
	}
	ctx := t.Context()
	for _, e := range []usage.Event{
		{Kind: usage.Activation, Skill: "pdf", Layer: skillview.LayerUser, User: "ann", Surface: "grpc"},
		{Kind: usage.Activation, Skill: "pdf", Layer: skillview.LayerUser, User: "ann", Surface: "grpc"},
		{Kind: usage.Activation, Skill: "nda", Layer: skillview.LayerTeam + "legal", User: "ann", Surface: "mcp"},
		{Kind: usage.FileRead, Skill: "csv", Layer: skillview.LayerShared, User: "ann", Surface: "vfs"},
		{Kind: usage.Activation, Skill: "csv", Layer: skillview.LayerShared, User: "ann", Surface: "carrier-pigeon"},
		{Kind: usage.Activation, Skill: "x", Layer: "nowhere", User: "ann", Surface: "grpc"},
		{Kind: usage.Search, Query: "pdf", Results: []string{"pdf"}, User: "ann", Surface: "json"},
		{Kind: usage.Search, Query: "tax", User: "ann", Surface: "json"},
	} {
		rec.Record(ctx, e)
	}
	for _, w := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"activation", "user", "grpc"}, 2},
		{[]string{"activation", "team", "mcp"}, 1},
		{[]string{"file_read", "organization", "vfs"}, 1},
		{[]string{"activation", "organization", "other"}, 1},
		{[]string{"activation", "user", "json"}, 0},
	} {
		if got := testutil.ToFloat64(c.uses.WithLabelValues(w.labels...)); got != w.want {
			t.Errorf("uses%v = %v, want %v", w.labels, got, w.want)
		}
	}
	if f, e := testutil.ToFloat64(c.searches.WithLabelValues("json", "found")), testutil.ToFloat64(c.searches.WithLabelValues("json", "empty")); f != 1 || e != 1 {
		t.Errorf("searches found %v, empty %v; want 1, 1", f, e)
	}
	if n := testutil.CollectAndCount(c.uses); n != len(kinds)*len(layers)*len(surfaces) {
		t.Errorf("%d series after uses, want the same bounded set", n)
	}
	// Handed on: the recorder counted all but the malformed layer.
	if s := agg.Stats(); s.Recorded != 7 || s.Dropped != 1 {
		t.Errorf("recorder stats %+v, want 7 recorded, 1 dropped", s)
	}
	if Counting(agg, nil) != usage.Recorder(agg) {
		t.Error("Counting without a registerer wraps")
	}
}

// TestTopSkills: the organization's most activated skills, read back
// through the real recorder and reader on Redis, ranked 1 to TopN; ranks
// no skill takes are there with skill "", so the series stay TopN; users'
// own skills are never named.
func TestTopSkills(t *testing.T) {
	testserver.Integration(t, "Redis")
	addr := testserver.StartRedis(t).Addr
	rc := cache.DefaultConfig().Redis
	rc.Addrs = []string{addr}
	rc.Keyspace = cache.NewKeyspace("usagemetrics-test")
	red, err := cache.NewRedis(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = red.Close() })
	client, prefix := red.Commands("usage")
	cfg := usage.DefaultConfig()
	store := usage.NewRedisStore(client, prefix, cfg)
	rec := usage.NewRecorder(cfg, store)
	reg := prometheus.NewRegistry()
	RegisterTop(reg, usage.NewReader(cfg, store, nil))

	const metric = "skillsvc_usage_top_skill_activations"
	if n, err := testutil.GatherAndCount(reg, metric); err != nil || n != TopN {
		t.Fatalf("before any use: %d series, %v; want %d", n, err, TopN)
	}
	ctx := t.Context()
	// Twelve shared skills, s01 used once ... s12 twelve times; alice's
	// own skill most of all.
	for i := 1; i <= 12; i++ {
		for range i {
			rec.Record(ctx, usage.Event{Kind: usage.Activation, Skill: fmt.Sprintf("s%02d", i), Layer: skillview.LayerShared, Version: "v1", User: "ann", Thread: "t1", Surface: "grpc"})
		}
	}
	for range 50 {
		rec.Record(ctx, usage.Event{Kind: usage.Activation, Skill: "private", Layer: skillview.LayerUser, Version: "v1", User: "alice", Thread: "t1", Surface: "grpc"})
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A new registry and reader: the first's counts are kept for a flush
	// interval, as a scrape every few seconds should find them.
	reg = prometheus.NewRegistry()
	RegisterTop(reg, usage.NewReader(cfg, store, nil))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || len(mfs[0].GetMetric()) != TopN {
		t.Fatalf("gathered %v, want %d series of %s", mfs, TopN, metric)
	}
	got := map[string]string{}
	values := map[string]float64{}
	for _, m := range mfs[0].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		got[labels["rank"]] = labels["skill"]
		values[labels["rank"]] = m.GetGauge().GetValue()
	}
	for rank := 1; rank <= TopN; rank++ {
		want := fmt.Sprintf("s%02d", 13-rank)
		if r := fmt.Sprint(rank); got[r] != want || values[r] != float64(13-rank) {
			t.Errorf("rank %s: %s with %v, want %s with %d", r, got[r], values[r], want, 13-rank)
		}
	}
}

// TestRank: most activated first, ties by name, unused places empty.
func TestRank(t *testing.T) {
	got := Rank(map[string]int64{"b": 2, "a": 2, "c": 5, "z": 0}, 4)
	want := []Ranked{{"c", 5}, {"a", 2}, {"b", 2}, {}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
}
