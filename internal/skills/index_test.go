package skills

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// clock is a test clock the indexes read instead of time.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// replicaOf is one replica as deployed (refresh 5s, max stale 30s,
// stale-if-error 1h) over b and the cache c (nil: its own), on clk.
func replicaOf(t *testing.T, b objstore.Bucket, c cache.Cache, clk *clock) (*Library, *prometheus.Registry) {
	t.Helper()
	cfg := DefaultConfig()
	reg := prometheus.NewRegistry()
	opts := []Option{WithRegisterer(reg)}
	if c != nil {
		opts = append(opts, WithCache(c))
	}
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatal(err)
	}
	lib.indexes.SetNow(clk.Now)
	t.Cleanup(lib.Close)
	return lib, reg
}

var alice = mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})

// nextDue is how long until the first of alice's layers in lib (her own
// only, unless withShared) falls due: each at its own point within the
// refresh interval (libindex.FreshFor).
func nextDue(t *testing.T, lib *Library, clk *clock, withShared bool) time.Duration {
	t.Helper()
	own, shared, err := lib.Catalog.views.Layers(alice)
	if err != nil {
		t.Fatal(err)
	}
	layers := []libindex.Layer{own}
	if withShared {
		layers = append(layers, shared)
	}
	next := time.Duration(-1)
	for _, l := range layers {
		x, err := lib.indexes.Get(t.Context(), l)
		if err != nil {
			t.Fatal(err)
		}
		if d := x.Listed.Add(lib.indexes.FreshFor(x)).Sub(clk.Now()); next < 0 || d < next {
			next = d
		}
	}
	return next
}

// pastDue is an age past the interval of any index of new content: the
// refresh interval, ended on the library's point of its phase cycle, up
// to half an interval later (libindex's slack).
func pastDue() time.Duration {
	r := DefaultConfig().IndexRefresh
	return r + r/2 + time.Second
}

func names(t *testing.T, lib *Library) string {
	t.Helper()
	list, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return strings.Join(out, ",")
}

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: Does " + name + ".\n---\n# " + name + "\n"
}

// TestIndexFreshness walks an index through its ages: served as is before
// the refresh interval, served while revalidated in the background after
// it, revalidated before answering after the max staleness, served stale
// while storage fails up to stale-if-error, and an error after that.
func TestIndexFreshness(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{
		"alice/skills/one/SKILL.md": skillMD("one"),
	}))
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, b, nil, clk)
	if got := names(t, lib); got != "one" {
		t.Fatalf("skills = %q", got)
	}
	lists := b.Calls(objstore.OpList)
	listed := clk.Now()
	objstoretest.Put(t, b, "alice/skills/two/SKILL.md", skillMD("two"))

	clk.Advance(nextDue(t, lib, clk, true) / 2) // younger than either layer's interval
	if got := names(t, lib); got != "one" || b.Calls(objstore.OpList) != lists {
		t.Errorf("within the interval: skills %q after %d more lists, want the index as is", got, b.Calls(objstore.OpList)-lists)
	}

	clk.Advance(listed.Add(pastDue()).Sub(clk.Now())) // past the refresh interval
	if got := names(t, lib); got != "one" {
		t.Errorf("after the refresh interval: skills %q, want the old index served while it is revalidated", got)
	}
	lib.indexes.Close() // the background revalidation
	if got := names(t, lib); got != "one,two" {
		t.Errorf("after the background revalidation: skills %q", got)
	}
	if n := testutil.ToFloat64(lib.metrics.Revalidations.WithLabelValues(libindex.ModeBackground, "ok")); n != 2 {
		t.Errorf("%v background revalidations, want one per layer", n)
	}

	objstoretest.Put(t, b, "alice/skills/three/SKILL.md", skillMD("three"))
	clk.Advance(31 * time.Second) // older than the max staleness
	if got := names(t, lib); got != "one,three,two" {
		t.Errorf("after the max staleness: skills %q, want revalidated before answering", got)
	}

	b.Fail("", "", objstore.ErrUnavailable)
	clk.Advance(40 * time.Minute)
	if got := names(t, lib); got != "one,three,two" {
		t.Errorf("storage down, index 40 min old: skills %q, want the stale index", got)
	}
	if n := testutil.ToFloat64(lib.metrics.StaleServed); n == 0 {
		t.Error("stale index served without counting it")
	}
	// Storage still down a refresh interval later: the retry runs in the
	// background, the caller is answered without waiting for it.
	syncs := testutil.ToFloat64(lib.metrics.Revalidations.WithLabelValues(libindex.ModeSync, "error"))
	clk.Advance(6 * time.Second)
	if got := names(t, lib); got != "one,three,two" {
		t.Errorf("storage still down: skills %q", got)
	}
	lib.indexes.Close()
	if n := testutil.ToFloat64(lib.metrics.Revalidations.WithLabelValues(libindex.ModeSync, "error")); n != syncs {
		t.Errorf("%v more revalidations made a caller wait while storage was known to fail", n-syncs)
	}
	if n := testutil.ToFloat64(lib.metrics.Revalidations.WithLabelValues(libindex.ModeBackground, "error")); n == 0 {
		t.Error("no background retry while storage was down")
	}
	clk.Advance(time.Hour)
	if _, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{}); errkind.Of(err) != errkind.Unavailable {
		t.Errorf("storage down past stale-if-error: err = %v, want Unavailable", err)
	}
	// That call failed on alice's own layer and left the shared layer's
	// load running (loads are shared, so a caller's leaving does not cancel
	// them): under load it was still running, its listing failed, when the
	// call after Heal joined it (CI, once). Wait for every load of both
	// layers to end first, so the next call is the first to list after.
	own, shared, err := lib.Catalog.views.Layers(alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []libindex.Layer{own, shared} {
		lib.indexes.Get(t.Context(), l) // joins a load in flight; fails while storage is down
	}
	b.Heal()
	if got := names(t, lib); got != "one,three,two" {
		t.Errorf("storage back: skills %q", got)
	}
}

