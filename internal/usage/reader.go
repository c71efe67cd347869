package usage

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// Report is one library's usage over a range of days.
type Report struct {
	Library  LibraryRef
	From, To Day
	// Skills are the skills used in the range, most activated first.
	Skills []SkillUsage
	// Days are the totals of each day with any use, in order.
	Days []DayTotal
	// Searches are the queries counted under the library (the top
	// Config.TopQueries per day), most searched first.
	Searches []SearchUsage
}

// SkillUsage is one skill's use over the range.
type SkillUsage struct {
	Skill       string
	Activations int64
	FileReads   int64
	// Users and Threads are distinct over the range (HyperLogLog: within
	// about 1%).
	Users, Threads int64
	// Surfaces counts activations and file reads by surface ("grpc",
	// "json", "mcp", "vfs").
	Surfaces map[string]int64
	// Versions are the versions used, most activated first.
	Versions []VersionUsage
	// First and Last are the first and last days of use in the range.
	First, Last Day
}

// VersionUsage is the use of one version of a skill: its published
// version id, or its content digest.
type VersionUsage struct {
	Version     string
	Activations int64
	FileReads   int64
}

// DayTotal is a library's use on one day.
type DayTotal struct {
	Day         Day
	Activations int64
	FileReads   int64
	Searches    int64
	// Users and Threads are distinct on the day, across the library's
	// skills.
	Users, Threads int64
}

// SearchUsage is one normalized query's outcomes: how often it was
// searched, found nothing, and was followed in the same thread by an
// activation of one of its results (Searches-Led led nowhere).
type SearchUsage struct {
	Query    string
	Searches int64
	Empty    int64
	Led      int64
	// Users is how many distinct users searched it in the range, counted
	// under a team's or the organization's library up to
	// Config.QueryMinUsers (that many is "at least"); 0 under a user's.
	Users int64
}

// Reader reads a library's usage: recent days from the Store, finished
// days from the bucket's roll-ups (which outlive Redis).
type Reader struct {
	cfg    Config
	store  Store
	rollup *Rollup
	now    func() time.Time

	mu     sync.Mutex
	recent map[recentKey]recentEntry
}

// recentKey is Recent's answer for lib over days days until today; with
// days negated, the sum of those days but today.
type recentKey struct {
	lib   LibraryRef
	days  int
	today Day
}

type recentEntry struct {
	at     time.Time
	counts map[string]int64
}

// maxRecent bounds the libraries whose recent use a reader keeps.
const maxRecent = 4096

// NewReader returns the reader of store and of rollup's roll-ups (nil:
// the store alone).
func NewReader(cfg Config, store Store, rollup *Rollup) *Reader {
	return &Reader{cfg: cfg, store: store, rollup: rollup, now: time.Now, recent: make(map[recentKey]recentEntry)}
}

// QueryMinUsers is Config.QueryMinUsers: the distinct users a query needs
// before anyone but its searcher sees its text.
func (r *Reader) QueryMinUsers() int { return r.cfg.QueryMinUsers }

// maxDays is the longest range Read reads.
func (r *Reader) maxDays() int { return max(r.cfg.BucketRetentionDays, r.cfg.RedisRetentionDays) }

