package usage

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// redisStore keeps the counts in Redis, shared by every replica. A
// library's day is a few keys under the deployment's prefix, all in the
// library's hash slot ({lib}), expiring after the retention:
//
//	{lib}:DAY:c          hash   "kind|skill|version|surface" → count (HINCRBY);
//	                            "#gen" flushes that added to the day, "#rolled" the #gen rolled up
//	{lib}:DAY:u:SKILL    HLL    distinct users ("" skill: any skill)
//	{lib}:DAY:t:SKILL    HLL    distinct threads
//	{lib}:DAY:q|qe|ql    zset   query → searches, empty results, led to an activation (top N kept)
//	{lib}:DAY:qu         hash   query → who searched it (userset.Encode, up to K), team's and org's only
//	days:DAY             set    the libraries with usage that day (for the roll-up)
//	{ls}:USER:THREAD     string a thread's last search (JSON), for Config.SearchTTL
//	{ls}:USER:THREAD:AT  string that search led somewhere (counted once across replicas)
type redisStore struct {
	client    redis.UniversalClient
	prefix    string
	top, k    int
	retention int
	searchTTL time.Duration
}

// NewRedisStore is the Store in Redis through client, under prefix (the
// deployment's key prefix and keyspace: cache.Redis.Commands).
func NewRedisStore(client redis.UniversalClient, prefix string, cfg Config) Store {
	return &redisStore{client: client, prefix: prefix, top: cfg.TopQueries, k: cfg.QueryMinUsers, retention: cfg.RedisRetentionDays, searchTTL: cfg.SearchTTL}
}

func (s *redisStore) base(lib LibraryRef, d Day) string {
	return s.prefix + "{" + lib.String() + "}:" + d.String() + ":"
}

func (s *redisStore) add(ctx context.Context, b *batch) error {
	if err := s.shareSearches(ctx, b); err != nil {
		return err
	}
	expire := make(map[string]Day)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.keepSearches(ctx, p, b)
		for ld := range b.libs {
			key := s.base(ld.lib, ld.day) + "c"
			p.HIncrBy(ctx, key, genField, 1)
			expire[key] = ld.day
		}
		for k, n := range b.counts {
			p.HIncrBy(ctx, s.base(k.lib, k.day)+"c", k.field(), n)
		}
		// One sketch per library, day, kind (users, threads) and skill: its
		// key built once, not once per member.
		type sketch struct {
			libDay
			threads bool
			skill   string
		}
		ids := make(map[sketch][]any)
		b.eachMember(func(k memberKey) {
			sk := sketch{k.libDay, k.thread != "", k.skill}
			ids[sk] = append(ids[sk], k.id())
		})
		for sk, members := range ids {
			space := "u:"
			if sk.threads {
				space = "t:"
			}
			key := s.base(sk.lib, sk.day) + space + sk.skill
			p.PFAdd(ctx, key, members...)
			expire[key] = sk.day
		}
		trim := make(map[string]bool)
		users := make(map[libDay][]any)
		for k, q := range b.queries {
			base := s.base(k.lib, k.day)
			if len(q.users) > 0 {
				users[k.libDay] = append(users[k.libDay], k.query, userset.Encode(q.users))
			}
			for _, z := range []struct {
				space string
				n     int64
			}{{"q", q.n}, {"qe", q.empty}, {"ql", q.led}} {
				if z.n == 0 {
					continue
				}
				p.ZIncrBy(ctx, base+z.space, float64(z.n), k.query)
				trim[base+z.space] = true
				expire[base+z.space] = k.day
			}
		}
		for key := range trim {
			p.ZRemRangeByRank(ctx, key, 0, int64(-s.top-1))
		}
		for ld, args := range users {
			base := s.base(ld.lib, ld.day)
			// Sent whole (EVAL, no script cache to miss): once per shared
			// library and day searched in the interval, a few at most.
			p.Eval(ctx, userset.AddScript, []string{base + "qu", base + "q"}, append([]any{s.k, s.top}, args...)...)
			expire[base+"qu"] = ld.day
		}
		for ld := range b.libs {
			key := s.prefix + "days:" + ld.day.String()
			p.SAdd(ctx, key, ld.lib.String())
			expire[key] = ld.day
		}
		for key, d := range expire {
			p.ExpireAt(ctx, key, (d + Day(s.retention) + 1).Start())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("usage: redis flush: %w", err)
	}
	return nil
}