// TestPersistedIndex: a replica with an empty cache starts from the index
// another replica persisted: one GET per layer, then one LIST per layer to
// revalidate it (it is older than the max staleness), no SKILL.md read.
func TestPersistedIndex(t *testing.T) {
	files := map[string]string{"_shared/skills/lint/SKILL.md": skillMD("lint")}
	for _, n := range []string{"a", "b", "c", "d"} {
		files["alice/skills/docs/"+n+"/SKILL.md"] = skillMD(n)
	}
	b := objstoretest.NewBucket(t, files)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	first, _ := replicaOf(t, b, nil, clk)
	want := names(t, first)

	// Within the interval of the persisted index, not even a LIST.
	listed := clk.Now()
	clk.Advance(nextDue(t, first, clk, true) / 2)
	fb := objstoretest.NewFaulty(b)
	recent, _ := replicaOf(t, fb, nil, clk)
	if got := names(t, recent); got != want {
		t.Errorf("replica on a fresh persisted index lists %q, want %q", got, want)
	}
	if l, r := fb.Calls(objstore.OpList), fb.Calls(objstore.OpGetRange); l != 0 || r != 0 {
		t.Errorf("replica on a fresh persisted index: %d List and %d GetRange calls, want none", l, r)
	}
	// Its refresh revalidates from that index: a LIST per layer, no head
	// read (the index it loaded is in its shared cache, not taken as
	// dropped).
	clk.Advance(listed.Add(8 * time.Second).Sub(clk.Now()))
	names(t, recent)
	recent.indexes.Close()
	if l, r := fb.Calls(objstore.OpList), fb.Calls(objstore.OpGetRange); l != 2 || r != 0 {
		t.Errorf("refreshing the persisted index: %d List and %d GetRange calls, want 2 and 0", l, r)
	}

	// Older than the max staleness: listed again, no SKILL.md read.
	clk.Advance(time.Hour)
	fb = objstoretest.NewFaulty(b)
	fresh, _ := replicaOf(t, fb, nil, clk)
	if got := names(t, fresh); got != want {
		t.Fatalf("fresh replica lists %q, want %q", got, want)
	}
	if l, g, r := fb.Calls(objstore.OpList), fb.Calls(objstore.OpGet), fb.Calls(objstore.OpGetRange); l != 2 || g != 3 || r != 0 {
		t.Errorf("fresh replica: %d List, %d Get, %d GetRange calls; want 2 (a layer each), 3 (two indexes, the settings), 0", l, g, r)
	}
	if n := testutil.ToFloat64(fresh.metrics.Loads.WithLabelValues(libindex.SourceBucket)); n != 2 {
		t.Errorf("%v indexes loaded from the bucket, want 2", n)
	}

	// A change is persisted: the next fresh replica serves alice's layer
	// from it without a LIST. (The shared layer's persisted index is an
	// hour old: only a change rewrites it, so it is listed once.)
	objstoretest.Put(t, b, "alice/skills/docs/e/SKILL.md", skillMD("e"))
	clk.Advance(time.Hour)
	names(t, fresh)
	clk.Advance(nextDue(t, fresh, clk, false) / 2)
	fb = objstoretest.NewFaulty(b)
	next, _ := replicaOf(t, fb, nil, clk)
	if got := names(t, next); got != "a,b,c,d,e,lint" {
		t.Errorf("replica after the change lists %q", got)
	}
	if l, r := fb.Calls(objstore.OpList), fb.Calls(objstore.OpGetRange); l != 1 || r != 0 {
		t.Errorf("replica after the change: %d List and %d GetRange calls, want 1 (the shared layer) and 0", l, r)
	}
}

