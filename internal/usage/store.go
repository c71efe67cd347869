package usage

import (
	"context"
	"hash/maphash"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// A batch is what one flush sends: the counts a replica aggregated over an
// interval.
type batch struct {
	counts map[counterKey]int64
	// members are the uses by a user (in a thread, when known) of a
	// skill; eachMember makes them the sets the stores count.
	members map[memberKey]struct{}
	queries map[queryKey]*queryCount
	libs    map[libDay]struct{}
	// searched are the threads' last searches made in the interval, acts
	// the activations in threads whose last search this replica does not
	// know: a shared store matches them across replicas.
	searched map[threadKey]lastSearch
	acts     map[actKey]struct{}
	credited map[threadKey]time.Time // searches (by when) credited here
	events   int64                   // events counted in it, reported as lost if it is dropped
	at       time.Time               // when it was flushed
}

// actKey is an activation of a skill in a thread.
type actKey struct {
	threadKey
	skill string
}

func newBatch() *batch {
	return &batch{
		counts:   make(map[counterKey]int64),
		members:  make(map[memberKey]struct{}),
		queries:  make(map[queryKey]*queryCount),
		libs:     make(map[libDay]struct{}),
		searched: make(map[threadKey]lastSearch),
		acts:     make(map[actKey]struct{}),
		credited: make(map[threadKey]time.Time),
	}
}

func (b *batch) entries() int {
	return len(b.counts) + len(b.members) + len(b.queries) + len(b.searched) + len(b.acts) + len(b.credited)
}

func (b *batch) empty() bool { return b.entries() == 0 }

// merge adds o into b (a retried batch and the next interval's), each
// query's users up to most.
func (b *batch) merge(o *batch, most int) {
	for k, n := range o.counts {
		b.counts[k] += n
	}
	for k := range o.members {
		b.members[k] = struct{}{}
	}
	for k, q := range o.queries {
		if p := b.queries[k]; p != nil {
			p.n, p.empty, p.led = p.n+q.n, p.empty+q.empty, p.led+q.led
			p.users = userset.Union(most, p.users, q.users)
		} else {
			b.queries[k] = q
		}
	}
	for k := range o.libs {
		b.libs[k] = struct{}{}
	}
	for k, ls := range o.searched {
		if p, ok := b.searched[k]; !ok || p.at.Before(ls.at) {
			b.searched[k] = ls
		}
	}
	for k := range o.acts {
		b.acts[k] = struct{}{}
	}
	for k, at := range o.credited {
		b.credited[k] = at
	}
	b.events += o.events
}

type libDay struct {
	lib LibraryRef
	day Day
}

// counterKey is one counter: a kind of use of one version of a skill of a
// library, through one surface, on one day.
type counterKey struct {
	libDay
	kind                    Kind
	skill, version, surface string
}

// field is the counter's name within its library's day.
func (k counterKey) field() string {
	return string(k.kind) + "|" + k.skill + "|" + k.version + "|" + k.surface
}

// parseField is field's inverse.
func parseField(f string) (kind Kind, skill, version, surface string, ok bool) {
	parts := strings.Split(f, "|")
	if len(parts) != 4 {
		return "", "", "", "", false
	}
	return Kind(parts[0]), parts[1], parts[2], parts[3], true
}

// memberKey is one user, or one thread of a user when thread is set (a
// thread ID is the user's own), seen using a skill ("" for any skill of
// the library) on a day.
type memberKey struct {
	libDay
	skill, user, thread string
}

// eachMember calls f with every member the batch's uses make: a use (one
// user, skill and thread) is a member of the skill's users and of the
// library's, and with a thread of the skill's threads and the library's.
// A member may come more than once (a user of two skills is the
// library's user twice): the sets it is added to keep one, and checking
// here would cost more than adding it again.
func (b *batch) eachMember(f func(memberKey)) {
	for k := range b.members {
		f(memberKey{libDay: k.libDay, skill: k.skill, user: k.user})
		f(memberKey{libDay: k.libDay, user: k.user})
		if k.thread != "" {
			f(k)
			f(memberKey{libDay: k.libDay, user: k.user, thread: k.thread})
		}
	}
}

// id is the member as a sketch holds it.
func (k memberKey) id() string {
	if k.thread == "" {
		return k.user
	}
	return k.user + "\x00" + k.thread
}

// queryKey is one normalized query searched on a day, counted under a
// library.
type queryKey struct {
	libDay
	query string
}

// queryCount is a query's counts, and under a shared library the users
// who searched it (up to Config.QueryMinUsers: at most that many words).
type queryCount struct {
	n, empty, led int64
	users         userset.Set
}

// dayRecord is one library's usage on one day, as a store reads it back
// and as the daily roll-up keeps it in the bucket (JSON).
type dayRecord struct {
	Day     string              `json:"day"`
	Library string              `json:"library"`
	Counts  map[string]int64    `json:"counts"`            // counterKey.field → count
	Users   map[string]sketch   `json:"users,omitempty"`   // skill ("" any) → distinct users
	Threads map[string]sketch   `json:"threads,omitempty"` // skill ("" any) → distinct threads
	Queries map[string]queryRow `json:"queries,omitempty"` // normalized query → its outcomes
	// Gen is how many flushes had added to the day in the store when it
	// was read: the roll-up notes in the store the one it wrote, and a day
	// whose Gen grew past it (a late flush) is rolled up again.
	Gen int64 `json:"-"`
}

// sketch is a set of distinct users or threads: a Redis HyperLogLog's bytes
// (mergeable by Redis across days), or in process the members' hashes.
type sketch struct {
	N      int64    `json:"n"`
	HLL    []byte   `json:"hll,omitempty"`
	Hashes []uint64 `json:"hashes,omitempty"`
}

// queryRow is how often a query was searched, found nothing, and was
// followed by an activation of one of its results in the same thread.
// Under a shared library, Users are who searched it (Config.QueryMinUsers
// of them at most).
type queryRow struct {
	N     int64       `json:"n"`
	Empty int64       `json:"empty,omitempty"`
	Led   int64       `json:"led,omitempty"`
	Users userset.Set `json:"users,omitempty"`
}

// Store is where flushed counts live between flushes and the daily
// roll-up: Redis, shared by the replicas, or this process's memory.
type Store interface {
	// add adds a batch, keeping each library's day for the retention.
	add(ctx context.Context, b *batch) error
	// day reads one library's day, its sketches too when asked; nil when
	// nothing was counted.
	day(ctx context.Context, lib LibraryRef, d Day, sketches bool) (*dayRecord, error)
	// libraries lists the libraries with usage on d.
	libraries(ctx context.Context, d Day) ([]LibraryRef, error)
	// unrolled returns those of libs whose day d changed since rolled
	// noted it rolled up (or that it never noted).
	unrolled(ctx context.Context, d Day, libs []LibraryRef) ([]LibraryRef, error)
	// rolled notes that lib's day d is rolled up as of generation gen.
	rolled(ctx context.Context, lib LibraryRef, d Day, gen int64) error
	// union counts the distinct members of HyperLogLog sketches.
	union(ctx context.Context, lib LibraryRef, hlls [][]byte) (int64, error)
	// shared reports whether other replicas flush to the store too, so
	// that a search and the activation it led to may be counted apart.
	shared() bool
}

// memoryStore is the Store of a single replica without Redis.
type memoryStore struct {
	top, k    int
	retention int
	seed      maphash.Seed
	now       func() time.Time

	mu   sync.Mutex
	days map[libDay]*memDay
}

type memDay struct {
	counts         map[string]int64
	users, threads map[string]map[uint64]struct{}
	queries        map[string]*queryRow
	gen, rolledGen int64 // dayRecord.Gen; what rolled noted (-1: never)
}

// maxMemoryMembers bounds one in-process sketch; past it further members
// are not told apart (the count is a lower bound).
const maxMemoryMembers = 1 << 14

// NewMemoryStore is the in-process Store of cfg's retention and top
// queries.
func NewMemoryStore(cfg Config) Store {
	return &memoryStore{top: cfg.TopQueries, k: cfg.QueryMinUsers, retention: cfg.RedisRetentionDays, seed: maphash.MakeSeed(), now: time.Now, days: make(map[libDay]*memDay)}
}

func (s *memoryStore) add(_ context.Context, b *batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	get := func(k libDay) *memDay {
		d := s.days[k]
		if d == nil {
			d = &memDay{counts: map[string]int64{}, users: map[string]map[uint64]struct{}{}, threads: map[string]map[uint64]struct{}{}, queries: map[string]*queryRow{}, rolledGen: -1}
			s.days[k] = d
		}
		return d
	}
	for k := range b.libs {
		get(k).gen++
	}
	for k, n := range b.counts {
		get(k.libDay).counts[k.field()] += n
	}
	b.eachMember(func(k memberKey) {
		d := get(k.libDay)
		sets := d.users
		if k.thread != "" {
			sets = d.threads
		}
		set := sets[k.skill]
		if set == nil {
			set = make(map[uint64]struct{})
			sets[k.skill] = set
		}
		if len(set) < maxMemoryMembers {
			set[maphash.String(s.seed, k.id())] = struct{}{}
		}
	})
	touched := make(map[*memDay]bool)
	for k, q := range b.queries {
		d := get(k.libDay)
		r := d.queries[k.query]
		if r == nil {
			r = &queryRow{}
			d.queries[k.query] = r
		}
		r.N, r.Empty, r.Led = r.N+q.n, r.Empty+q.empty, r.Led+q.led
		r.Users = userset.Union(s.k, r.Users, q.users)
		touched[d] = true
	}
	for d := range touched {
		trimQueries(d.queries, s.top)
	}
	oldest := DayOf(s.now()) - Day(s.retention)
	for k := range s.days {
		if k.day < oldest {
			delete(s.days, k)
		}
	}
	return nil
}

// trimQueries keeps the top most searched queries.
func trimQueries(q map[string]*queryRow, top int) {
	if len(q) <= top {
		return
	}
	names := make([]string, 0, len(q))
	for n := range q {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := q[names[i]], q[names[j]]
		if a.N != b.N {
			return a.N > b.N
		}
		return names[i] < names[j]
	})
	for _, n := range names[top:] {
		delete(q, n)
	}
}