// Read reports lib's usage from day from to day to, both included. A range
// longer than the retention is cut to its last days.
func (r *Reader) Read(ctx context.Context, lib LibraryRef, from, to Day) (Report, error) {
	if lib.IsZero() {
		return Report{}, fmt.Errorf("%w: usage of no library", errkind.InvalidArgument)
	}
	if to < from {
		return Report{}, fmt.Errorf("%w: usage range ends before it starts", errkind.InvalidArgument)
	}
	if n := Day(r.maxDays()); to-from+1 > n {
		from = to - n + 1
	}
	rep := Report{Library: lib, From: from, To: to}
	skills := make(map[string]*SkillUsage)
	versions := make(map[string]map[string]*VersionUsage)
	users := make(map[string][]sketch)
	threads := make(map[string][]sketch)
	queries := make(map[string]*SearchUsage)
	searchers := make(map[string]userset.Set)
	for d := from; d <= to; d++ {
		rec, err := r.day(ctx, lib, d, true)
		if err != nil {
			return Report{}, err
		}
		if rec == nil {
			continue
		}
		total := DayTotal{Day: d, Users: rec.Users[""].N, Threads: rec.Threads[""].N}
		for f, n := range rec.Counts {
			kind, skill, version, surface, ok := parseField(f)
			if !ok {
				continue
			}
			su := skills[skill]
			if su == nil {
				su = &SkillUsage{Skill: skill, Surfaces: make(map[string]int64), First: d}
				skills[skill] = su
				versions[skill] = make(map[string]*VersionUsage)
			}
			su.Last = d
			vu := versions[skill][version]
			if vu == nil {
				vu = &VersionUsage{Version: version}
				versions[skill][version] = vu
			}
			switch kind {
			case Activation:
				su.Activations += n
				vu.Activations += n
				total.Activations += n
			case FileRead:
				su.FileReads += n
				vu.FileReads += n
				total.FileReads += n
			}
			su.Surfaces[surface] += n
		}
		for skill, sk := range rec.Users {
			users[skill] = append(users[skill], sk)
		}
		for skill, sk := range rec.Threads {
			threads[skill] = append(threads[skill], sk)
		}
		for q, row := range rec.Queries {
			su := queries[q]
			if su == nil {
				su = &SearchUsage{Query: q}
				queries[q] = su
			}
			su.Searches += row.N
			su.Empty += row.Empty
			su.Led += row.Led
			total.Searches += row.N
			if len(row.Users) > 0 {
				searchers[q] = userset.Union(r.cfg.QueryMinUsers, searchers[q], row.Users)
			}
		}
		rep.Days = append(rep.Days, total)
	}
	for skill, su := range skills {
		var err error
		if su.Users, err = r.distinct(ctx, lib, users[skill]); err != nil {
			return Report{}, err
		}
		if su.Threads, err = r.distinct(ctx, lib, threads[skill]); err != nil {
			return Report{}, err
		}
		for _, vu := range versions[skill] {
			su.Versions = append(su.Versions, *vu)
		}
		sort.Slice(su.Versions, func(i, j int) bool {
			a, b := su.Versions[i], su.Versions[j]
			if a.Activations != b.Activations {
				return a.Activations > b.Activations
			}
			return a.Version < b.Version
		})
		rep.Skills = append(rep.Skills, *su)
	}
	sort.Slice(rep.Skills, func(i, j int) bool {
		a, b := rep.Skills[i], rep.Skills[j]
		if a.Activations != b.Activations {
			return a.Activations > b.Activations
		}
		return a.Skill < b.Skill
	})
	for _, q := range queries {
		q.Users = int64(len(searchers[q.Query]))
		rep.Searches = append(rep.Searches, *q)
	}
	sort.Slice(rep.Searches, func(i, j int) bool {
		a, b := rep.Searches[i], rep.Searches[j]
		if a.Searches != b.Searches {
			return a.Searches > b.Searches
		}
		return a.Query < b.Query
	})
	if len(rep.Searches) > r.cfg.TopQueries {
		rep.Searches = rep.Searches[:r.cfg.TopQueries]
	}
	return rep, nil
}

// day reads lib's day d: its roll-up once the day is over, else (or when
// there is none yet) the store's, within its retention.
func (r *Reader) day(ctx context.Context, lib LibraryRef, d Day, sketches bool) (*dayRecord, error) {
	today := DayOf(r.now())
	if d > today {
		return nil, nil
	}
	if d < today && r.rollup != nil {
		rec, err := r.rollup.read(ctx, lib, d)
		if err != nil || rec != nil {
			return rec, err
		}
	}
	if d <= today-Day(r.cfg.RedisRetentionDays) {
		return nil, nil
	}
	return r.store.day(ctx, lib, d, sketches)
}

