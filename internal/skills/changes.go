package skills

import (
	"context"
	"strings"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// ChangeKind is what an object written or deleted outside the catalog is to
// it.
type ChangeKind uint8

const (
	// Unrelated objects are no part of any library (a workspace file).
	Unrelated ChangeKind = iota
	// LibraryFile is an object under a user's library or the shared one.
	LibraryFile
	// Settings is a user's settings object.
	Settings
	// PersistedIndex is a library index the catalog persists itself: its
	// writes follow the catalog's own listings, so they change nothing.
	PersistedIndex
)

// Change is what writing or deleting one object means to the catalog.
type Change struct {
	Kind    ChangeKind
	Library LibraryRef // whose library or settings; zero when Unrelated
}

// ChangeOf maps an object key, as object storage names it in a change
// event, to the library (or the user's settings) it belongs to. The key is
// untrusted: a user is only taken from it where the configured keys place
// one, and only when it is a valid user ID.
func (c *Catalog) ChangeOf(key string) Change {
	cfg := c.cfg
	switch {
	case key == cfg.SharedIndexKey:
		return Change{Kind: PersistedIndex, Library: LibraryRef{Shared: true}}
	case key == cfg.SharedProtectedKey:
		return Change{Kind: LibraryFile, Library: LibraryRef{Shared: true}}
	case strings.HasPrefix(key, cfg.SharedPrefix):
		return Change{Kind: LibraryFile, Library: LibraryRef{Shared: true}}
	}
	if team, ok := teamOf(cfg.TeamIndexKey, key, false); ok {
		return Change{Kind: PersistedIndex, Library: LibraryRef{Team: team}}
	}
	if team, ok := teamOf(cfg.TeamProtectedKey, key, false); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{Team: team}}
	}
	if team, ok := teamOf(cfg.TeamPrefix, key, true); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{Team: team}}
	}
	// The settings and index objects are {user}/<dir>/<name>
	// (Config.Validate), so the user is the key's first segment.
	if user, _, _ := strings.Cut(key, "/"); c.validUser(user) {
		switch key {
		case strings.Replace(cfg.SettingsKey, "{user}", user, 1):
			return Change{Kind: Settings, Library: LibraryRef{User: user}}
		case strings.Replace(cfg.IndexKey, "{user}", user, 1):
			return Change{Kind: PersistedIndex, Library: LibraryRef{User: user}}
		}
	}
	if user, ok := c.libraryUser(key); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{User: user}}
	}
	return Change{}
}

// teamOf returns the team whose key tmpl (a team prefix, below which key
// lies, or an object key, which key is) renders to key: {team} is one
// whole segment (Config.Validate), matched segment by segment and
// validated.
func teamOf(tmpl, key string, below bool) (string, bool) {
	before, after, _ := strings.Cut(tmpl, "{team}")
	rest, ok := strings.CutPrefix(key, before)
	if !ok {
		return "", false
	}
	team, tail, ok := strings.Cut(rest, "/")
	if !ok || mounts.ValidateID("team", team) != nil {
		return "", false
	}
	tail = "/" + tail
	if below {
		if !strings.HasPrefix(tail, after) || tail == after {
			return "", false
		}
	} else if tail != after {
		return "", false
	}
	return team, true
}

func (c *Catalog) validUser(user string) bool {
	_, err := c.views.operator(user)
	return err == nil
}

// libraryUser returns the user whose library holds key. The library mount's
// template depends on {user} alone (Config.Validate), every placeholder a
// whole segment, so the key's segments are matched against the template's
// and the user's rendered prefix confirms the match.
func (c *Catalog) libraryUser(key string) (string, bool) {
	m, ok := c.views.table.Lookup(c.cfg.Mount)
	if !ok {
		return "", false
	}
	tmpl := strings.Split(strings.TrimSuffix(m.Template, "/"), "/")
	segs := strings.SplitN(key, "/", len(tmpl)+1)
	if len(segs) <= len(tmpl) {
		return "", false // not below the prefix
	}
	user := ""
	for i, t := range tmpl {
		switch {
		case t == "{user}" && (user == "" || user == segs[i]):
			user = segs[i]
		case t != segs[i]:
			return "", false
		}
	}
	own, _, err := c.views.userLayers(user) // validates user
	if err != nil || !strings.HasPrefix(key, own.Prefix) {
		return "", false
	}
	return user, true
}

// Invalidate applies a change made outside the catalog on this replica and
// in the shared cache: a library file drops the library's index as the
// admin's DropSkillIndex does (every replica lists it again, the others once
// they Forget their copy or within --skills.index-refresh); a user's settings
// drop their cached copy, which only the shared cache holds. Other changes
// need nothing.
func (c *Catalog) Invalidate(ctx context.Context, ch Change) error {
	switch ch.Kind {
	case LibraryFile:
		return c.DropLibraryIndex(ctx, ch.Library)
	case Settings:
		if _, err := c.views.operator(ch.Library.User); err != nil {
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
func (c *Catalog) Forget(ch Change) error {
	if ch.Kind == Settings {
		if _, err := c.views.operator(ch.Library.User); err != nil {
			return err
		}
		c.settings.DropLocal(ch.Library.User)
		return nil
	}
	if ch.Kind != LibraryFile {
		return nil
	}
	ly, err := c.layer(ch.Library)
	if err != nil {
		return err
	}
	c.views.indexes.Forget(ly)
	if ch.Library.User != "" {
		c.views.forget(ly.Prefix)
	}
	c.changed(ch.Library, false)
	return nil
}

// ForgetAll drops every library index and settings this process holds, for
// a replica that may have missed some Forget calls: each is read again from
// the shared cache on its next use.
func (c *Catalog) ForgetAll() {
	c.views.indexes.ForgetAll()
	c.settings.DropAllLocal()
	c.changed(LibraryRef{Shared: true}, false)
}