// TestRevalidationLock: while another replica holds a library's lock, a
// replica whose index is past the refresh interval keeps serving it
// instead of listing too.
func TestRevalidationLock(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")}))
	shared := cache.NewLRU(1 << 20) // stands in for Redis: both replicas see it
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	a, _ := replicaOf(t, b, shared, clk)
	names(t, a)
	own, _, err := a.Catalog.views.UserLayers("alice")
	if err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := shared.TryLock(t.Context(), libindex.LockKey(own), time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	defer unlock()
	lists := b.Calls(objstore.OpList)
	clk.Advance(pastDue())
	names(t, a)
	a.indexes.Close()
	// The shared layer revalidates (nobody holds its lock); alice's does not.
	if n := b.Calls(objstore.OpList) - lists; n != 1 {
		t.Errorf("%d lists with alice's lock held elsewhere, want 1 (the shared layer's)", n)
	}
	if n := testutil.ToFloat64(a.metrics.Revalidations.WithLabelValues(libindex.ModeBackground, "locked")); n != 1 {
		t.Errorf("%v revalidations skipped for the lock, want 1", n)
	}
}

// TestWarmPathsNoStorage: once warm, every catalog call and every /skills
// VFS call answers with storage refusing every request.
func TestWarmPathsNoStorage(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{
		"alice/skills/docs/pdf/SKILL.md":        skillMD("pdf"),
		"alice/skills/docs/pdf/reference.md":    "# Reference\nforms and fields\n",
		"alice/skills/docs/pdf/assets/logo.png": "\x00PNG",
		"_shared/skills/lint/SKILL.md":          skillMD("lint"),
		"_shared/skills/lint/scripts/run.sh":    "#!/bin/sh\necho lint\n",
		"alice/settings/skills.json":            `{"disabled":["lint"]}`,
		"alice/threads/t1/not-a-skill/SKILL.md": skillMD("x"),
	}))
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, b, nil, clk)
	fs, err := vfs.New(b, mounts.Default(), vfs.DefaultConfig(), vfs.WithTree("/skills", lib.Tree))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	calls := []struct {
		name string
		call func() error
	}{
		{"Skills", func() error {
			_, err := lib.Catalog.Skills(ctx, alice, skillview.ListOptions{IncludeDisabled: true})
			return err
		}},
		{"Categories", func() error { _, err := lib.Catalog.Categories(ctx, alice); return err }},
		{"Prompt", func() error {
			_, err := lib.Catalog.Prompt(ctx, alice, skillview.ListOptions{}, skillmd.FormatOptions{})
			return err
		}},
		{"Search", func() error {
			_, err := lib.Catalog.Search(ctx, alice, skillview.SearchOptions{Query: "pdf"})
			return err
		}},
		{"Get", func() error { _, err := lib.Catalog.Get(ctx, alice, "pdf"); return err }},
		{"Render", func() error {
			_, _, err := lib.Catalog.Render(ctx, alice, "pdf", skillview.RenderOptions{Arguments: "x"})
			return err
		}},
		{"ReadFile", func() error {
			_, _, err := lib.Catalog.ReadFile(ctx, alice, "pdf", "reference.md", skillview.ReadOptions{})
			return err
		}},
		{"List", func() error { _, err := fs.List(ctx, alice, "/skills/docs/pdf", 0, ""); return err }},
		{"Stat", func() error { _, err := fs.Stat(ctx, alice, "/skills/docs/pdf/reference.md"); return err }},
		{"Stat dir", func() error { _, err := fs.Stat(ctx, alice, "/skills/docs"); return err }},
		{"Read", func() error { _, err := fs.Read(ctx, alice, "/skills/docs/pdf/SKILL.md", 0, 0, false); return err }},
		{"Read shared", func() error { _, err := fs.Read(ctx, alice, "/skills/lint/scripts/run.sh", 0, 0, false); return err }},
		{"Glob", func() error {
			_, err := fs.Glob(ctx, alice, "/skills", vfs.GlobOptions{Pattern: "**/*.md"})
			return err
		}},
		{"Grep", func() error {
			_, err := fs.Grep(ctx, alice, "/skills", vfs.GrepOptions{Pattern: "fields"})
			return err
		}},
	}
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Fatalf("warming %s: %v", c.name, err)
		}
	}
	b.Fail("", "", errors.New("storage must not be called"))
	before := b.Calls("")
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Errorf("warm %s: %v", c.name, err)
		}
	}
	if n := b.Calls("") - before; n != 0 {
		t.Errorf("warm calls made %d storage requests, want 0", n)
	}
}

