package usage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

func testConfig() Config {
	c := DefaultConfig()
	c.FlushInterval = 10 * time.Second
	return c
}

// activation is alice's activation of skill from her own library.
func activation(user, thread, skill string) Event {
	return Event{Kind: Activation, Skill: skill, Layer: skillview.LayerUser, Version: "v1", User: user, Thread: thread, Surface: "grpc"}
}

func caller(t testing.TB, user, teams string) mounts.Caller {
	t.Helper()
	c, err := mounts.Default().Identify(mounts.Identity{User: user, Thread: "t1", Teams: teams})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFlushEveryInterval: counts reach the store at the first tick of the
// flush interval, not before, and Close flushes what is left.
func TestFlushEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		store := NewMemoryStore(cfg)
		rec := NewRecorder(cfg, store)
		rec.Start()
		alice := Own(caller(t, "alice", ""))
		today := DayOf(time.Now())
		rec.Record(t.Context(), activation("alice", "t1", "pdf"))
		time.Sleep(cfg.FlushInterval - time.Second)
		synctest.Wait()
		if d, _ := store.day(t.Context(), alice, today, false); d != nil {
			t.Fatalf("before the interval the store holds %+v", d)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		d, _ := store.day(t.Context(), alice, today, false)
		if d == nil || d.Counts["activation|pdf|v1|grpc"] != 1 {
			t.Fatalf("after the interval the store holds %+v, want one activation", d)
		}
		rec.Record(t.Context(), activation("alice", "t1", "pdf"))
		rec.Close()
		d, _ = store.day(t.Context(), alice, today, false)
		if d.Counts["activation|pdf|v1|grpc"] != 2 {
			t.Fatalf("after Close the store holds %+v, want two activations", d)
		}
	})
}

// blockingStore's add waits until released, as a hung Redis would.
type blockingStore struct {
	Store
	release chan struct{}
	adds    chan struct{}
}

func (s *blockingStore) add(ctx context.Context, b *batch) error {
	s.adds <- struct{}{}
	<-s.release
	return s.Store.add(ctx, b)
}

// TestRecordDuringHungFlush: while a flush waits on its store, Record
// returns at once (a blocked Record would leave the bubble deadlocked).
func TestRecordDuringHungFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		store := &blockingStore{Store: NewMemoryStore(cfg), release: make(chan struct{}), adds: make(chan struct{}, 1)}
		rec := NewRecorder(cfg, store)
		rec.Start()
		rec.Record(t.Context(), activation("alice", "t1", "pdf"))
		time.Sleep(cfg.FlushInterval)
		<-store.adds // the flush is now stuck in the store
		for i := range 1000 {
			rec.Record(t.Context(), activation("alice", fmt.Sprint("t", i), "pdf"))
		}
		if got := rec.Stats().Recorded; got != 1001 {
			t.Fatalf("recorded %d events during a hung flush, want 1001", got)
		}
		close(store.release)
		rec.Close()
	})
}

// failingStore fails while down is set.
type failingStore struct {
	Store
	mu   sync.Mutex
	down bool
}

func (s *failingStore) add(ctx context.Context, b *batch) error {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return errors.New("redis is down")
	}
	return s.Store.add(ctx, b)
}

// TestFailedFlushKept: a failed flush's counts are kept and merged with
// the next interval's until a flush lands; nothing is lost.
func TestFailedFlushKept(t *testing.T) {
	cfg := testConfig()
	store := &failingStore{Store: NewMemoryStore(cfg), down: true}
	rec := NewRecorder(cfg, store)
	ctx := t.Context()
	alice := Own(caller(t, "alice", ""))
	today := DayOf(time.Now())
	rec.Record(ctx, activation("alice", "t1", "first"))
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("flush to a down store succeeded")
	}
	rec.Record(ctx, activation("alice", "t1", "second"))
	rec.Record(ctx, activation("alice", "t1", "second"))
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("flush to a down store succeeded")
	}
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("flush to a down store succeeded")
	}
	if s := rec.Stats(); s.Lost != 0 || s.FlushFailures != 3 {
		t.Fatalf("stats %+v, want 3 failed flushes and nothing lost", s)
	}
	store.mu.Lock()
	store.down = false
	store.mu.Unlock()
	rec.Record(ctx, activation("alice", "t1", "third"))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := store.day(ctx, alice, today, false)
	want := map[string]int64{"activation|first|v1|grpc": 1, "activation|second|v1|grpc": 2, "activation|third|v1|grpc": 1}
	if !maps.Equal(d.Counts, want) {
		t.Fatalf("store holds %v, want %v", d.Counts, want)
	}
	if s := rec.Stats(); s.Entries != 0 {
		t.Fatalf("after the flush landed the recorder holds %d entries", s.Entries)
	}
}

