package skills

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Listener hears of every change to a library the catalog makes or is told
// of, so a change feed (internal/watch) looks again at once instead of at
// its next tick. here is true for a change made on this replica (an API
// write, a dropped index, a settings change, an S3 event received here),
// which the other replicas have still to be told of; false for one another
// replica applied (Forget) or that may have been missed (ForgetAll, given
// as the shared library: every user's view depends on it). It must not
// block.
type Listener func(lib layout.LibraryRef, here bool)

// Listen sets the catalog's listener (one: the assembly's feed), replacing
// the one before; nil removes it.
func (c *Catalog) Listen(l Listener) {
	if l == nil {
		c.listener.Store(nil)
		return
	}
	c.listener.Store(&l)
}

func (c *Catalog) changed(lib layout.LibraryRef, here bool) {
	if l := c.listener.Load(); l != nil {
		(*l)(lib, here)
	}
}

// listenerSlot is the Catalog's field holding its Listener.
type listenerSlot = atomic.Pointer[Listener]

// State is every served skill of the caller's library, disabled ones
// included (Skill.Disabled), sorted by path, and the library digest
// (Page.LibraryDigest), from one snapshot: what a change feed compares.
func (c *Catalog) State(ctx context.Context, id mounts.Caller) ([]skillview.Skill, string, error) {
	return c.skills(ctx, id, skillview.ListOptions{IncludeDisabled: true})
}

// IndexRefresh is --skills.index-refresh: how old an index may be before a
// call revalidates it.
func (c *Catalog) IndexRefresh() time.Duration { return c.cfg.IndexRefresh }
