package skills

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/layout"
)

// ChangeOf maps an object key, as object storage names it in a change
// event, to the library (or the user's settings) it belongs to
// (layout.Layout.ChangeOf). The key is untrusted.
func (c *Catalog) ChangeOf(key string) layout.Change { return c.views.Layout.ChangeOf(key) }

// Invalidate applies a change made outside the catalog on this replica and
// in the shared cache: a library file drops the library's index as the
// admin's DropSkillIndex does (every replica lists it again, the others once
// they Forget their copy or within --skills.index-refresh); a user's settings
// drop their cached copy, which only the shared cache holds. Other changes
// need nothing.
func (c *Catalog) Invalidate(ctx context.Context, ch layout.Change) error {
	switch ch.Kind {
	case layout.LibraryFile:
		return c.DropLibraryIndex(ctx, ch.Library)
	case layout.Settings:
		if _, err := c.views.Operator(ch.Library.User); err != nil {
			return err
		}
		err := c.settings.Forget(ctx, ch.Library.User)
		c.changed(ch.Library, true)
		return err
	}
	return nil
}

// Forget drops this process's copy of the library or settings ch changed,
// for a change another replica invalidated: the next call reads the newer
// index or settings from the shared cache, or lists the library.
func (c *Catalog) Forget(ch layout.Change) error {
	if ch.Kind == layout.Settings {
		if _, err := c.views.Operator(ch.Library.User); err != nil {
			return err
		}
		c.settings.DropLocal(ch.Library.User)
		return nil
	}
	if ch.Kind != layout.LibraryFile {
		return nil
	}
	ly, err := c.layer(ch.Library)
	if err != nil {
		return err
	}
	c.views.Indexes.Forget(ly)
	if ch.Library.User != "" {
		c.views.Forget(ly.Prefix)
	}
	c.changed(ch.Library, false)
	return nil
}

// ForgetAll drops every library index and settings this process holds, for
// a replica that may have missed some Forget calls: each is read again from
// the shared cache on its next use.
func (c *Catalog) ForgetAll() {
	c.views.Indexes.ForgetAll()
	c.settings.DropAllLocal()
	c.changed(layout.LibraryRef{Shared: true}, false)
}
