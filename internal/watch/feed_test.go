package watch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/watch"
)

func caller(user string) mounts.Caller {
	return mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t1"})
}

func newFeed(t *testing.T, lib *skills.Library, tune func(*watch.Config), o watch.Options) *watch.Feed {
	t.Helper()
	cfg := watch.DefaultConfig()
	cfg.Interval = time.Hour // only what the catalog hears of, unless a test says otherwise
	if tune != nil {
		tune(&cfg)
	}
	f, err := watch.New(lib.Catalog, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func subscribe(t *testing.T, f *watch.Feed, user string) *watch.Sub {
	t.Helper()
	s, err := f.Subscribe(caller(user), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// next is the subscription's next state, within a bound that only a lost
// change would reach.
func next(t *testing.T, s *watch.Sub) watch.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	st, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return st
}

// kinds is "kind name" of each change.
func kinds(changes []watch.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, [...]string{"", "added", "changed", "removed", "enabled", "disabled"}[c.Kind]+" "+c.Name)
	}
	return out
}

func want(t *testing.T, got []watch.Change, w ...string) {
	t.Helper()
	if g := kinds(got); !slices.Equal(g, w) {
		t.Fatalf("changes %q, want %q", g, w)
	}
}

func library() *skillstest.Builder {
	b := skillstest.New()
	b.Shared().Skill("docs/pdf", "pdf", "Read PDFs.", "Use pdftotext.\n")
	b.User("alice").Skill("notes", "notes", "Take notes.", "Write them down.\n")
	return b
}

// TestFeedSeesCatalogChanges: writes, settings and deletes through the
// catalog reach a watcher at once: indexes are served for an hour and the
// feed looks only every hour, so only the catalog's listener can tell it.
func TestFeedSeesCatalogChanges(t *testing.T) {
	bucket := library().Bucket(t)
	lib := skillstest.Library(t, bucket, skillstest.Indexed(time.Hour))
	f := newFeed(t, lib, nil, watch.Options{})
	s := subscribe(t, f, "alice")
	first := next(t, s)
	if len(first.Entries) != 2 {
		t.Fatalf("first state %+v, want pdf and notes", first.Entries)
	}
	ctx := t.Context()
	cat := lib.Catalog
	alice := layout.LibraryRef{User: "alice"}

	steps := []struct {
		name   string
		change func() error
		want   []string
	}{
		{"API write", func() error {
			_, err := cat.PutLibraryFile(ctx, alice, "haiku/SKILL.md", []byte(skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n")), objstore.PutOptions{})
			return err
		}, []string{"added haiku"}},
		{"a file of a skill", func() error {
			_, err := cat.PutLibraryFile(ctx, alice, "haiku/forms.md", []byte("# Forms\n"), objstore.PutOptions{})
			return err
		}, []string{"changed haiku"}},
		{"disable", func() error { _, err := cat.SetEnabled(ctx, caller("alice"), "pdf", false); return err }, []string{"disabled pdf"}},
		{"enable", func() error { _, err := cat.SetEnabled(ctx, caller("alice"), "pdf", true); return err }, []string{"enabled pdf"}},
		{"shared library", func() error {
			_, err := cat.PutLibraryFile(ctx, layout.LibraryRef{Shared: true}, "docs/csv/SKILL.md", []byte(skillstest.SkillMD("csv", "Read CSVs.", "Use awk.\n")), objstore.PutOptions{})
			return err
		}, []string{"added csv"}},
		{"delete", func() error { return cat.DeleteLibraryFile(ctx, alice, "notes/SKILL.md") }, []string{"removed notes"}},
	}
	prev := first
	for _, step := range steps {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		st := next(t, s)
		t.Logf("%s: %s", step.name, st.Digest)
		want(t, watch.Diff(prev, st), step.want...)
		prev = st
	}
	// Every state the feed saw is kept for resuming, and a resume diffs
	// from it.
	old, ok := f.Resume(ctx, "alice", first.Digest)
	if !ok {
		t.Fatal("the first state is not kept")
	}
	want(t, watch.Diff(old, prev), "added csv", "added haiku", "removed notes")
	if _, ok := f.Resume(ctx, "bob", first.Digest); ok {
		t.Error("bob resumes from alice's state: states are kept per user")
	}
}

// TestFeedTicksSeeBucketChanges: an upload straight into the bucket, which
// nothing tells the catalog of, reaches a watcher by the feed's interval.
func TestFeedTicksSeeBucketChanges(t *testing.T) {
	bucket := library().Bucket(t)
	lib := skillstest.Library(t, bucket, nil) // every look lists the bucket
	// Short, so the test waits little: the interval is all that brings it.
	f := newFeed(t, lib, func(c *watch.Config) { c.Interval = 10 * time.Millisecond }, watch.Options{})
	s := subscribe(t, f, "alice")
	first := next(t, s)
	objstoretest.Put(t, bucket, "alice/skills/haiku/SKILL.md", skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n"))
	want(t, watch.Diff(first, next(t, s)), "added haiku")
}

// topic is an in-process Topic joining feeds as Redis pub/sub does.
type topic struct {
	mu   sync.Mutex
	subs []func([]byte)
}

func (tp *topic) Publish(_ context.Context, msg []byte) error {
	tp.mu.Lock()
	subs := slices.Clone(tp.subs)
	tp.mu.Unlock()
	for _, s := range subs {
		s(msg)
	}
	return nil
}

func (tp *topic) Subscribe(onMessage func([]byte), subscribed func()) func() {
	tp.mu.Lock()
	tp.subs = append(tp.subs, onMessage)
	tp.mu.Unlock()
	subscribed()
	return func() {}
}

// TestFeedAcrossReplicas: two replicas share a bucket, a cache and a
// topic; a change made through one reaches a watcher on the other at once
// (the other holds its index for an hour), and the watcher resumes on
// either from a state either kept.
func TestFeedAcrossReplicas(t *testing.T) {
	bucket := library().Bucket(t)
	shared := cache.NewLRU(8 << 20)
	tp := &topic{}
	libA := skillstest.Library(t, bucket, skillstest.Indexed(time.Hour), skills.WithCache(shared))
	libB := skillstest.Library(t, bucket, skillstest.Indexed(time.Hour), skills.WithCache(shared))
	feedA := newFeed(t, libA, nil, watch.Options{Cache: shared, Topic: tp})
	feedB := newFeed(t, libB, nil, watch.Options{Cache: shared, Topic: tp})
	onB := subscribe(t, feedB, "alice")
	first := next(t, onB)

	ctx := t.Context()
	if _, err := libA.Catalog.PutLibraryFile(ctx, layout.LibraryRef{User: "alice"}, "haiku/SKILL.md", []byte(skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n")), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	second := next(t, onB)
	want(t, watch.Diff(first, second), "added haiku")
	if _, err := libA.Catalog.SetEnabled(ctx, caller("alice"), "haiku", false); err != nil {
		t.Fatal(err)
	}
	want(t, watch.Diff(second, next(t, onB)), "disabled haiku")

	// A state B kept, A resumes from.
	if _, ok := feedA.Resume(ctx, "alice", first.Digest); !ok {
		t.Fatal("A does not know the state B kept")
	}
}

// TestFeedBounds: watches are bounded per user and per replica; MCP's
// (unbounded) ones do not count; a closed watch makes room.
func TestFeedBounds(t *testing.T) {
	lib := skillstest.Library(t, library().Bucket(t), nil)
	f := newFeed(t, lib, func(c *watch.Config) { c.MaxPerUser, c.MaxPerReplica = 2, 3 }, watch.Options{})
	exhausted := func(user string) {
		t.Helper()
		if s, err := f.Subscribe(caller(user), true); !errors.Is(err, errkind.ResourceExhausted) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("one watch too many for %s: %v, want ResourceExhausted", user, err)
		}
	}
	a1 := subscribe(t, f, "alice")
	subscribe(t, f, "alice")
	exhausted("alice")
	mcp, err := f.Subscribe(caller("alice"), false)
	if err != nil {
		t.Fatalf("an unbounded watch: %v", err)
	}
	defer mcp.Close()
	subscribe(t, f, "bob")
	exhausted("carol") // the replica's ceiling
	a1.Close()
	a1.Close() // twice is once
	subscribe(t, f, "carol")
	exhausted("alice")
}

// TestFeedCloseEndsWatches: closing the feed (the server drains) ends every
// subscription with ErrClosed, which is UNAVAILABLE to a client.
func TestFeedCloseEndsWatches(t *testing.T) {
	lib := skillstest.Library(t, library().Bucket(t), nil)
	f := newFeed(t, lib, nil, watch.Options{})
	s := subscribe(t, f, "alice")
	next(t, s)
	done := make(chan error, 1)
	go func() { _, err := s.Next(context.Background()); done <- err }()
	f.Close()
	if err := <-done; !errors.Is(err, watch.ErrClosed) || errkind.Of(err) != errkind.Unavailable {
		t.Fatalf("Next after Close = %v, want ErrClosed (Unavailable)", err)
	}
	if _, err := f.Subscribe(caller("alice"), true); !errors.Is(err, watch.ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
}

// TestFeedFirstLookFails: a watch whose first look fails (storage down)
// ends with that error rather than wait in silence; once storage answers,
// a new watch gets its state.
func TestFeedFirstLookFails(t *testing.T) {
	faulty := objstoretest.NewFaulty(library().Bucket(t))
	faulty.Fail("", "", objstore.ErrUnavailable)
	lib := skillstest.Library(t, faulty, nil)
	f := newFeed(t, lib, nil, watch.Options{})
	s := subscribe(t, f, "alice")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := s.Next(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with storage down = %v, want the look's error", err)
	}
	s.Close()
	faulty.Heal()
	// Loads are shared by the calls that want them at once: the first
	// hub's last look, begun before the heal, may still be under way and
	// answer the next subscriber's first look with its failure. A load
	// begun after the heal succeeds, so a second subscriber sees a state.
	for attempt := 1; ; attempt++ {
		st, err := subscribe(t, f, "alice").Next(ctx)
		if err == nil {
			if st.Digest == "" {
				t.Fatal("a state without a digest")
			}
			return
		}
		if !errors.Is(err, objstore.ErrUnavailable) || attempt == 2 {
			t.Fatalf("Next after the heal (subscriber %d): %v", attempt, err)
		}
	}
}

// TestFeedTeams: a change to a team's library reaches its members'
// watchers; the same user watching with other teams has a catalog (and a
// hub) of its own, which never shows the first teams' skills.
func TestFeedTeams(t *testing.T) {
	b := library()
	b.Team("legal").Skill("nda", "nda", "Review NDAs.", "Check.\n")
	lib := skillstest.Library(t, b.Bucket(t), skillstest.Indexed(time.Hour))
	f := newFeed(t, lib, nil, watch.Options{})
	inTeams := func(teams string) *watch.Sub {
		s, err := f.Subscribe(mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Teams: teams}), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	legal, eng := inTeams("legal"), inTeams("eng")
	names := func(st watch.State) []string {
		var out []string
		for _, e := range st.Entries {
			out = append(out, e.Name)
		}
		slices.Sort(out)
		return out
	}
	l0, e0 := next(t, legal), next(t, eng)
	if got := names(l0); !slices.Equal(got, []string{"nda", "notes", "pdf"}) {
		t.Fatalf("alice in legal watches %q", got)
	}
	if got := names(e0); !slices.Equal(got, []string{"notes", "pdf"}) {
		t.Fatalf("alice in eng watches %q", got)
	}
	if _, err := lib.Catalog.PutLibraryFile(t.Context(), layout.LibraryRef{Team: "legal"}, "clauses/SKILL.md", []byte(skillstest.SkillMD("clauses", "Clauses.", "x\n")), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	want(t, watch.Diff(l0, next(t, legal)), "added clauses")
	// A change alice's eng watcher sees is all it sees: legal's skills
	// never reached it.
	if _, err := lib.Catalog.PutLibraryFile(t.Context(), layout.LibraryRef{Team: "eng"}, "deploy/SKILL.md", []byte(skillstest.SkillMD("deploy", "Deploy.", "x\n")), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	want(t, watch.Diff(e0, next(t, eng)), "added deploy")
}
