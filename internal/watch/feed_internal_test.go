package watch

import (
	"testing"
)

// TestSlowSubscriberKeepsOnlyTheNewest: states offered to a subscriber that
// does not read queue nowhere; its next read is the newest.
func TestSlowSubscriberKeepsOnlyTheNewest(t *testing.T) {
	s := &Sub{ready: make(chan struct{}, 1), done: make(chan struct{})}
	for _, d := range []string{"sha256:1", "sha256:2", "sha256:3"} {
		s.offer(State{Digest: d})
	}
	st, err := s.Next(t.Context())
	if err != nil || st.Digest != "sha256:3" {
		t.Fatalf("Next = %q, %v; want the newest, sha256:3", st.Digest, err)
	}
	// Offering what it already has wakes it without a new state.
	s.offer(State{Digest: "sha256:3"})
	close(s.done)
	if _, err := s.Next(t.Context()); err != ErrClosed {
		t.Fatalf("Next after the same state and close = %v, want ErrClosed", err)
	}
}