// distinct counts the members of sketches of several days: exactly from
// the in-process hashes, by Redis from HyperLogLogs; a mix (a deployment
// that added Redis) counts the busiest day.
func (r *Reader) distinct(ctx context.Context, lib LibraryRef, sks []sketch) (int64, error) {
	switch len(sks) {
	case 0:
		return 0, nil
	case 1:
		return sks[0].N, nil
	}
	var hlls [][]byte
	hashes := make(map[uint64]struct{})
	var busiest int64
	for _, s := range sks {
		busiest = max(busiest, s.N)
		if s.HLL != nil {
			hlls = append(hlls, s.HLL)
		}
		for _, h := range s.Hashes {
			hashes[h] = struct{}{}
		}
	}
	switch {
	case len(hlls) == len(sks):
		n, err := r.store.union(ctx, lib, hlls)
		if err != nil {
			return 0, err
		}
		return max(n, busiest), nil
	case len(hlls) == 0:
		return int64(len(hashes)), nil
	}
	return busiest, nil
}

// Recent returns how often each of lib's skills was activated over the
// last days days (today included), for ordering a listing by use. It is
// kept per library for a flush interval, and the finished days' sum for an
// hour, so a prompt block may call it on every request: a library costs a
// read of today's counts per flush interval and of its roll-ups per hour.
// On an error (Redis unavailable) the caller may order as if nothing was
// used.
func (r *Reader) Recent(ctx context.Context, lib LibraryRef, days int) (map[string]int64, error) {
	all, err := r.recentUses(ctx, lib, days)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int64, len(all)/2)
	for k, n := range all {
		if !strings.Contains(k, "\x00") {
			byName[k] = n
		}
	}
	return byName, nil
}

// recentUses is Recent's counts, plus each skill's by version under
// skillview.UseKey (Ranks: a name two folders of a library share is
// ordered by the version used).
func (r *Reader) recentUses(ctx context.Context, lib LibraryRef, days int) (map[string]int64, error) {
	days = min(max(days, 1), r.maxDays())
	now := r.now()
	today := DayOf(now)
	key := recentKey{lib, days, today}
	if counts, ok := r.cached(key, r.cfg.FlushInterval, now); ok {
		return counts, nil
	}
	pastKey := recentKey{lib, -days, today}
	past, ok := r.cached(pastKey, recentPastTTL, now)
	if !ok {
		past = make(map[string]int64)
		for d := today - Day(days) + 1; d < today; d++ {
			if err := r.addActivations(ctx, past, lib, d); err != nil {
				return nil, err
			}
		}
		r.keep(pastKey, past, now)
	}
	counts := make(map[string]int64, len(past))
	for s, n := range past {
		counts[s] = n
	}
	if err := r.addActivations(ctx, counts, lib, today); err != nil {
		return nil, err
	}
	r.keep(key, counts, now)
	return counts, nil
}

// recentPastTTL is how long Recent keeps the sum of a library's finished
// days: they change only by late flushes ("Late counts" in the operators' usage page).
const recentPastTTL = time.Hour

// addActivations adds lib's activations of day d to counts.
func (r *Reader) addActivations(ctx context.Context, counts map[string]int64, lib LibraryRef, d Day) error {
	rec, err := r.day(ctx, lib, d, false)
	if err != nil || rec == nil {
		return err
	}
	for f, n := range rec.Counts {
		if kind, skill, version, _, ok := parseField(f); ok && kind == Activation {
			counts[skill] += n
			counts[skillview.UseKey(skill, version)] += n
		}
	}
	return nil
}

// cached returns what keep kept under key within ttl.
func (r *Reader) cached(key recentKey, ttl time.Duration, now time.Time) (map[string]int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.recent[key]
	if !ok || now.Sub(e.at) >= ttl {
		return nil, false
	}
	return e.counts, true
}

// keep keeps counts under key, within maxRecent entries.
func (r *Reader) keep(key recentKey, counts map[string]int64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recent) >= maxRecent {
		clear(r.recent)
	}
	r.recent[key] = recentEntry{at: now, counts: counts}
}
