package usage

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// Bounds on what one event may put in a counter's name.
const (
	maxName    = 128 // a skill name or a version
	maxSurface = 16
	maxQuery   = 200 // a normalized query, in bytes
	maxResults = 10  // a search's results kept to credit an activation
)

// Aggregator is the Recorder of a replica: Record adds an event to
// counters held in memory under one short lock (no I/O, no allocation for
// a counter that exists), bounded by Config.MaxEntries; a flush every
// Config.FlushInterval hands them to the Store in one batch, and every
// hour the days that are over are rolled up into the bucket (Rollup).
type Aggregator struct {
	cfg    Config
	store  Store
	rollup *Rollup
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	cur     *batch
	threads map[threadKey]*lastSearch
	entries int // of cur, threads and pending: what MaxEntries bounds

	flushMu  sync.Mutex // one flush at a time
	pending  *batch     // what failed to flush, merged into the next flush
	rolledAt time.Time
	rolling  atomic.Bool
	// late is set by a flush that added to a day already over (its grace
	// too): the next tick rolls it up again rather than within the hour.
	late atomic.Bool

	recorded, dropped, lost, flushFailures atomic.Int64

	shared     bool // store.shared()
	started    atomic.Bool
	stop, done chan struct{}
	// background ends a roll-up in progress when the recorder closes.
	background context.Context
	cancel     context.CancelFunc
	closeOnce  sync.Once
	wg         sync.WaitGroup
}

var _ Recorder = (*Aggregator)(nil)

// threadKey is one thread of one user.
type threadKey struct{ user, thread string }

// lastSearch is a thread's latest search: an activation of one of its
// results within Config.SearchTTL counts as where the search led.
type lastSearch struct {
	at       time.Time
	day      Day
	query    string
	libs     []LibraryRef // searchLibraries
	results  [maxResults]string
	credited bool
}

// Option configures an Aggregator.
type Option func(*Aggregator)

// WithRollup rolls finished days up into the bucket through r.
func WithRollup(r *Rollup) Option { return func(a *Aggregator) { a.rollup = r } }

// WithLogger logs failed flushes and roll-ups to log.
func WithLogger(log *slog.Logger) Option { return func(a *Aggregator) { a.log = log } }

// WithRegisterer registers the recorder's metrics with reg.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(a *Aggregator) {
		if reg == nil {
			return
		}
		reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "skillsvc_usage_events_total", Help: "Usage events counted by this replica."}, func() float64 { return float64(a.recorded.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "skillsvc_usage_dropped_total", Help: "Usage events dropped because the replica held --usage.max-entries."}, func() float64 { return float64(a.dropped.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "skillsvc_usage_lost_total", Help: "Usage events lost because the replica stopped while its store (Redis) was unavailable."}, func() float64 { return float64(a.lost.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "skillsvc_usage_flush_failures_total", Help: "Usage flushes that failed (Redis unavailable)."}, func() float64 { return float64(a.flushFailures.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillsvc_usage_entries", Help: "Usage entries held by this replica between flushes (bounded by --usage.max-entries)."}, func() float64 {
				a.mu.Lock()
				defer a.mu.Unlock()
				return float64(a.entries)
			}),
		)
	}
}

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) Option { return func(a *Aggregator) { a.now = now } }

// NewRecorder returns a recorder flushing to store; Start starts its
// flushes and Close ends them with a last flush.
func NewRecorder(cfg Config, store Store, opts ...Option) *Aggregator {
	a := &Aggregator{cfg: cfg, store: store, log: slog.New(slog.DiscardHandler), now: time.Now,
		cur: newBatch(), threads: make(map[threadKey]*lastSearch), stop: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(a)
	}
	a.shared = store.shared()
	a.background, a.cancel = context.WithCancel(context.Background())
	return a
}

// Stats are what a recorder counted since it started.
type Stats struct {
	Recorded, Dropped, Lost, FlushFailures int64
	Entries                                int
}

// Stats returns the recorder's counts.
func (a *Aggregator) Stats() Stats {
	a.mu.Lock()
	n := a.entries
	a.mu.Unlock()
	return Stats{Recorded: a.recorded.Load(), Dropped: a.dropped.Load(), Lost: a.lost.Load(), FlushFailures: a.flushFailures.Load(), Entries: n}
}

