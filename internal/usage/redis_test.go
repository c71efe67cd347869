package usage

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// redisStore connects a replica's usage store to the Redis at addr, as the
// binary does (cache.Redis.Commands), under keyspace.
func newTestRedisStore(t testing.TB, addr string, cfg Config) Store {
	t.Helper()
	return newCountedRedisStore(t, addr, cfg, nil)
}

// newCountedRedisStore is newTestRedisStore whose commands and round trips
// hook counts (nil: none).
func newCountedRedisStore(t testing.TB, addr string, cfg Config, hook *commandCounter) Store {
	t.Helper()
	return newRedisStoreOf(t, addr, false, cfg, hook)
}

// newRedisStoreOf is newCountedRedisStore on a Redis Cluster when cluster.
func newRedisStoreOf(t testing.TB, addr string, cluster bool, cfg Config, hook *commandCounter) Store {
	t.Helper()
	rc := cache.DefaultConfig().Redis
	rc.Addrs, rc.Cluster = []string{addr}, cluster
	rc.Keyspace = cache.NewKeyspace("usage-test")
	rc.DialTimeout, rc.ReadTimeout, rc.WriteTimeout, rc.PoolTimeout = 2*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	red, err := cache.NewRedis(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = red.Close() })
	client, prefix := red.Commands("usage")
	if hook != nil {
		client.AddHook(hook)
	}
	return NewRedisStore(client, prefix, cfg)
}

// commandCounter is a go-redis hook counting the commands a client sends,
// by name, and its round trips (a command alone or a pipeline).
type commandCounter struct {
	mu     sync.Mutex
	trips  int
	byName map[string]int
}

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.count(cmds)
		return next(ctx, cmds)
	}
}

func (h *commandCounter) count(cmds []redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byName == nil {
		h.byName = make(map[string]int)
	}
	for _, c := range cmds {
		switch c.Name() {
		case "hello", "client": // a new connection's handshake
			return
		}
		h.byName[c.Name()]++
	}
	h.trips++
}

// take returns the round trips and the commands by name counted since the
// last take.
func (h *commandCounter) take() (trips, cmds int, byName map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	trips, byName = h.trips, h.byName
	for _, n := range byName {
		cmds += n
	}
	h.trips, h.byName = 0, nil
	return trips, cmds, byName
}

// at returns a clock stopped at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// day0 is the day the integration tests count on, at noon: today, since
// Redis expires the keys by its own clock.
var day0 = DayOf(time.Now()).Start().Add(12 * time.Hour)

// TestRedisReplicasMerge: two replicas flushing to one Redis add up to the
// exact counts, and their users and threads are counted once each.
func TestRedisReplicasMerge(t *testing.T) {
	addr := testserver.StartRedis(t).Addr
	cfg := testConfig()
	ctx := t.Context()
	r1 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(at(day0)))
	r2 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(at(day0)))
	for range 3 {
		r1.Record(ctx, activation("alice", "t1", "pdf"))
	}
	r1.Record(ctx, Event{Kind: FileRead, Skill: "pdf", Layer: "user", Version: "v1", File: "forms.md", User: "alice", Thread: "t1", Surface: "vfs"})
	for range 2 {
		r2.Record(ctx, activation("alice", "t1", "pdf"))
	}
	r2.Record(ctx, Event{Kind: Activation, Skill: "pdf", Layer: "user", Version: "v2", User: "alice", Thread: "t2", Surface: "mcp"})
	for _, r := range []*Aggregator{r1, r2} {
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reader := NewReader(cfg, newTestRedisStore(t, addr, cfg), nil)
	reader.now = at(day0)
	d := DayOf(day0)
	rep, err := reader.Read(ctx, Own(caller(t, "alice", "")), d, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skills) != 1 {
		t.Fatalf("skills %+v, want pdf alone", rep.Skills)
	}
	got := rep.Skills[0]
	want := SkillUsage{Skill: "pdf", Activations: 6, FileReads: 1, Users: 1, Threads: 2, Surfaces: map[string]int64{"grpc": 5, "vfs": 1, "mcp": 1},
		Versions: []VersionUsage{{"v1", 5, 1}, {"v2", 1, 0}}, First: d, Last: d}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pdf's usage\n got %+v\nwant %+v", got, want)
	}
	if len(rep.Days) != 1 || rep.Days[0].Activations != 6 || rep.Days[0].Users != 1 || rep.Days[0].Threads != 2 {
		t.Fatalf("days %+v", rep.Days)
	}
}