// TestOutageBound: through a long outage the kept counts stay within
// MaxEntries: uses seen before go on counting, new ones past the bound
// are dropped (counted); a replica stopped during the outage counts what
// it kept as lost.
func TestOutageBound(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEntries = 100
	store := &failingStore{Store: NewMemoryStore(cfg), down: true}
	rec := NewRecorder(cfg, store)
	ctx := t.Context()
	for interval := range 5 {
		for i := range 40 {
			rec.Record(ctx, activation("alice", "t1", fmt.Sprint("skill-", interval*40+i)))
			rec.Record(ctx, activation("alice", "t1", "again"))
		}
		_ = rec.Flush(ctx)
		if s := rec.Stats(); s.Entries > cfg.MaxEntries {
			t.Fatalf("interval %d: holds %d entries, over the bound %d", interval, s.Entries, cfg.MaxEntries)
		}
	}
	s := rec.Stats()
	if s.Dropped == 0 || s.Recorded+s.Dropped != 400 || s.Lost != 0 {
		t.Fatalf("stats %+v: want some of the 400 events dropped at the bound, the rest recorded, none lost", s)
	}
	rec.Close()
	if after := rec.Stats(); after.Lost != s.Recorded {
		t.Fatalf("stopped during the outage: lost %d, want the %d kept", after.Lost, s.Recorded)
	}
}