func (s *redisStore) day(ctx context.Context, lib LibraryRef, d Day, withSketches bool) (*dayRecord, error) {
	base := s.base(lib, d)
	var counts *redis.MapStringStringCmd
	var zs [3]*redis.ZSliceCmd
	var users *redis.MapStringStringCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		counts = p.HGetAll(ctx, base+"c")
		users = p.HGetAll(ctx, base+"qu")
		for i, space := range []string{"q", "qe", "ql"} {
			zs[i] = p.ZRangeWithScores(ctx, base+space, 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("usage: redis read: %w", err)
	}
	r := &dayRecord{Day: d.String(), Library: lib.String(), Counts: map[string]int64{}, Users: map[string]sketch{}, Threads: map[string]sketch{}, Queries: map[string]queryRow{}}
	skills := map[string]bool{"": true}
	for f, v := range counts.Val() {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || f == rolledField {
			continue
		}
		if f == genField {
			r.Gen = n
			continue
		}
		r.Counts[f] = n
		if _, skill, _, _, ok := parseField(f); ok {
			skills[skill] = true
		}
	}
	for i, z := range zs {
		for _, m := range z.Val() {
			q, _ := m.Member.(string)
			row := r.Queries[q]
			switch i {
			case 0:
				row.N = int64(m.Score)
			case 1:
				row.Empty = int64(m.Score)
			case 2:
				row.Led = int64(m.Score)
			}
			r.Queries[q] = row
		}
	}
	for q, enc := range users.Val() {
		if row, ok := r.Queries[q]; ok {
			row.Users = userset.Decode(enc, s.k)
			r.Queries[q] = row
		}
	}
	if len(r.Counts) == 0 && len(r.Queries) == 0 {
		return nil, nil
	}
	if !withSketches {
		return r, nil
	}
	type read struct {
		skill  string
		thread bool
		raw    *redis.StringCmd
		n      *redis.IntCmd
	}
	var reads []read
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for skill := range skills {
			for _, thread := range []bool{false, true} {
				key := base + "u:" + skill
				if thread {
					key = base + "t:" + skill
				}
				reads = append(reads, read{skill, thread, p.Get(ctx, key), p.PFCount(ctx, key)})
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("usage: redis read: %w", err)
	}
	for _, rd := range reads {
		raw, err := rd.raw.Bytes()
		if err != nil {
			continue
		}
		sk := sketch{N: rd.n.Val(), HLL: raw}
		if rd.thread {
			r.Threads[rd.skill] = sk
		} else {
			r.Users[rd.skill] = sk
		}
	}
	return r, nil
}

func (s *redisStore) libraries(ctx context.Context, d Day) ([]LibraryRef, error) {
	names, err := s.client.SMembers(ctx, s.prefix+"days:"+d.String()).Result()
	if err != nil {
		return nil, fmt.Errorf("usage: redis read: %w", err)
	}
	out := make([]LibraryRef, 0, len(names))
	for _, n := range names {
		if l, ok := parseLibrary(n); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// The fields of a day's counts hash that are no counter (they hold no
// '|'): the day's generation, and the one its roll-up holds.
const (
	genField    = "#gen"
	rolledField = "#rolled"
)

func (s *redisStore) unrolled(ctx context.Context, d Day, libs []LibraryRef) ([]LibraryRef, error) {
	gens := make([]*redis.SliceCmd, len(libs))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, l := range libs {
			gens[i] = p.HMGet(ctx, s.base(l, d)+"c", genField, rolledField)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("usage: redis read: %w", err)
	}
	var out []LibraryRef
	for i, l := range libs {
		v := gens[i].Val()
		gen, _ := v[0].(string)
		rolled, ok := v[1].(string)
		g, _ := strconv.ParseInt(gen, 10, 64)
		r, _ := strconv.ParseInt(rolled, 10, 64)
		// A day never noted (or counted before generations were kept) is
		// rolled up: at worst its roll-up is read, found unchanged and noted.
		if !ok || g > r {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *redisStore) rolled(ctx context.Context, lib LibraryRef, d Day, gen int64) error {
	key := s.base(lib, d) + "c"
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, rolledField, gen)
		p.ExpireAt(ctx, key, (d + Day(s.retention) + 1).Start())
		return nil
	})
	if err != nil {
		return fmt.Errorf("usage: redis flush: %w", err)
	}
	return nil
}

// unionTTL bounds how long the copies union makes outlive a failed call.
const unionTTL = 30 * time.Second

// union copies the sketches into temporary keys in the library's slot and
// has Redis count their union.
func (s *redisStore) union(ctx context.Context, lib LibraryRef, hlls [][]byte) (int64, error) {
	if len(hlls) == 0 {
		return 0, nil
	}
	tmp := s.prefix + "{" + lib.String() + "}:tmp:" + rand.Text() + ":"
	keys := make([]string, len(hlls))
	var count *redis.IntCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, h := range hlls {
			keys[i] = tmp + strconv.Itoa(i)
			p.Set(ctx, keys[i], h, unionTTL)
		}
		count = p.PFCount(ctx, keys...)
		p.Unlink(ctx, keys...)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("usage: redis read: %w", err)
	}
	return count.Val(), nil
}

// remoteSearch is a thread's last search as Redis keeps it for the other
// replicas, for Config.SearchTTL.
type remoteSearch struct {
	At      int64    `json:"at"` // Unix nanoseconds
	Day     Day      `json:"day"`
	Query   string   `json:"q"`
	Libs    []string `json:"libs"`
	Results []string `json:"r"`
}

func (s *redisStore) shared() bool { return true }

// searchBatch is how many threads' last searches one MGET reads.
const searchBatch = 1024

// searchKey is a thread's last search. Every thread's is in one hash slot
// ({ls}) so a flush reads those of its threads in one MGET on Redis
// Cluster too; they are small and expire after Config.SearchTTL.
func (s *redisStore) searchKey(tk threadKey) string {
	return s.prefix + "{ls}:" + tk.user + ":" + tk.thread
}

// creditKey marks a search as having led somewhere, so the replicas credit
// it once.
func (s *redisStore) creditKey(tk threadKey, at int64) string {
	return s.searchKey(tk) + ":" + strconv.FormatInt(at, 10)
}

// shareSearches credits the searches other replicas made with the
// activations of b in their threads, adding to b's queries, and marks the
// searches credited here; it returns the threads' last searches of b to
// keep for the others.
func (s *redisStore) shareSearches(ctx context.Context, b *batch) error {
	if len(b.acts) == 0 && len(b.credited) == 0 {
		return nil
	}
	// The threads' last searches are read in one round trip, by MGET of
	// searchBatch keys at a time (they share the {ls} slot), not a GET
	// per thread.
	threads := make(map[threadKey]int)
	keys := make([]string, 0, len(b.acts))
	for k := range b.acts {
		if _, ok := threads[k.threadKey]; !ok {
			threads[k.threadKey] = len(keys)
			keys = append(keys, s.searchKey(k.threadKey))
		}
	}
	var gets []*redis.SliceCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for tk, at := range b.credited {
			p.Set(ctx, s.creditKey(tk, at.UnixNano()), "1", s.searchTTL)
		}
		for i := 0; i < len(keys); i += searchBatch {
			gets = append(gets, p.MGet(ctx, keys[i:min(i+searchBatch, len(keys))]...))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("usage: redis flush: %w", err)
	}
	found := make(map[threadKey]remoteSearch)
	for k := range b.acts {
		i := threads[k.threadKey]
		raw, _ := gets[i/searchBatch].Val()[i%searchBatch].(string)
		var rs remoteSearch
		if raw == "" || json.Unmarshal([]byte(raw), &rs) != nil || b.at.Sub(time.Unix(0, rs.At)) > s.searchTTL || !slices.Contains(rs.Results, k.skill) {
			continue
		}
		found[k.threadKey] = rs
	}
	if len(found) == 0 {
		return nil
	}
	marks := make(map[threadKey]*redis.BoolCmd, len(found))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for tk, rs := range found {
			marks[tk] = p.SetNX(ctx, s.creditKey(tk, rs.At), "1", s.searchTTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("usage: redis flush: %w", err)
	}
	for tk, rs := range found {
		if !marks[tk].Val() {
			continue
		}
		for _, name := range rs.Libs {
			lib, ok := parseLibrary(name)
			if !ok {
				continue
			}
			k := queryKey{libDay{lib, rs.Day}, rs.Query}
			q := b.queries[k]
			if q == nil {
				q = &queryCount{}
				b.queries[k] = q
				b.libs[k.libDay] = struct{}{}
			}
			q.led++
		}
	}
	// Credited now: a retry of this batch must not credit them again
	// (their marks are set).
	clear(b.acts)
	return nil
}

// keepSearches queues the threads' last searches of b for the other
// replicas.
func (s *redisStore) keepSearches(ctx context.Context, p redis.Pipeliner, b *batch) {
	for tk, ls := range b.searched {
		rs := remoteSearch{At: ls.at.UnixNano(), Day: ls.day, Query: ls.query}
		for _, l := range ls.libs {
			if !l.IsZero() {
				rs.Libs = append(rs.Libs, l.String())
			}
		}
		for _, r := range ls.results {
			if r != "" {
				rs.Results = append(rs.Results, r)
			}
		}
		raw, err := json.Marshal(rs)
		if err != nil {
			continue
		}
		p.Set(ctx, s.searchKey(tk), raw, s.searchTTL)
	}
}
