package layout

import (
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
func (ly Layout) ChangeOf(key string) Change {
	k := ly.keys
	switch {
	case key == k.SharedIndexKey:
		return Change{Kind: PersistedIndex, Library: LibraryRef{Shared: true}}
	case key == k.SharedProtectedKey:
		return Change{Kind: LibraryFile, Library: LibraryRef{Shared: true}}
	case strings.HasPrefix(key, k.SharedPrefix):
		return Change{Kind: LibraryFile, Library: LibraryRef{Shared: true}}
	}
	if team, ok := teamOf(k.TeamIndexKey, key, false); ok {
		return Change{Kind: PersistedIndex, Library: LibraryRef{Team: team}}
	}
	if team, ok := teamOf(k.TeamProtectedKey, key, false); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{Team: team}}
	}
	if team, ok := teamOf(k.TeamPrefix, key, true); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{Team: team}}
	}
	// The settings and index objects are {user}/<dir>/<name>
	// (skills.Config.Validate), so the user is the key's first segment.
	if user, _, _ := strings.Cut(key, "/"); ly.validUser(user) {
		switch key {
		case ly.Settings(user):
			return Change{Kind: Settings, Library: LibraryRef{User: user}}
		case strings.Replace(k.IndexKey, "{user}", user, 1):
			return Change{Kind: PersistedIndex, Library: LibraryRef{User: user}}
		}
	}
	if user, ok := ly.libraryUser(key); ok {
		return Change{Kind: LibraryFile, Library: LibraryRef{User: user}}
	}
	return Change{}
}

// teamOf returns the team whose key tmpl (a team prefix, below which key
// lies, or an object key, which key is) renders to key: {team} is one
// whole segment (skills.Config.Validate), matched segment by segment and
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

func (ly Layout) validUser(user string) bool {
	_, err := ly.Operator(user)
	return err == nil
}

// libraryUser returns the user whose library holds key. The library mount's
// template depends on {user} alone (skills.Config.Validate), every
// placeholder a whole segment, so the key's segments are matched against
// the template's and the user's rendered prefix confirms the match.
func (ly Layout) libraryUser(key string) (string, bool) {
	m, ok := ly.table.Lookup(ly.keys.Mount)
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
	own, err := ly.Of(LibraryRef{User: user}) // validates user
	if err != nil || !strings.HasPrefix(key, own.Prefix) {
		return "", false
	}
	return user, true
}
