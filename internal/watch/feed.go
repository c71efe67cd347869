package watch

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// ErrClosed ends a subscription when the feed closes (the replica drains):
// the client reconnects, to another replica, and resumes.
var ErrClosed = errkind.New(errkind.Unavailable, "the server is shutting down: reconnect and resume from the last library_digest")

// Topic tells the other replicas which library changed here (*cache.Topic
// on Redis).
type Topic interface {
	Publish(ctx context.Context, msg []byte) error
	Subscribe(onMessage func([]byte), subscribed func()) (stop func())
}

// Options are a Feed's collaborators; all optional.
type Options struct {
	// Cache keeps states for resuming, shared by the replicas when it is
	// backed by Redis; without it, a small in-process cache.
	Cache cache.Cache
	// Topic carries "library X changed" between replicas; without it, a
	// change made on another replica arrives within the interval.
	Topic      Topic
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// Feed is the change feed of every caller's catalog watched on this
// replica.
type Feed struct {
	cat      *skills.Catalog
	cfg      Config
	interval time.Duration
	cache    cache.Cache
	topic    Topic
	self     string // this feed's id in topic messages, to skip its own
	log      *slog.Logger
	metrics  *metrics

	ctx    context.Context // ends with Close: stops every hub
	cancel context.CancelFunc
	// kept is when a state was last kept for resuming, by a hash of its
	// stateKey: least recently used out past maxRemembered.
	kept      *lru.Cache[uint64, time.Time]
	keptSeed  maphash.Seed
	outbox    chan layout.LibraryRef // local changes for the topic
	stopTopic func()
	wg        sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	hubs    map[string]*hub // by hubKey: a user's with each set of teams
	perUser map[string]int  // bounded subscriptions by user
	total   int             // bounded subscriptions
}

// defaultCacheBytes bounds the in-process cache of states New makes
// without Options.Cache.
const defaultCacheBytes = 8 << 20

// outboxSize bounds the local changes waiting to be published; past it a
// change is not published (the other replicas see it within the interval).
const outboxSize = 256

// New returns the feed over cat and makes it cat's listener.
func New(cat *skills.Catalog, cfg Config, o Options) (*Feed, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Cache == nil {
		o.Cache = cache.NewLRU(defaultCacheBytes)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	f := &Feed{
		cat: cat, cfg: cfg, interval: cfg.interval(cat.IndexRefresh()), cache: o.Cache, topic: o.Topic,
		self: rand.Text(), log: o.Log, metrics: newMetrics(o.Registerer),
		hubs: map[string]*hub{}, perUser: map[string]int{}, keptSeed: maphash.MakeSeed(),
	}
	f.kept, _ = lru.New[uint64, time.Time](maxRemembered)
	f.ctx, f.cancel = context.WithCancel(context.Background())
	if f.topic != nil {
		f.outbox = make(chan layout.LibraryRef, outboxSize)
		f.goSafe("publish", f.publish)
		// The topic calls these in its own goroutine: a panic there is
		// logged, not the end of the process.
		f.stopTopic = f.topic.Subscribe(
			func(b []byte) { panics.Logged(f.log, "watch: a peer's change", func() { f.fromPeer(b) }) },
			func() { panics.Logged(f.log, "watch: resync", f.resync) })
	}
	cat.Listen(f.changed)
	return f, nil
}

// Close ends every subscription (Next returns ErrClosed) and stops the
// feed's goroutines. The server's drain calls it before its graceful stop,
// which would otherwise wait for open watches.
func (f *Feed) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	for _, h := range f.hubs {
		for s := range h.subs {
			close(s.done)
		}
	}
	f.mu.Unlock()
	f.cat.Listen(nil)
	f.cancel()
	if f.stopTopic != nil {
		f.stopTopic()
	}
	f.wg.Wait()
}

// Subscribe starts watching the catalog of id's user. bounded counts it
// against Config.MaxPerUser and MaxPerReplica (a WatchSkills stream); MCP's
// notifications, bounded by its session caps, are not. Close the
// subscription when done.
func (f *Feed) Subscribe(id mounts.Caller, bounded bool) (*Sub, error) {
	user := id.User()
	if user == "" {
		return nil, fmt.Errorf("%w: watching needs a user", errkind.InvalidArgument)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return nil, ErrClosed
	case bounded && f.total >= f.cfg.MaxPerReplica:
		f.metrics.refused.WithLabelValues("replica").Inc()
		return nil, errkind.RetryAfter(fmt.Errorf("%w: this replica serves %d watches already", errkind.ResourceExhausted, f.cfg.MaxPerReplica), time.Second)
	case bounded && f.perUser[user] >= f.cfg.MaxPerUser:
		f.metrics.refused.WithLabelValues("user").Inc()
		return nil, errkind.RetryAfter(fmt.Errorf("%w: %d watches for this user already open", errkind.ResourceExhausted, f.cfg.MaxPerUser), time.Second)
	}
	key := hubKey(id)
	h := f.hubs[key]
	if h == nil {
		h = &hub{f: f, user: user, key: key, id: id, subs: map[*Sub]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
		f.hubs[key] = h
		f.goSafe("hub", h.run)
	}
	s := &Sub{h: h, bounded: bounded, ready: make(chan struct{}, 1), done: make(chan struct{})}
	h.subs[s] = struct{}{}
	if h.cur.Digest != "" {
		s.offer(h.cur) // the hub's newest at once; its next look confirms it
	}
	h.poke()
	if bounded {
		f.total++
		f.perUser[user]++
		f.metrics.open.Inc()
	}
	return s, nil
}

// hubKey names the hub of id's catalog: the user's library and, since a
// caller's teams decide which team libraries it reads, its teams.
func hubKey(id mounts.Caller) string {
	return id.User() + "\x00" + id.Identity().Teams + "\x00" + id.Scope() + "\x00" + id.Harness()
}

// Resume is the state of user's catalog at digest, when some replica kept
// it within Config.ResumeTTL.
func (f *Feed) Resume(ctx context.Context, user, digest string) (State, bool) {
	key := stateKey(user, digest)
	hits, err := f.cache.Fetch(ctx, []string{key})
	if err != nil {
		f.log.DebugContext(ctx, "watch: reading a kept state", "err", err)
		return State{}, false
	}
	b, ok := hits[key]
	if !ok {
		return State{}, false
	}
	st, err := decodeState(b, digest)
	if err != nil {
		f.log.WarnContext(ctx, "watch: kept state", "err", err)
		return State{}, false
	}
	return st, true
}

// Listed keeps the state of a listing (ListSkills tells the feed of each
// page it answers, with the page's snapshot), so a
// client resumes a watch from a listing's library_digest though no watch
// was open when it listed (WatchSkillsRequest's contract). A digest kept
// lately costs a map lookup; the state comes from the listing's snapshot,
// at no storage request.
func (f *Feed) Listed(ctx context.Context, id mounts.Caller, digest string, state func() []skillview.Skill) {
	key := maphash.String(f.keptSeed, stateKey(id.User(), digest))
	now := time.Now()
	if at, ok := f.kept.Get(key); ok && now.Sub(at) < f.cfg.ResumeTTL/2 {
		return
	}
	f.keep(ctx, id.User(), StateOf(state(), digest))
	f.kept.Add(key, now)
}

// maxRemembered bounds the states remember knows it kept (about 5 MB):
// every user listing within ResumeTTL/2 on a replica of tens of thousands
// of users, each of whose listings would otherwise make, encode and store
// the whole state again.
const maxRemembered = 1 << 16

// stateKey names a kept state; the user in a hash tag, as the catalog's
// keys (libindex/keys.go), so a Redis Cluster keeps a user's keys together.
func stateKey(user, digest string) string { return "watch:{" + user + "}:" + digest }

// keep stores st for resuming from its digest.
func (f *Feed) keep(ctx context.Context, user string, st State) {
	b, err := st.encode()
	if err != nil || len(b) > f.cfg.MaxStateBytes {
		f.metrics.unkept.Inc()
		return
	}
	if err := f.cache.Store(ctx, map[string][]byte{stateKey(user, st.Digest): b}, f.cfg.ResumeTTL); err != nil {
		f.log.DebugContext(ctx, "watch: keeping a state", "err", err)
	}
}

// changed is the catalog's listener: wake the hubs lib concerns, and tell
// the other replicas of a change made here.
func (f *Feed) changed(lib layout.LibraryRef, here bool) {
	if here && f.outbox != nil {
		select {
		case f.outbox <- lib:
		default:
			f.metrics.unpublished.Inc()
		}
	}
	f.wake(lib)
}

func (f *Feed) wake(lib layout.LibraryRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// A team's members are not known here (they are in each caller's
	// identity), so a team library's change wakes every hub, as the shared
	// library's does.
	if lib.User != "" {
		for _, h := range f.hubs {
			if h.user == lib.User {
				h.poke()
			}
		}
		return
	}
	for _, h := range f.hubs {
		h.poke()
	}
}

// message is a topic message: a library changed on replica Origin.
type message struct {
	Origin string `json:"o"`
	User   string `json:"u,omitempty"`
	Shared bool   `json:"s,omitempty"`
	Team   string `json:"t,omitempty"`
}

func (f *Feed) publish() {
	for {
		select {
		case <-f.ctx.Done():
			return
		case lib := <-f.outbox:
			b, _ := json.Marshal(message{Origin: f.self, User: lib.User, Shared: lib.Shared, Team: lib.Team})
			ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
			if err := f.topic.Publish(ctx, b); err != nil {
				f.metrics.unpublished.Inc()
				f.log.Debug("watch: telling the other replicas", "err", err)
			}
			cancel()
		}
	}
}

// fromPeer applies another replica's change: this process forgets its copy
// of the user's settings (a message does not say whether the library or the
// settings changed, and replicas hold settings in process) and of the
// library's index (which wakes the hubs through the listener).
func (f *Feed) fromPeer(b []byte) {
	var m message
	if len(b) > 1024 || json.Unmarshal(b, &m) != nil || m.Origin == f.self {
		return
	}
	lib := layout.LibraryRef{User: m.User, Shared: m.Shared, Team: m.Team}
	if lib.Validate() != nil {
		return
	}
	if !lib.Shared {
		if err := f.cat.Forget(layout.Change{Kind: layout.Settings, Library: lib}); err != nil {
			f.log.Debug("watch: a peer's change", "err", err)
		}
	}
	if err := f.cat.Forget(layout.Change{Kind: layout.LibraryFile, Library: lib}); err != nil {
		f.log.Debug("watch: a peer's change", "err", err)
	}
}

// resync follows each (re)subscription to the topic: what was published
// meanwhile is lost, so every index this process holds is read again and
// every hub looks (through the listener).
func (f *Feed) resync() { f.cat.ForgetAll() }

// hub looks at one user's catalog for all its subscribers on this replica.
type hub struct {
	f    *Feed
	user string
	key  string        // in Feed.hubs
	id   mounts.Caller // the first subscriber's: a catalog depends on its user and teams alone
	wake chan struct{} // a look is wanted; buffered 1, so wakes coalesce
	stop chan struct{} // closed when the last subscriber leaves

	// Guarded by f.mu.
	subs map[*Sub]struct{}
	cur  State // the newest state seen
}

// poke asks the hub to look again soon.
func (h *hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *hub) run() {
	t := time.NewTicker(h.f.interval)
	defer t.Stop()
	for {
		select {
		case <-h.f.ctx.Done():
			return
		case <-h.stop:
			return
		case <-h.wake:
		case <-t.C:
		}
		h.look()
	}
}

// lookTimeout bounds one look, so a stuck storage call cannot stop a hub.
const lookTimeout = 30 * time.Second

// look reads the catalog's state and hands it to every subscriber that has
// not had it. A failure keeps the state before (the next look retries).
func (h *hub) look() {
	ctx, cancel := context.WithTimeout(h.f.ctx, lookTimeout)
	defer cancel()
	list, digest, err := h.f.cat.State(ctx, h.id)
	h.f.metrics.looks.Inc()
	if err != nil {
		h.f.log.Debug("watch: looking at a catalog", "err", err)
		h.f.mu.Lock()
		for s := range h.subs {
			s.fail(err)
		}
		h.f.mu.Unlock()
		return
	}
	h.f.mu.Lock()
	same := digest == h.cur.Digest
	h.f.mu.Unlock()
	if same {
		return
	}
	st := StateOf(list, digest)
	h.f.keep(ctx, h.user, st)
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.cur = st
	for s := range h.subs {
		s.offer(st)
	}
}

// Sub is one subscription to a user's catalog.
type Sub struct {
	h       *hub
	bounded bool
	ready   chan struct{} // a newer state was offered; buffered 1
	done    chan struct{} // closed when the feed closes

	mu     sync.Mutex
	latest State  // the newest state offered
	given  string // the digest Next last returned
	failed error  // why the first look failed, until a state is offered
	closed bool
}

// fail tells a subscriber still waiting for its first state that the look
// failed: its stream ends with the error rather than wait in silence. A
// subscriber with a state keeps it and waits for the next look.
func (s *Sub) fail(err error) {
	s.mu.Lock()
	first := s.latest.Digest == ""
	if first {
		s.failed = err
	}
	s.mu.Unlock()
	if first {
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
}

// offer makes st the state Next returns next: a subscriber that lags keeps
// only the newest, so nothing queues up behind a slow client.
func (s *Sub) offer(st State) {
	s.mu.Lock()
	s.latest = st
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the newest state of the catalog once it differs from the
// one Next last returned (the first call: once the hub has looked). It
// fails with ErrClosed when the feed closes, with ctx's error, and, before
// any state, with the error of a look that failed (storage unavailable).
func (s *Sub) Next(ctx context.Context) (State, error) {
	for {
		s.mu.Lock()
		st := s.latest
		if st.Digest != "" && st.Digest != s.given {
			s.given = st.Digest
			s.mu.Unlock()
			return st, nil
		}
		if err := s.failed; err != nil && st.Digest == "" {
			s.failed = nil
			s.mu.Unlock()
			return State{}, err
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return State{}, ctx.Err()
		case <-s.done:
			return State{}, ErrClosed
		case <-s.ready:
		}
	}
}

// Close ends the subscription; the hub stops with its last subscriber.
func (s *Sub) Close() {
	f := s.h.f
	f.mu.Lock()
	defer f.mu.Unlock()
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return
	}
	delete(s.h.subs, s)
	if len(s.h.subs) == 0 {
		close(s.h.stop)
		delete(f.hubs, s.h.key)
	}
	if s.bounded {
		f.total--
		if f.perUser[s.h.user]--; f.perUser[s.h.user] <= 0 {
			delete(f.perUser, s.h.user)
		}
		f.metrics.open.Dec()
	}
}

// goSafe runs fn in a goroutine Close waits for; a panic there is logged,
// not the end of the process.
func (f *Feed) goSafe(what string, fn func()) {
	f.wg.Go(func() {
		if err := panics.Guard(func() error { fn(); return nil })(); err != nil {
			f.log.Error("watch: "+what, "err", err)
		}
	})
}
