package layout

import (
	"fmt"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// LibraryRef names one library for an operator: a user's, a team's, or
// the shared one.
type LibraryRef struct {
	User   string
	Shared bool
	Team   string // a team ID: that team's library
}

// Validate checks that l names exactly one library.
func (l LibraryRef) Validate() error {
	n := 0
	for _, set := range []bool{l.User != "", l.Shared, l.Team != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("%w: give one of user, team or shared", errkind.InvalidArgument)
	case l.Shared:
		return nil
	case l.User != "":
		return mounts.ValidateID("user", l.User)
	case l.Team != "":
		return mounts.ValidateID("team", l.Team)
	}
	return fmt.Errorf("%w: user, team or shared is required", errkind.InvalidArgument)
}