// TestMemoryBound: a flood of distinct skills, users and queries holds at
// most MaxEntries; the rest is dropped and counted.
func TestMemoryBound(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEntries = 500
	rec := NewRecorder(cfg, NewMemoryStore(cfg))
	ctx := t.Context()
	for i := range 20000 {
		rec.Record(ctx, activation(fmt.Sprint("u", i), fmt.Sprint("t", i), fmt.Sprint("skill-", i)))
		rec.Record(ctx, Event{Kind: Search, Query: fmt.Sprint("query ", i), User: fmt.Sprint("u", i), Thread: "t", Results: []string{"a"}})
	}
	rec.mu.Lock()
	held := rec.cur.entries() + len(rec.threads)
	rec.mu.Unlock()
	s := rec.Stats()
	if held > cfg.MaxEntries || s.Entries > cfg.MaxEntries {
		t.Fatalf("holds %d entries (stats %d), over the bound %d", held, s.Entries, cfg.MaxEntries)
	}
	if s.Dropped == 0 || s.Recorded+s.Dropped != 40000 {
		t.Fatalf("stats %+v: want every event recorded or dropped, some dropped", s)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rec.Record(ctx, activation("late", "t", "late"))
	if got := rec.Stats().Dropped; got != s.Dropped {
		t.Fatalf("after a flush an event was dropped (%d drops, were %d)", got, s.Dropped)
	}
}

// TestSearchOutcomes: a query is counted normalized, with whether it found
// nothing and whether one of its results was activated next in the thread
// (once, and only for a result).
func TestSearchOutcomes(t *testing.T) {
	cfg := testConfig()
	store := NewMemoryStore(cfg)
	rec := NewRecorder(cfg, store)
	ctx := t.Context()
	rec.Record(ctx, Event{Kind: Search, Query: "  Fill   PDF\tForms ", User: "alice", Thread: "t1", Results: []string{"pdf", "docx"}})
	rec.Record(ctx, activation("alice", "t1", "docx"))
	rec.Record(ctx, activation("alice", "t1", "pdf")) // the search led somewhere once
	rec.Record(ctx, Event{Kind: Search, Query: "fill pdf forms", User: "alice", Thread: "t2", Results: []string{"pdf"}})
	rec.Record(ctx, activation("alice", "t2", "xlsx")) // not a result: led nowhere
	rec.Record(ctx, Event{Kind: Search, Query: "kubernetes", User: "alice", Thread: "t3"})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, store, nil)
	today := DayOf(time.Now())
	for _, lib := range []LibraryRef{Own(caller(t, "alice", "")), Organization()} {
		rep, err := r.Read(ctx, lib, today, today)
		if err != nil {
			t.Fatal(err)
		}
		want := []SearchUsage{{Query: "fill pdf forms", Searches: 2, Led: 1}, {Query: "kubernetes", Searches: 1, Empty: 1}}
		if lib == Organization() { // who searched is kept under a shared library only
			want[0].Users, want[1].Users = 1, 1
		}
		if fmt.Sprint(rep.Searches) != fmt.Sprint(want) {
			t.Errorf("%s: searches %+v, want %+v", lib, rep.Searches, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"  Fill\n PDF  ": "fill pdf",
		"":               "",
		"ÄBC  déf":       "äbc déf",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
	long := normalize(string(make([]byte, 0)) + fmt.Sprintf("%0*d", 5000, 0))
	if len(long) > maxQuery {
		t.Errorf("a long query is %d bytes, over %d", len(long), maxQuery)
	}
}

// TestTenants: each library's usage is its own; a caller names only its own
// library or a team it belongs to.
func TestTenants(t *testing.T) {
	cfg := testConfig()
	store := NewMemoryStore(cfg)
	rec := NewRecorder(cfg, store)
	ctx := t.Context()
	rec.Record(ctx, activation("alice", "t1", "alice-skill"))
	rec.Record(ctx, activation("bob", "t1", "bob-skill"))
	rec.Record(ctx, Event{Kind: Activation, Skill: "team-skill", Layer: skillview.LayerTeam + "red", User: "bob", Thread: "t1", Surface: "mcp"})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, store, nil)
	today := DayOf(time.Now())
	alice, bob := caller(t, "alice", ""), caller(t, "bob", "red")
	if _, ok := Team(alice, "red"); ok {
		t.Fatal("alice named team red's library without being a member")
	}
	red, ok := Team(bob, "red")
	if !ok {
		t.Fatal("bob could not name his team's library")
	}
	for lib, want := range map[LibraryRef]string{Own(alice): "alice-skill", Own(bob): "bob-skill", red: "team-skill"} {
		rep, err := r.Read(ctx, lib, today, today)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Skills) != 1 || rep.Skills[0].Skill != want || rep.Skills[0].Users != 1 {
			t.Errorf("%s reads %+v, want only %s", lib, rep.Skills, want)
		}
	}
	got, err := r.Recent(ctx, Own(alice), 7)
	if err != nil || len(got) != 1 || got["alice-skill"] != 1 {
		t.Errorf("Recent(alice) = %v, %v", got, err)
	}
}

// BenchmarkRecord is the hot path: an activation whose counters exist.
func BenchmarkRecord(b *testing.B) {
	cfg := testConfig()
	rec := NewRecorder(cfg, NewMemoryStore(cfg))
	e := activation("alice", "t1", "pdf")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rec.Record(ctx, e)
	}
}

// TestRecordAllocs: counting an activation whose counters exist allocates
// nothing.
func TestRecordAllocs(t *testing.T) {
	cfg := testConfig()
	rec := NewRecorder(cfg, NewMemoryStore(cfg))
	e := activation("alice", "t1", "pdf")
	ctx := context.Background()
	rec.Record(ctx, e)
	if n := testing.AllocsPerRun(100, func() { rec.Record(ctx, e) }); n != 0 {
		t.Errorf("Record allocates %v times per call, want 0", n)
	}
}

// TestRecentCached: Recent is read once per flush interval, then again.
func TestRecentCached(t *testing.T) {
	cfg := testConfig()
	store := NewMemoryStore(cfg)
	now := time.Now()
	rec := NewRecorder(cfg, store, withClock(func() time.Time { return now }))
	r := NewReader(cfg, store, nil)
	r.now = func() time.Time { return now }
	ctx := t.Context()
	alice := Own(caller(t, "alice", ""))
	read := func() int64 {
		t.Helper()
		got, err := r.Recent(ctx, alice, 7)
		if err != nil {
			t.Fatal(err)
		}
		return got["pdf"]
	}
	rec.Record(ctx, activation("alice", "t1", "pdf"))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := read(); n != 1 {
		t.Fatalf("Recent pdf = %d, want 1", n)
	}
	rec.Record(ctx, activation("alice", "t1", "pdf"))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := read(); n != 1 {
		t.Fatalf("within the flush interval Recent pdf = %d, want the kept 1", n)
	}
	now = now.Add(cfg.FlushInterval)
	if n := read(); n != 2 {
		t.Fatalf("after the flush interval Recent pdf = %d, want 2", n)
	}
}

