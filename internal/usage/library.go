package usage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// LibraryRef names the library whose usage is counted and read: a user's
// own, a team's or the organization's (shared). It is made only from an
// Event the server built, from a validated caller, or from an operator's
// request validated by Operator, never from a string alone, so a reader can
// name only a library its caller was given. The zero LibraryRef names none.
type LibraryRef struct {
	kind libKind
	id   string // the user's or the team's ID; "" for the organization's
}

type libKind uint8

const (
	userLib libKind = iota + 1
	teamLib
	orgLib
)

// Own is the caller's own library.
func Own(c mounts.Caller) LibraryRef {
	if c.User() == "" {
		return LibraryRef{}
	}
	return LibraryRef{kind: userLib, id: c.User()}
}

// Team is the library of team, which the caller must be a member of (ok
// false otherwise). Whether the caller may read it (a team admin) is the
// reader's edge to decide.
func Team(c mounts.Caller, team string) (LibraryRef, bool) {
	if !slices.Contains(c.Teams(), team) {
		return LibraryRef{}, false
	}
	return LibraryRef{kind: teamLib, id: team}, true
}

// Organization is the organization's (shared) library; whether a caller
// may read it (an admin) is the reader's edge to decide.
func Organization() LibraryRef { return LibraryRef{kind: orgLib} }

// Operator is the library an operator's request names, validated; the
// caller must have checked that the operator may read it.
func Operator(l layout.LibraryRef) (LibraryRef, error) {
	if err := l.Validate(); err != nil {
		return LibraryRef{}, err
	}
	switch {
	case l.Shared:
		return Organization(), nil
	case l.Team != "":
		return LibraryRef{kind: teamLib, id: l.Team}, nil
	}
	return LibraryRef{kind: userLib, id: l.User}, nil
}

// libraryOf is the library an event's skill was served from: its layer
// names it (the user's own is the event's user's).
func libraryOf(e *Event) (LibraryRef, bool) {
	switch {
	case e.Layer == skillview.LayerUser:
		if mounts.ValidateID("user", e.User) != nil {
			return LibraryRef{}, false
		}
		return LibraryRef{kind: userLib, id: e.User}, true
	case e.Layer == skillview.LayerShared:
		return Organization(), true
	case strings.HasPrefix(e.Layer, skillview.LayerTeam):
		team := e.Layer[len(skillview.LayerTeam):]
		if mounts.ValidateID("team", team) != nil {
			return LibraryRef{}, false
		}
		return LibraryRef{kind: teamLib, id: team}, true
	}
	return LibraryRef{}, false
}

// IsZero reports whether l names no library.
func (l LibraryRef) IsZero() bool { return l.kind == 0 }

// Layout is l as the bucket layout names it.
func (l LibraryRef) Layout() layout.LibraryRef {
	switch l.kind {
	case userLib:
		return layout.LibraryRef{User: l.id}
	case teamLib:
		return layout.LibraryRef{Team: l.id}
	case orgLib:
		return layout.LibraryRef{Shared: true}
	}
	return layout.LibraryRef{}
}

// String is "user:<id>", "team:<id>" or "org": the library's part of its
// Redis keys (IDs hold no ':' or '}').
func (l LibraryRef) String() string {
	switch l.kind {
	case userLib:
		return "user:" + l.id
	case teamLib:
		return "team:" + l.id
	case orgLib:
		return "org"
	}
	return ""
}

// parseLibrary is String's inverse, for the libraries Redis lists.
func parseLibrary(s string) (LibraryRef, bool) {
	kind, id, _ := strings.Cut(s, ":")
	switch {
	case s == "org":
		return Organization(), true
	case kind == "user" && mounts.ValidateID("user", id) == nil:
		return LibraryRef{kind: userLib, id: id}, true
	case kind == "team" && mounts.ValidateID("team", id) == nil:
		return LibraryRef{kind: teamLib, id: id}, true
	}
	return LibraryRef{}, false
}

// Day is a UTC calendar day, counted from 1970-01-01.
type Day int32

// DayOf is the UTC day of t.
func DayOf(t time.Time) Day { return Day(t.Unix() / 86400) }

// ParseDay parses "2006-01-02".
func ParseDay(s string) (Day, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, fmt.Errorf("%w: day %q is not YYYY-MM-DD", errkind.InvalidArgument, s)
	}
	return DayOf(t), nil
}

// Start is the day's first instant.
func (d Day) Start() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String is the day as YYYY-MM-DD.
func (d Day) String() string { return d.Start().Format(time.DateOnly) }