// Record implements Recorder: it counts e in memory, or drops it (counted)
// when the replica holds Config.MaxEntries and e needs a new entry.
func (a *Aggregator) Record(_ context.Context, e Event) {
	now := a.now()
	day := DayOf(now)
	switch e.Kind {
	case Activation, FileRead:
		lib, ok := libraryOf(&e)
		if !ok || e.Skill == "" {
			a.dropped.Add(1)
			return
		}
		ck := counterKey{libDay: libDay{lib, day}, kind: e.Kind, skill: clean(e.Skill, maxName), version: clean(e.Version, maxName), surface: clean(e.Surface, maxSurface)}
		a.mu.Lock()
		defer a.mu.Unlock()
		n, ok := a.cur.counts[ck]
		if !ok && !a.room(1) {
			a.dropped.Add(1)
			return
		}
		if !ok {
			a.cur.libs[ck.libDay] = struct{}{}
		}
		a.cur.counts[ck] = n + 1
		a.cur.events++
		a.recorded.Add(1)
		if e.User != "" {
			// One entry per user, skill and thread: the sets it belongs to
			// (the skill's users and threads, the library's) are worked out
			// at flush (batch.eachMember), off the call's path.
			a.member(memberKey{libDay: ck.libDay, skill: ck.skill, user: e.User, thread: e.Thread})
		}
		if e.Kind == Activation && e.Thread != "" {
			a.credit(threadKey{e.User, e.Thread}, ck.skill, now)
		}
	case Search:
		a.search(&e, now, day)
	default:
		a.dropped.Add(1)
	}
}

// room reports whether n more entries fit, and takes them.
func (a *Aggregator) room(n int) bool {
	if a.entries+n > a.cfg.MaxEntries {
		return false
	}
	a.entries += n
	return true
}

// member adds a distinct user or thread; a thread is its user's (thread IDs
// are per user), so its member is the pair, joined only at flush.
func (a *Aggregator) member(k memberKey) {
	if _, ok := a.cur.members[k]; ok || !a.room(1) {
		return
	}
	a.cur.members[k] = struct{}{}
}

// addQuery adds to a query's counts; nil when it has no room.
func (a *Aggregator) addQuery(k queryKey, n, empty, led int64) *queryCount {
	q := a.cur.queries[k]
	if q == nil {
		if !a.room(1) {
			return nil
		}
		q = &queryCount{}
		a.cur.queries[k] = q
		a.cur.libs[k.libDay] = struct{}{}
	}
	q.n, q.empty, q.led = q.n+n, q.empty+empty, q.led+led
	return q
}

// searchLibraries are the libraries a search is counted under: the
// organization's, the searcher's own and each of its teams', as its view
// covers them all.
func searchLibraries(e *Event) []LibraryRef {
	libs := make([]LibraryRef, 0, 2+len(e.Teams))
	libs = append(libs, Organization())
	if mounts.ValidateID("user", e.User) == nil {
		libs = append(libs, LibraryRef{kind: userLib, id: e.User})
	}
	for _, t := range e.Teams[:min(len(e.Teams), mounts.MaxTeams)] {
		if mounts.ValidateID("team", t) == nil {
			libs = append(libs, LibraryRef{kind: teamLib, id: t})
		}
	}
	return libs
}

// search counts a search under searchLibraries, with the searcher among
// the query's users under the shared ones (whether others may see its
// text), and remembers it as the thread's last.
func (a *Aggregator) search(e *Event, now time.Time, day Day) {
	q := normalize(e.Query)
	if q == "" {
		a.dropped.Add(1)
		return
	}
	libs := searchLibraries(e)
	var empty int64
	if len(e.Results) == 0 {
		empty = 1
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.entries+len(libs) > a.cfg.MaxEntries {
		a.dropped.Add(1)
		return
	}
	a.recorded.Add(1)
	a.cur.events++
	known := len(libs) > 1 && libs[1].kind == userLib // a valid user
	user := userset.Hash(e.User)
	for _, l := range libs {
		if qc := a.addQuery(queryKey{libDay{l, day}, q}, 1, empty, 0); qc != nil && known && l.kind != userLib {
			qc.users.Add(user, a.cfg.QueryMinUsers)
		}
	}
	if e.Thread == "" || empty == 1 {
		return
	}
	tk := threadKey{e.User, e.Thread}
	ls := a.threads[tk]
	if ls == nil {
		if !a.room(1) {
			return
		}
		ls = &lastSearch{}
		a.threads[tk] = ls
	}
	*ls = lastSearch{at: now, day: day, query: q, libs: libs}
	copy(ls.results[:], e.Results)
	if a.shared {
		if _, ok := a.cur.searched[tk]; ok || a.room(1) {
			a.cur.searched[tk] = *ls
		}
	}
}

// credit counts an activation of skill as where the thread's last search
// led, once per search.
func (a *Aggregator) credit(tk threadKey, skill string, now time.Time) {
	ls := a.threads[tk]
	if ls == nil || now.Sub(ls.at) > a.cfg.SearchTTL {
		// The search may have been made through another replica.
		if k := (actKey{tk, skill}); a.shared {
			if _, ok := a.cur.acts[k]; !ok && a.room(1) {
				a.cur.acts[k] = struct{}{}
			}
		}
		return
	}
	if ls.credited {
		return
	}
	for _, r := range ls.results {
		if r == skill && r != "" {
			ls.credited = true
			if _, ok := a.cur.credited[tk]; a.shared && (ok || a.room(1)) {
				a.cur.credited[tk] = ls.at
			}
			for _, l := range ls.libs {
				if !l.IsZero() {
					a.addQuery(queryKey{libDay{l, ls.day}, ls.query}, 0, 0, 1)
				}
			}
			return
		}
	}
}

// clean bounds s and keeps the counter names' separator out of it.
func clean(s string, n int) string {
	if len(s) > n {
		s = cut(s, n)
	}
	if strings.IndexByte(s, '|') >= 0 {
		s = strings.ReplaceAll(s, "|", "_")
	}
	return s
}

// cut cuts s to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// normalize lowercases a query, collapses its white space and bounds it.
func normalize(q string) string {
	if len(q) > 4*maxQuery {
		q = cut(q, 4*maxQuery)
	}
	return cut(strings.Join(strings.Fields(strings.ToLower(q)), " "), maxQuery)
}

// Start starts the flushes (and roll-ups); Close stops them.
func (a *Aggregator) Start() {
	if !a.started.CompareAndSwap(false, true) {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(a.done)
		t := time.NewTicker(a.cfg.FlushInterval)
		defer t.Stop()
		for {
			select {
			case <-a.stop:
				a.lastFlush()
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), a.cfg.FlushInterval)
				if err := a.Flush(ctx); err != nil {
					a.log.Warn("usage: flush failed; its counts are kept for the next", "err", err)
				}
				cancel()
				a.maybeRollup()
			}
		}
	}()
}