// TestColdReadsCoalesce: 100 concurrent cold reads of one file make one
// storage request; a reader that gives up fails no one else.
func TestColdReadsCoalesce(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{
		"alice/skills/pdf/SKILL.md":     skillMD("pdf"),
		"alice/skills/pdf/reference.md": "# Reference\n",
	}))
	// The replica that builds the index caches what it hashes; another
	// one, with a cache of its own, starts from the persisted index and
	// has the file to read.
	builder, _ := replicaOf(t, b, nil, &clock{now: time.Unix(1_800_000_000, 0)})
	names(t, builder)
	lib, _ := replicaOf(t, b, nil, &clock{now: time.Unix(1_800_000_000, 0)})
	names(t, lib) // the persisted index, not the file
	var mu sync.Mutex
	reads := 0
	release := make(chan struct{})
	b.Before(objstore.OpGet, func(ctx context.Context, c objstoretest.Call) error {
		if c.Key != "alice/skills/pdf/reference.md" {
			return nil
		}
		mu.Lock()
		reads++
		mu.Unlock()
		<-release
		return nil
	})
	gaveUp, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 101)
	wg.Go(func() {
		_, _, err := lib.Catalog.ReadFile(gaveUp, alice, "pdf", "reference.md", skillview.ReadOptions{})
		if err != nil && !errors.Is(err, context.Canceled) {
			errs <- err
		}
	})
	for range 100 {
		wg.Go(func() {
			text, _, err := lib.Catalog.ReadFile(t.Context(), alice, "pdf", "reference.md", skillview.ReadOptions{})
			if err == nil && text != "# Reference\n" {
				err = errors.New("read " + text)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	cancel()
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads != 1 {
		t.Errorf("%d storage reads of the file, want 1", reads)
	}
}

// TestSettingsReadYourWrites: a change one replica makes is the next read
// of another sharing its cache, and reading settings costs no storage
// request once cached.
func TestSettingsReadYourWrites(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")}))
	shared := cache.NewLRU(1 << 20)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	a, _ := replicaOf(t, b, shared, clk)
	other, _ := replicaOf(t, b, shared, clk)
	names(t, a)
	names(t, other)
	for _, enabled := range []bool{false, true} {
		if _, err := a.Catalog.SetEnabled(t.Context(), alice, "one", enabled); err != nil {
			t.Fatal(err)
		}
		gets := b.Calls(objstore.OpGet)
		list, err := other.Catalog.Skills(t.Context(), alice, skillview.ListOptions{IncludeDisabled: true})
		if err != nil || len(list) != 1 || list[0].Disabled == enabled {
			t.Errorf("other replica after SetEnabled(%t): %+v, %v", enabled, list, err)
		}
		if n := b.Calls(objstore.OpGet) - gets; n != 0 {
			t.Errorf("other replica read storage %d times for the settings", n)
		}
	}
}