// TestRollupInTheLoop: a started recorder rolls a finished day up into the
// bucket on its own, within the hour after the day's grace.
func TestRollupInTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		store := NewMemoryStore(cfg)
		bucket := memory.New()
		roots := layout.DefaultVersionRoots()
		roll := NewRollup(bucket, roots, store, cfg)
		rec := NewRecorder(cfg, store, WithRollup(roll))
		rec.Start()
		defer rec.Close()
		day := DayOf(time.Now())
		rec.Record(t.Context(), activation("alice", "t1", "pdf"))
		key := roots.UsageDay(layout.LibraryRef{User: "alice"}, day.String())
		time.Sleep(time.Until((day + 1).Start()))
		synctest.Wait()
		if _, err := bucket.Stat(t.Context(), key); !objstore.IsNotFound(err) {
			t.Fatalf("the day was rolled up before it ended (%v)", err)
		}
		time.Sleep(roll.grace() + rollupEvery + cfg.FlushInterval)
		synctest.Wait()
		got, err := roll.read(t.Context(), Own(caller(t, "alice", "")), day)
		if err != nil || got == nil || got.Counts["activation|pdf|v1|grpc"] != 1 {
			t.Fatalf("roll-up of %s: %+v, %v", day, got, err)
		}
	})
}

// BenchmarkRecordManyTenants is the many-tenants hot path: activations by
// 2,000 users of 300 skills, most of them first seen in the interval, so
// the aggregate grows (and is flushed, as every interval, to the store).
func BenchmarkRecordManyTenants(b *testing.B) {
	cfg := testConfig()
	rec := NewRecorder(cfg, NewMemoryStore(cfg))
	events := make([]Event, 1<<14)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range events {
		u := rng.IntN(2000)
		events[i] = activation(fmt.Sprintf("user-%d", u), fmt.Sprintf("t%d", u%7), fmt.Sprintf("skill-%d", rng.IntN(300)))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			rec.Record(ctx, events[i&(len(events)-1)])
			i++
		}
	})
}

// TestLateFlushRolledUpInTheLoop: counts a replica held through an outage
// that spanned its day's roll-up are rolled into that day at the flush
// interval after the flush that lands them, not an hour later.
func TestLateFlushRolledUpInTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		store := &failingStore{Store: NewMemoryStore(cfg)}
		roll := NewRollup(memory.New(), layout.DefaultVersionRoots(), store, cfg)
		rec := NewRecorder(cfg, store, WithRollup(roll))
		rec.Start()
		defer rec.Close()
		alice := Own(caller(t, "alice", ""))
		day := DayOf(time.Now())
		down := func(d bool) {
			store.mu.Lock()
			store.down = d
			store.mu.Unlock()
		}
		rolled := func() int64 {
			t.Helper()
			got, err := roll.read(t.Context(), alice, day)
			if err != nil || got == nil {
				t.Fatalf("roll-up of %s: %+v, %v", day, got, err)
			}
			return got.Counts["activation|pdf|v1|grpc"]
		}
		rec.Record(t.Context(), activation("alice", "t1", "pdf"))
		time.Sleep(cfg.FlushInterval)
		synctest.Wait()
		down(true)
		rec.Record(t.Context(), activation("alice", "t1", "pdf")) // held through the outage
		time.Sleep(time.Until((day + 1).Start()) + roll.grace() + rollupEvery + cfg.FlushInterval)
		synctest.Wait()
		if n := rolled(); n != 1 {
			t.Fatalf("rolled up during the outage with %d activations, want the 1 flushed", n)
		}
		down(false)
		time.Sleep(cfg.FlushInterval)
		synctest.Wait()
		if n := rolled(); n != 2 {
			t.Fatalf("a flush interval after the late flush landed the roll-up holds %d activations, want 2", n)
		}
		reader := NewReader(cfg, store, roll)
		rep, err := reader.Read(t.Context(), alice, day, day)
		if err != nil || len(rep.Days) != 1 || rep.Days[0].Activations != 2 {
			t.Fatalf("report of %s: %+v, %v; want 2 activations", day, rep.Days, err)
		}
	})
}
