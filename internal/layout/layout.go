package layout

import (
	"fmt"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Keys are the key templates of the libraries and settings, as the
// --skills.* flags give them (skills.Config registers the flags and
// checks them): {user} and {team} are whole segments, replaced by a
// validated ID.
type Keys struct {
	// Mount is the read-only mount whose template locates a user's
	// library; it depends on {user} alone.
	Mount string
	// SharedPrefix holds the organization-wide library, SharedIndexKey its
	// persisted index and SharedProtectedKey its protected skills' names.
	SharedPrefix       string
	SharedIndexKey     string
	SharedProtectedKey string
	// TeamPrefix, TeamIndexKey and TeamProtectedKey are the same of each
	// team's library ({team}).
	TeamPrefix       string
	TeamIndexKey     string
	TeamProtectedKey string
	// SettingsKey and IndexKey are a user's settings object and their
	// library's persisted index ({user}/<dir>/<name>).
	SettingsKey string
	IndexKey    string
}

// Layout renders and parses the keys of every library and of the users'
// settings in one bucket. A Layout is a value: copies share nothing
// mutable.
type Layout struct {
	table *mounts.Table
	keys  Keys
}

// New returns the layout of keys, whose user libraries the skills mount of
// table locates. keys are checked by their owner (skills.Config.Validate).
func New(table *mounts.Table, keys Keys) Layout { return Layout{table: table, keys: keys} }

// Library is where one library lives in the bucket.
type Library struct {
	Prefix    string // its skill folders are below it
	Index     string // the object holding its persisted index
	Protected string // the object listing its protected skills; "" for a user's
}

// Shared is the organization-wide library.
func (ly Layout) Shared() Library {
	return Library{Prefix: ly.keys.SharedPrefix, Index: ly.keys.SharedIndexKey, Protected: ly.keys.SharedProtectedKey}
}

// Team is the library of one team, whose ID the caller's identity
// validated (or an operator's request, by LibraryRef.Validate).
func (ly Layout) Team(team string) Library {
	return Library{
		Prefix:    strings.Replace(ly.keys.TeamPrefix, "{team}", team, 1),
		Index:     strings.Replace(ly.keys.TeamIndexKey, "{team}", team, 1),
		Protected: strings.Replace(ly.keys.TeamProtectedKey, "{team}", team, 1),
	}
}

// User is the caller's own library, where the skills mount puts it.
func (ly Layout) User(id mounts.Caller) (Library, error) {
	r, err := ly.table.Resolve(id, ly.keys.Mount)
	if err != nil {
		return Library{}, err
	}
	return Library{Prefix: r.Prefix, Index: strings.Replace(ly.keys.IndexKey, "{user}", id.User(), 1)}, nil
}

// Operator is the caller as which an operator's call reads a user's
// library and settings: those depend on the user alone (the skills mount
// depends on {user} alone), and the thread only gives the identity its
// required shape. The operator's request named the user, so it is
// validated here, where it comes in.
func (ly Layout) Operator(user string) (mounts.Caller, error) {
	return ly.table.Identify(mounts.Identity{User: user, Thread: "index"})
}

// Of is the library l names, which it validates.
func (ly Layout) Of(l LibraryRef) (Library, error) {
	if err := l.Validate(); err != nil {
		return Library{}, err
	}
	switch {
	case l.Shared:
		return ly.Shared(), nil
	case l.Team != "":
		return ly.Team(l.Team), nil
	}
	id, err := ly.Operator(l.User)
	if err != nil {
		return Library{}, err
	}
	return ly.User(id)
}

// ProtectedList is the object naming the protected skills of l, the
// shared library or a team's: a user's library has none.
func (ly Layout) ProtectedList(l LibraryRef) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	switch {
	case l.Shared:
		return ly.keys.SharedProtectedKey, nil
	case l.Team != "":
		return ly.Team(l.Team).Protected, nil
	}
	return "", fmt.Errorf("%w: only skills of the shared library or a team's can be protected", errkind.InvalidArgument)
}

// Settings is the object holding user's skill settings; user is a
// validated ID.
func (ly Layout) Settings(user string) string {
	return strings.Replace(ly.keys.SettingsKey, "{user}", user, 1)
}
