package usage

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// search is user's search for query, as a member of teams.
func search(user, query string, teams ...string) Event {
	return Event{Kind: Search, Query: query, User: user, Teams: teams, Thread: "t1", Surface: "grpc"}
}

// searchers returns the distinct users lib's report counts for each query.
func searchers(t *testing.T, r *Reader, lib LibraryRef, from, to Day) map[string]int64 {
	t.Helper()
	rep, err := r.Read(t.Context(), lib, from, to)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64)
	for _, q := range rep.Searches {
		out[q.Query] = q.Users
	}
	return out
}

// TestQueryUsers: who searched a query is kept under the organization's
// and the searcher's teams' libraries (not the searcher's own), up to
// --usage.query-min-users, exactly: a user searching twice is one.
func TestQueryUsers(t *testing.T) {
	cfg := testConfig()
	cfg.QueryMinUsers = 3
	store := NewMemoryStore(cfg)
	rec := NewRecorder(cfg, store)
	ctx := t.Context()
	for _, u := range []string{"alice", "alice", "bob"} {
		rec.Record(ctx, search(u, "Acme Invoice", "legal"))
	}
	for _, u := range []string{"a", "b", "c", "d", "e"} {
		rec.Record(ctx, search(u, "pdf"))
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, store, nil)
	today := DayOf(time.Now())
	legal, _ := Team(caller(t, "alice", "legal"), "legal")
	for _, c := range []struct {
		lib  LibraryRef
		want map[string]int64
	}{
		{Organization(), map[string]int64{"acme invoice": 2, "pdf": 3}},
		{legal, map[string]int64{"acme invoice": 2}},
		{Own(caller(t, "alice", "")), map[string]int64{"acme invoice": 0}},
	} {
		if got := searchers(t, r, c.lib, today, today); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: users by query %v, want %v", c.lib, got, c.want)
		}
	}
}

// TestQueryUsersMergeInBatch: a failed flush's kept users and the next
// interval's merge (their union, within k).
func TestQueryUsersMergeInBatch(t *testing.T) {
	k := queryKey{libDay{Organization(), 1}, "q"}
	a, b := newBatch(), newBatch()
	a.queries[k] = &queryCount{n: 2, users: userset.Set{1, 2}}
	b.queries[k] = &queryCount{n: 3, users: userset.Set{2, 3, 4}}
	a.merge(b, 3)
	if q := a.queries[k]; q.n != 5 || fmt.Sprint(q.users) != "[1 2 3]" {
		t.Fatalf("merged %+v, want 5 searches by users 1 2 3 (k 3)", q)
	}
}

// TestJoinQueryUsers: a roll-up joins the users of a query as the union of
// the object's and the store's, within k; a join adding no user writes
// nothing.
func TestJoinQueryUsers(t *testing.T) {
	old := &dayRecord{Queries: map[string]queryRow{"q": {N: 2, Users: userset.Set{1, 2}}}}
	for _, c := range []struct {
		name string
		rec  queryRow
		k    int
		want string // the joined row; "" no change
	}{
		{"new user", queryRow{N: 1, Users: userset.Set{3}}, 5, "{N:2 Empty:0 Led:0 Users:[1 2 3]}"},
		{"late users past k", queryRow{N: 4, Users: userset.Set{3, 4, 5}}, 3, "{N:4 Empty:0 Led:0 Users:[1 2 3]}"},
		{"same users", queryRow{N: 1, Users: userset.Set{2}}, 5, ""},
		{"more searches", queryRow{N: 3, Users: userset.Set{1}}, 5, "{N:3 Empty:0 Led:0 Users:[1 2]}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := join(old, &dayRecord{Queries: map[string]queryRow{"q": c.rec}}, 100, c.k)
			got := ""
			if j != nil {
				got = fmt.Sprintf("%+v", j.Queries["q"])
			}
			if got != c.want {
				t.Errorf("joined %s, want %s", got, c.want)
			}
		})
	}
}