// rollupRig starts a Redis and a MinIO bucket for a roll-up test: the
// Redis's address, the bucket, a usage store in the Redis, and its config.
func rollupRig(t *testing.T) (string, objstore.Bucket, Store, Config) {
	addr := testserver.StartRedis(t).Addr
	minio := testserver.StartMinIO(t)
	cfg := testConfig()
	return addr, s3.NewWithClient(minio.Client(t), minio.NewBucket(t)), newTestRedisStore(t, addr, cfg), cfg
}

// flushDB empties the Redis at addr: Redis lost.
func flushDB(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRollupOutlivesRedis: finished days are rolled up into the bucket
// once (a second replica's roll-up writes nothing), read back after Redis
// is flushed, distinct users merged across days; roll-ups past the
// bucket's retention are swept.
func TestRollupOutlivesRedis(t *testing.T) {
	addr, bucket, store, cfg := rollupRig(t)
	ctx := t.Context()
	roots := layout.DefaultVersionRoots()
	org := Organization()
	d1 := DayOf(day0)
	for i, now := range []time.Time{day0.Add(-24 * time.Hour), day0} {
		rec := NewRecorder(cfg, store, withClock(at(now)))
		for _, user := range []string{"alice", fmt.Sprint("user", i)} {
			e := activation(user, "t1", "pdf")
			e.Layer = skillview.LayerShared
			rec.Record(ctx, e)
		}
		rec.Record(ctx, Event{Kind: Search, Query: "Nothing Here", User: "alice", Thread: "t9"})
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	old := roots.UsageDay(org.Layout(), (d1 - Day(cfg.BucketRetentionDays) - 5).String())
	if _, err := bucket.Put(ctx, old, strings.NewReader("{}"), 2, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	next := day0.Add(24 * time.Hour)
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil {
		t.Fatal(err)
	}
	key := roots.UsageDay(org.Layout(), d1.String())
	first, err := bucket.Stat(ctx, key)
	if err != nil {
		t.Fatalf("no roll-up at %s: %v", key, err)
	}
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil { // another replica
		t.Fatal(err)
	}
	if again, _ := bucket.Stat(ctx, key); again.ETag != first.ETag {
		t.Fatal("a second roll-up rewrote the day")
	}
	if _, err := bucket.Stat(ctx, old); !objstore.IsNotFound(err) {
		t.Fatalf("a roll-up past the retention was kept (%v)", err)
	}

	flushDB(t, addr)
	reader := NewReader(cfg, store, NewRollup(bucket, roots, store, cfg))
	reader.now = at(next)
	rep, err := reader.Read(ctx, org, d1-1, d1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skills) != 1 || rep.Skills[0].Activations != 4 || rep.Skills[0].Users != 3 || rep.Skills[0].First != d1-1 || rep.Skills[0].Last != d1 {
		t.Fatalf("after FLUSHDB the roll-ups read %+v, want pdf: 4 activations by 3 users over both days", rep.Skills)
	}
	if len(rep.Days) != 2 || rep.Days[1].Users != 2 {
		t.Fatalf("days %+v", rep.Days)
	}
	if len(rep.Searches) != 1 || rep.Searches[0] != (SearchUsage{Query: "nothing here", Searches: 2, Empty: 2, Users: 1}) {
		t.Fatalf("searches %+v", rep.Searches)
	}
	recent, err := reader.Recent(ctx, org, 7)
	if err != nil || recent["pdf"] != 4 {
		t.Fatalf("Recent = %v, %v; want pdf 4", recent, err)
	}
}

// TestRedisOutage: while Redis is down Record goes on (no I/O) and a
// failed flush's counts are kept; once Redis is back they all arrive.
func TestRedisOutage(t *testing.T) {
	red := testserver.StartRestartableRedis(t)
	cfg := testConfig()
	ctx := t.Context()
	store := newTestRedisStore(t, red.Addr, cfg)
	rec := NewRecorder(cfg, store, withClock(at(day0)))
	alice := Own(caller(t, "alice", ""))
	red.Stop(t)
	rec.Record(ctx, activation("alice", "t1", "early"))
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("a flush to a stopped Redis succeeded")
	}
	for range 100 {
		rec.Record(ctx, activation("alice", "t1", "kept"))
	}
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("a flush to a stopped Redis succeeded")
	}
	if s := rec.Stats(); s.Recorded != 101 || s.Lost != 0 {
		t.Fatalf("stats %+v: want 101 recorded, none lost", s)
	}
	red.Restart(t)
	rec.Record(ctx, activation("alice", "t1", "kept"))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rec2, err := store.day(context.Background(), alice, DayOf(day0), false)
	if err != nil {
		t.Fatal(err)
	}
	if rec2 == nil || len(rec2.Counts) != 2 || rec2.Counts["activation|kept|v1|grpc"] != 101 || rec2.Counts["activation|early|v1|grpc"] != 1 {
		t.Fatalf("after the outage Redis holds %+v, want kept: 101 and the first interval's early: 1", rec2)
	}
}

// TestRedisSearchAcrossReplicas: a search made through one replica and the
// activation of one of its results through another count as a search that
// led somewhere, once, however many replicas see activations.
func TestRedisSearchAcrossReplicas(t *testing.T) {
	addr := testserver.StartRedis(t).Addr
	cfg := testConfig()
	ctx := t.Context()
	store := newTestRedisStore(t, addr, cfg)
	r1 := NewRecorder(cfg, store, withClock(at(day0)))
	r2 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(at(day0.Add(time.Minute))))
	r3 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(at(day0.Add(2*time.Minute))))
	r1.Record(ctx, Event{Kind: Search, Query: "PDF forms", User: "alice", Thread: "t1", Results: []string{"pdf"}})
	r1.Record(ctx, Event{Kind: Search, Query: "spreadsheets", User: "alice", Thread: "t2", Results: []string{"xlsx"}})
	r1.Record(ctx, activation("alice", "t2", "xlsx")) // credited here: no replica credits it again
	if err := r1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Aggregator{r2, r3} {
		r.Record(ctx, activation("alice", "t1", "docx")) // not a result
		r.Record(ctx, activation("alice", "t1", "pdf"))
		r.Record(ctx, activation("alice", "t2", "xlsx"))
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reader := NewReader(cfg, store, nil)
	reader.now = at(day0)
	d := DayOf(day0)
	rep, err := reader.Read(ctx, Organization(), d, d)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchUsage{{Query: "pdf forms", Searches: 1, Led: 1, Users: 1}, {Query: "spreadsheets", Searches: 1, Led: 1, Users: 1}}
	if fmt.Sprint(rep.Searches) != fmt.Sprint(want) {
		t.Fatalf("searches %+v, want %+v", rep.Searches, want)
	}
}

