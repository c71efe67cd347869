package events

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/skills"
)

// fakeTimers stands in for time.AfterFunc: the test fires what is due.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	f       func()
	stopped bool
	fired   bool
}

func (ft *fakeTimers) afterFunc(_ time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{f: f}
	ft.timers = append(ft.timers, t)
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		if t.stopped || t.fired {
			return false
		}
		t.stopped = true
		return true
	}
}

// fire runs every timer neither stopped nor fired yet, and says how many.
func (ft *fakeTimers) fire() int {
	ft.mu.Lock()
	var due []*fakeTimer
	for _, t := range ft.timers {
		if !t.stopped && !t.fired {
			t.fired = true
			due = append(due, t)
		}
	}
	ft.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// TestRechecker: a change is applied once more after its last scheduling,
// once for a burst of schedulings; close cancels what is not due.
func TestRechecker(t *testing.T) {
	alice := skills.Change{Kind: skills.LibraryFile, Library: skills.LibraryRef{User: "alice"}}
	shared := skills.Change{Kind: skills.LibraryFile, Library: skills.LibraryRef{Shared: true}}
	var mu sync.Mutex
	var applied []skills.Change
	rc := newRechecker(func(ch skills.Change) {
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, ch)
	})
	timers := &fakeTimers{}
	rc.afterFunc = timers.afterFunc

	for range 5 { // a recursive upload into alice's library
		rc.schedule(alice)
	}
	rc.schedule(shared)
	if n := timers.fire(); n != 2 {
		t.Fatalf("%d rechecks due after a burst for two libraries, want 2", n)
	}
	if len(applied) != 2 || applied[0] != alice || applied[1] != shared {
		t.Fatalf("applied %+v, want alice's library then the shared one", applied)
	}
	if n := timers.fire(); n != 0 {
		t.Fatalf("%d more rechecks after they ran", n)
	}

	rc.schedule(alice)
	rc.close()
	if n := timers.fire(); n != 0 || len(applied) != 2 {
		t.Fatalf("after close %d rechecks ran, applied %+v", n, applied)
	}
	rc.schedule(alice) // after close: nothing
	if n := timers.fire(); n != 0 {
		t.Fatalf("a recheck scheduled after close ran")
	}
}

// countingCatalog counts Invalidate calls by change.
type countingCatalog struct {
	mu          sync.Mutex
	invalidated map[skills.Change]int
}

func (c *countingCatalog) ChangeOf(key string) skills.Change {
	if key == "bob/settings/skills.json" {
		return skills.Change{Kind: skills.Settings, Library: skills.LibraryRef{User: "bob"}}
	}
	return skills.Change{Kind: skills.LibraryFile, Library: skills.LibraryRef{User: "alice"}}
}

func (c *countingCatalog) Invalidate(_ context.Context, ch skills.Change) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidated[ch]++
	return nil
}

func (c *countingCatalog) Forget(skills.Change) error { return nil }
func (c *countingCatalog) ForgetAll()                 {}

type countingTopic struct {
	mu        sync.Mutex
	published int
}

func (c *countingTopic) Publish(context.Context, []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published++
	return nil
}

func (c *countingTopic) Subscribe(func([]byte), func()) func() { return func() {} }

// TestApplyRechecks: each change an event applied is applied, and
// announced, once more when its recheck is due.
func TestApplyRechecks(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	cfg.WebhookTokenFile = tok
	cat := &countingCatalog{invalidated: map[skills.Change]int{}}
	topic := &countingTopic{}
	r, err := New(cfg, cat, Options{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	timers := &fakeTimers{}
	r.recheck.afterFunc = timers.afterFunc
	recs := []Record{
		{Event: "ObjectCreated:Put", Key: "alice/skills/a/SKILL.md"},
		{Event: "ObjectCreated:Put", Key: "bob/settings/skills.json"},
	}
	if _, err := r.Apply(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(t.Context(), recs[:1]); err != nil { // the burst goes on
		t.Fatal(err)
	}
	if n := timers.fire(); n != 2 {
		t.Fatalf("%d rechecks due, want one per change", n)
	}
	alice, bob := cat.ChangeOf(recs[0].Key), cat.ChangeOf(recs[1].Key)
	if cat.invalidated[alice] != 3 || cat.invalidated[bob] != 2 {
		t.Errorf("invalidated alice's library %d times (want 2 events + 1 recheck), bob's settings %d (want 1 + 1)", cat.invalidated[alice], cat.invalidated[bob])
	}
	if topic.published != 3 {
		t.Errorf("announced %d times, want alice's library for 2 events and 1 recheck", topic.published)
	}
}