// TestRedisQueryUsers: replicas flushing the users of one query to Redis
// keep their union up to k (the script adds in one step, so neither's is
// lost); the day's roll-up keeps them after Redis is flushed, and a
// report's range unites the days': two users one day and one more the
// next reach k = 3. A query trimmed from the day's top queries takes its
// users with it.
func TestRedisQueryUsers(t *testing.T) {
	addr, bucket, _, cfg := rollupRig(t)
	cfg.QueryMinUsers, cfg.TopQueries = 3, 3
	store := newTestRedisStore(t, addr, cfg)
	ctx := t.Context()
	roots := layout.DefaultVersionRoots()
	org := Organization()
	d := DayOf(day0)
	yesterday := at(day0.Add(-24 * time.Hour))
	r1 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(yesterday))
	r2 := NewRecorder(cfg, newTestRedisStore(t, addr, cfg), withClock(yesterday))
	r1.Record(ctx, search("alice", "acme invoice"))
	r2.Record(ctx, search("bob", "acme invoice"))
	r2.Record(ctx, search("alice", "acme invoice"))
	for _, r := range []*Aggregator{r1, r2} {
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewRollup(bucket, roots, store, cfg).Run(ctx, day0); err != nil {
		t.Fatal(err)
	}
	flushDB(t, addr)
	r3 := NewRecorder(cfg, store, withClock(at(day0)))
	for _, e := range []Event{search("carol", "acme invoice"), search("alice", "acme invoice"), search("dave", "z")} {
		r3.Record(ctx, e)
	}
	for _, q := range []string{"x", "x", "y", "y"} {
		r3.Record(ctx, search("dave", q))
		r3.Record(ctx, search("erin", q))
	}
	if err := r3.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	reader := NewReader(cfg, store, NewRollup(bucket, roots, store, cfg))
	reader.now = at(day0)
	for _, c := range []struct {
		name     string
		from, to Day
		want     map[string]int64
	}{
		{"yesterday's roll-up, Redis flushed", d - 1, d - 1, map[string]int64{"acme invoice": 2}},
		{"today, z trimmed", d, d, map[string]int64{"acme invoice": 2, "x": 2, "y": 2}},
		{"both days", d - 1, d, map[string]int64{"acme invoice": 3, "x": 2, "y": 2}},
	} {
		if got := searchers(t, reader, org, c.from, c.to); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: users by query %v, want %v", c.name, got, c.want)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	keys, err := rc.Keys(ctx, "*{org}:"+d.String()+":qu").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("today's query users keys %v, %v", keys, err)
	}
	if got, _ := rc.HKeys(ctx, keys[0]).Result(); len(got) != 3 || slices.Contains(got, "z") {
		t.Errorf("query users kept for %v, want those of the top 3 queries", got)
	}
}

// TestRedisClusterQueryUsers: on Redis Cluster the script's keys share
// their library's slot: an organization's and a team's query users land.
func TestRedisClusterQueryUsers(t *testing.T) {
	addr := testserver.StartRedisCluster(t).Addr
	cfg := testConfig()
	cfg.QueryMinUsers = 2
	store := newRedisStoreOf(t, addr, true, cfg, nil)
	rec := NewRecorder(cfg, store, withClock(at(day0)))
	ctx := t.Context()
	for _, u := range []string{"alice", "bob", "carol"} {
		rec.Record(ctx, search(u, "nda", "legal"))
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	reader := NewReader(cfg, store, nil)
	reader.now = at(day0)
	legal, _ := Team(caller(t, "alice", "legal"), "legal")
	for _, lib := range []LibraryRef{Organization(), legal} {
		if got := searchers(t, reader, lib, DayOf(day0), DayOf(day0)); got["nda"] != 2 {
			t.Errorf("%s: users by query %v, want nda by 2 (k)", lib, got)
		}
	}
}
