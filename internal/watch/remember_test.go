package watch_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// storeCounter counts the states a feed stores for resuming.
type storeCounter struct {
	cache.Cache
	states atomic.Int64
}

func (c *storeCounter) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	for k := range items {
		if strings.HasPrefix(k, "watch:") {
			c.states.Add(1)
		}
	}
	return c.Cache.Store(ctx, items, ttl)
}

// TestListingsKeepEachStateOnce: a listing keeps the caller's state for
// resuming once per ResumeTTL/2, however many users list in between: a
// replica of thousands of users (more than the 4,096 it once remembered)
// does not make, encode and store a user's whole state on every listing.
func TestListingsKeepEachStateOnce(t *testing.T) {
	const users = 5000
	b := skillstest.New()
	b.Shared().Skill("docs/pdf", "pdf", "Read PDFs.", "Use pdftotext.\n")
	lib := skillstest.Library(t, b.Bucket(t), skillstest.Indexed(time.Hour))
	c := &storeCounter{Cache: cache.NewLRU(64 << 20)}
	feed := newFeed(t, lib, nil, watch.Options{Cache: c})
	list := func(u int) {
		t.Helper()
		// As ListSkills does, whether its page was kept or built.
		snap, err := lib.Catalog.Snapshot(t.Context(), caller(fmt.Sprintf("user%d", u)))
		if err != nil {
			t.Fatal(err)
		}
		feed.Listed(t.Context(), caller(fmt.Sprintf("user%d", u)), snap.LibraryDigest(), snap.State)
	}
	for u := range users {
		list(u)
	}
	if got := c.states.Load(); got != users {
		t.Fatalf("%d users' first listings stored %d states, want %d", users, got, users)
	}
	for u := range users {
		list(u)
	}
	if got := c.states.Load() - users; got != 0 {
		t.Errorf("%d users listing again stored %d states, want none: each was kept moments ago", users, got)
	}
}