func (s *memoryStore) day(_ context.Context, lib LibraryRef, d Day, _ bool) (*dayRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.days[libDay{lib, d}]
	if m == nil {
		return nil, nil
	}
	r := &dayRecord{Day: d.String(), Library: lib.String(), Counts: make(map[string]int64, len(m.counts)),
		Users: sketches(m.users), Threads: sketches(m.threads), Queries: make(map[string]queryRow, len(m.queries)), Gen: m.gen}
	for f, n := range m.counts {
		r.Counts[f] = n
	}
	for q, row := range m.queries {
		r.Queries[q] = *row
	}
	return r, nil
}

func sketches(sets map[string]map[uint64]struct{}) map[string]sketch {
	out := make(map[string]sketch, len(sets))
	for skill, set := range sets {
		hs := make([]uint64, 0, len(set))
		for h := range set {
			hs = append(hs, h)
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
		out[skill] = sketch{N: int64(len(hs)), Hashes: hs}
	}
	return out
}

func (s *memoryStore) libraries(_ context.Context, d Day) ([]LibraryRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []LibraryRef
	for k := range s.days {
		if k.day == d {
			out = append(out, k.lib)
		}
	}
	return out, nil
}

func (s *memoryStore) unrolled(_ context.Context, d Day, libs []LibraryRef) ([]LibraryRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []LibraryRef
	for _, l := range libs {
		if m := s.days[libDay{l, d}]; m != nil && m.gen > m.rolledGen {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *memoryStore) rolled(_ context.Context, lib LibraryRef, d Day, gen int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.days[libDay{lib, d}]; m != nil {
		m.rolledGen = gen
	}
	return nil
}

func (s *memoryStore) shared() bool { return false }

// union of HyperLogLogs is Redis's: in process there are none.
func (s *memoryStore) union(context.Context, LibraryRef, [][]byte) (int64, error) { return 0, nil }