// BenchmarkFlushRedis is what a flush costs the replica per event it
// carries: an interval of random-user activations (2,000 users, 300
// shared and 5 own skills each, 7 threads a user), sent to a real
// redis-server. With BenchmarkRecordManyTenants it is what counting a use
// costs in all, off the call for this part.
func BenchmarkFlushRedis(b *testing.B) {
	red := testserver.SharedRedis(b)
	cfg := testConfig()
	hook := &commandCounter{}
	store := newCountedRedisStore(b, red.Addr, cfg, hook)
	rng := rand.New(rand.NewPCG(1, 2))
	const events = 50_000 // 10 s of bench-load's random-user GetSkill
	var trips, cmds, gets int
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		rec := NewRecorder(cfg, store)
		for range events {
			u := rng.IntN(2000)
			e := activation(fmt.Sprintf("user-%d", u), fmt.Sprintf("t%d", u%7), fmt.Sprintf("skill-%d", rng.IntN(300)))
			if rng.IntN(60) == 0 {
				e.Skill = fmt.Sprintf("own-%d", rng.IntN(5))
			} else {
				e.Layer = skillview.LayerShared
			}
			rec.Record(b.Context(), e)
		}
		hook.take()
		b.StartTimer()
		if err := rec.Flush(b.Context()); err != nil {
			b.Fatal(err)
		}
		n, c, by := hook.take()
		trips, cmds, gets = trips+n, cmds+c, gets+by["get"]+by["mget"]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	// What a flush asks of Redis: its round trips, its commands, and of
	// them the reads of other replicas' searches (GET, MGET).
	b.ReportMetric(float64(trips)/float64(b.N), "trips/flush")
	b.ReportMetric(float64(cmds)/float64(b.N), "cmds/flush")
	b.ReportMetric(float64(gets)/float64(b.N), "search-reads/flush")
}