// lastFlush flushes what is held as the replica stops; what it cannot
// send is lost, and counted.
func (a *Aggregator) lastFlush() {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.FlushInterval)
	defer cancel()
	if err := a.Flush(ctx); err != nil {
		a.mu.Lock()
		lost := a.pending.events
		a.pending = nil
		a.mu.Unlock()
		a.lost.Add(lost)
		a.log.Warn("usage: the last flush failed; its counts are lost", "err", err, "events", lost)
	}
}

// Close flushes what is held and stops the flushes and roll-ups (a
// roll-up in progress ends; the next replica to run one finishes it).
func (a *Aggregator) Close() {
	a.closeOnce.Do(func() {
		close(a.stop)
		a.cancel()
		a.wg.Wait()
		if !a.started.Load() {
			a.lastFlush()
		}
	})
	a.wg.Wait()
}

// Flush sends what the recorder holds to the store. A batch whose flush
// fails is kept and merged with the next interval's, until a flush lands:
// an outage loses no count, only the new entries past --usage.max-entries
// (dropped, counted), as the kept batch counts against the same bound and
// a merge adds to its counters without new entries for uses seen before.
// Only a replica stopped during the outage loses what it kept (counted as
// lost).
func (a *Aggregator) Flush(ctx context.Context) error {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	now := a.now()
	a.mu.Lock()
	b := a.cur
	a.cur = newBatch()
	if p := a.pending; p != nil {
		p.merge(b, a.cfg.QueryMinUsers)
		b, a.pending = p, nil
	}
	b.at = now
	for k, ls := range a.threads {
		if now.Sub(ls.at) > a.cfg.SearchTTL {
			delete(a.threads, k)
		}
	}
	a.entries = len(a.threads) + b.entries() // in flight: held until it lands
	a.mu.Unlock()

	var err error
	if !b.empty() {
		if err = a.store.add(ctx, b); err != nil {
			a.flushFailures.Add(1)
		} else if a.rollup != nil {
			for ld := range b.libs {
				if a.rollup.over(ld.day, now) {
					a.late.Store(true)
					break
				}
			}
		}
	}
	a.mu.Lock()
	if err != nil {
		a.pending = b
	}
	a.entries = a.cur.entries() + len(a.threads)
	if a.pending != nil {
		a.entries += a.pending.entries()
	}
	a.mu.Unlock()
	return err
}

// rollupEvery is how often a replica looks for finished days to roll up.
const rollupEvery = time.Hour

// maybeRollup starts a roll-up of the finished days when the last is an
// hour old, or a flush added to a day already over, in the background so
// flushes go on.
func (a *Aggregator) maybeRollup() {
	due := a.rolledAt.IsZero() || a.now().Sub(a.rolledAt) >= rollupEvery || a.late.Load()
	if a.rollup == nil || !due || !a.rolling.CompareAndSwap(false, true) {
		return
	}
	a.late.Store(false)
	a.rolledAt = a.now()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer a.rolling.Store(false)
		ctx, cancel := context.WithTimeout(a.background, rollupEvery/2)
		defer cancel()
		if err := a.rollup.Run(ctx, a.now()); err != nil {
			a.log.Warn("usage: daily roll-up failed; retried within the hour", "err", err)
		}
	}()
}
