package cache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// subscriber records what a Topic subscription delivers.
type subscriber struct {
	msgs       chan string
	subscribed chan struct{}
	stop       func()
}

func subscribe(t *testing.T, topic *cache.Topic) *subscriber {
	t.Helper()
	s := &subscriber{msgs: make(chan string, 16), subscribed: make(chan struct{}, 16)}
	s.stop = topic.Subscribe(func(b []byte) { s.msgs <- string(b) }, func() { s.subscribed <- struct{}{} })
	t.Cleanup(s.stop)
	return s
}

// waitFor receives one value from ch; the bound only ends a failing test.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// TestTopic: every subscriber of a topic gets each message published on it,
// in order, once subscribed; a topic under another key prefix is another
// channel; after stop nothing more is delivered.
func TestTopic(t *testing.T) {
	addr := testserver.SharedRedis(t).Addr
	cfg := redisConfig(addr)
	a, b := newRedis(t, cfg), newRedis(t, cfg)
	other := newRedis(t, redisConfig(addr)) // another prefix
	t.Cleanup(func() { a.Close(); b.Close(); other.Close() })

	subA, subB := subscribe(t, a.Topic("inv")), subscribe(t, b.Topic("inv"))
	subOther := subscribe(t, other.Topic("inv"))
	for _, s := range []*subscriber{subA, subB, subOther} {
		waitFor(t, s.subscribed, "the subscription")
	}
	for i := range 3 {
		if err := b.Topic("inv").Publish(t.Context(), fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range map[string]*subscriber{"A": subA, "B (the publisher)": subB} {
		for i := range 3 {
			if got, want := waitFor(t, s.msgs, "a message"), fmt.Sprintf("m%d", i); got != want {
				t.Errorf("%s got %q, want %q", name, got, want)
			}
		}
	}
	// A marker on the other prefix: anything before it would have leaked.
	if err := other.Topic("inv").Publish(t.Context(), []byte("marker")); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, subOther.msgs, "the marker"); got != "marker" {
		t.Errorf("a topic under another key prefix got %q", got)
	}

	subA.stop()
	if err := b.Topic("inv").Publish(t.Context(), []byte("late")); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, subB.msgs, "the late message"); got != "late" {
		t.Fatalf("B got %q", got)
	}
	select {
	case m := <-subA.msgs:
		t.Errorf("A got %q after stop", m)
	default:
	}
}

// TestTopicResubscribes: a subscription survives a Redis restart, and says
// so (what was published meanwhile is lost), then delivers again.
func TestTopicResubscribes(t *testing.T) {
	red := testserver.StartRestartableRedis(t)
	cfg := redisConfig(red.Addr)
	r := newRedis(t, cfg)
	t.Cleanup(func() { r.Close() })
	s := subscribe(t, r.Topic("inv"))
	waitFor(t, s.subscribed, "the first subscription")

	red.Stop(t)
	red.Restart(t)
	waitFor(t, s.subscribed, "the subscription after the restart")
	if err := r.Topic("inv").Publish(t.Context(), []byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, s.msgs, "a message after the restart"); got != "after" {
		t.Fatalf("got %q", got)
	}
}