// TestRedisSearchCreditRoundTrips: a flush of activations in threads with
// no search of its own looks for the other replicas' searches in one round
// trip, one MGET per searchBatch threads (was a GET per thread), and
// still credits the search another replica made.
func TestRedisSearchCreditRoundTrips(t *testing.T) {
	addr := testserver.StartRedis(t).Addr
	cfg := testConfig()
	ctx := t.Context()
	hook := &commandCounter{}
	r1 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(at(day0)))
	r2 := NewRecorder(cfg, newCountedRedisStore(t, addr, cfg, hook), withClock(at(day0.Add(time.Minute))))
	r1.Record(ctx, Event{Kind: Search, Query: "PDF forms", User: "alice", Thread: "t7", Results: []string{"pdf"}})
	if err := r1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const threads = 3000
	for i := range threads {
		r2.Record(ctx, activation("alice", fmt.Sprint("t", i), "pdf"))
	}
	hook.take()
	if err := r2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	trips, cmds, byName := hook.take()
	t.Logf("flush of %d threads' activations: %d round trips, %d commands %v", threads, trips, cmds, byName)
	if want := (threads + searchBatch - 1) / searchBatch; byName["get"] != 0 || byName["mget"] != want {
		t.Errorf("searches read by %d GETs and %d MGETs, want %d MGETs", byName["get"], byName["mget"], want)
	}
	if trips > 3 { // the searches read, the credit marked, the counts
		t.Errorf("%d round trips, want at most 3", trips)
	}
	reader := NewReader(cfg, newTestRedisStore(t, addr, cfg), nil)
	reader.now = at(day0)
	rep, err := reader.Read(ctx, Organization(), DayOf(day0), DayOf(day0))
	if err != nil {
		t.Fatal(err)
	}
	if want := []SearchUsage{{Query: "pdf forms", Searches: 1, Led: 1, Users: 1}}; fmt.Sprint(rep.Searches) != fmt.Sprint(want) {
		t.Fatalf("searches %+v, want %+v", rep.Searches, want)
	}
}

// racingBucket runs before once, ahead of the first rewrite (a write not
// If-None-Match) it is asked for: another replica's roll-up of the same
// day landing between this one's read and its write.
type racingBucket struct {
	objstore.Bucket
	once   sync.Once
	before func()
}

func (b *racingBucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if !opts.IfNoneMatch {
		b.once.Do(b.before)
	}
	return b.Bucket.Put(ctx, key, r, size, opts)
}

// TestLateFlushAfterRollup: counts of a day flushed after the day was
// rolled up (replicas that held them through a Redis outage) land in the
// day's roll-up and its report, every replica's, when two roll-ups of the
// day race; after Redis loses the day, a late flush adds to its roll-up
// and takes nothing from it; a roll-up with nothing new writes nothing.
func TestLateFlushAfterRollup(t *testing.T) {
	addr, bucket, store, cfg := rollupRig(t)
	ctx := t.Context()
	roots := layout.DefaultVersionRoots()
	org := Organization()
	d := DayOf(day0)
	next := day0.Add(24 * time.Hour)
	use := func(user, skill string) Event {
		e := activation(user, "t1", skill)
		e.Layer = skillview.LayerShared
		return e
	}
	// late is a replica that counted e on day0 and flushes it the next
	// day, after the day's roll-up.
	late := func(e Event) {
		t.Helper()
		clock := day0
		rec := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(func() time.Time { return clock }), WithRollup(NewRollup(bucket, roots, store, cfg)))
		rec.Record(ctx, e)
		clock = next
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if !rec.late.Load() {
			t.Fatal("a flush to a day rolled up did not ask for a roll-up")
		}
	}
	report := func() map[string]SkillUsage {
		t.Helper()
		reader := NewReader(cfg, store, NewRollup(bucket, roots, store, cfg))
		reader.now = at(next)
		rep, err := reader.Read(ctx, org, d, d)
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]SkillUsage)
		for _, su := range rep.Skills {
			out[su.Skill] = su
		}
		return out
	}

	first := NewRecorder(cfg, store, withClock(at(day0)))
	first.Record(ctx, use("alice", "pdf"))
	first.Record(ctx, use("alice", "pdf"))
	if err := first.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil {
		t.Fatal(err)
	}
	late(use("bob", "pdf"))
	late(use("carol", "pdf"))
	// Replica A reads the day; before it writes, dave's count is flushed
	// and replica B rolls the day up with it: A's write is refused and
	// joins B's roll-up instead of replacing it.
	racing := &racingBucket{Bucket: bucket}
	raced := false
	racing.before = func() {
		raced = true
		late(use("dave", "pdf"))
		if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewRollup(racing, roots, store, cfg).Run(ctx, next); err != nil || !raced {
		t.Fatalf("racing roll-up: %v (raced %v)", err, raced)
	}
	if got := report()["pdf"]; got.Activations != 5 || got.Users != 4 {
		t.Fatalf("pdf's day after late flushes: %+v, want 5 activations by 4 users", got)
	}

	flushDB(t, addr)
	late(use("erin", "docx"))
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got := report(); got["pdf"].Activations != 5 || got["docx"].Activations != 1 {
		t.Fatalf("after Redis lost the day and a late flush: %+v, want pdf 5 and docx 1", got)
	}
	key := roots.UsageDay(org.Layout(), d.String())
	before, err := bucket.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, next); err != nil {
		t.Fatal(err)
	}
	if after, _ := bucket.Stat(ctx, key); after.ETag != before.ETag {
		t.Fatal("a roll-up with nothing new rewrote the day")
	}
}
