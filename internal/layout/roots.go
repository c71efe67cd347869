package layout

import (
	"fmt"
	"strings"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// VersionRoots locates what a library keeps outside every mount: its blob
// space (internal/blobs), the snapshots pinned threads read and the pins
// themselves. A user's root holds {user}, a team's {team}; the shared
// library's is a fixed prefix. The first segment of the shared and team
// roots is no valid user ID. Skill versions published
// through the API keep their files in the same blob spaces, so a file is
// stored once per library whoever refers to it.
type VersionRoots struct {
	User   string // "{user}/versions/"
	Shared string // "_shared/versions/"
	Team   string // "_teams/{team}/versions/"
}

// DefaultVersionRoots are the defaults of --library.versions-prefix,
// --library.shared-versions-prefix and --library.team-versions-prefix
// (library.Config registers them).
func DefaultVersionRoots() VersionRoots {
	return VersionRoots{User: "{user}/versions/", Shared: "_shared/versions/", Team: "_teams/{team}/versions/"}
}

// Root is the versions root of the library l (validated by the caller):
// the one place deciding where a library's versions, blobs, snapshots
// and pins live.
func (r VersionRoots) Root(l LibraryRef) string {
	switch {
	case l.Shared:
		return r.Shared
	case l.Team != "":
		return strings.Replace(r.Team, "{team}", l.Team, 1)
	}
	return strings.Replace(r.User, "{user}", l.User, 1)
}

// BlobSpace is the blobs.Store space of the library l.
func (r VersionRoots) BlobSpace(l LibraryRef) string { return r.Root(l) + "blobs/" }

// Pins is the prefix of the pins of user's threads, Pin a thread's.
func (r VersionRoots) Pins(user string) string { return r.Root(LibraryRef{User: user}) + "pins/" }

// Pin is the object pinning user's thread to a snapshot.
func (r VersionRoots) Pin(user, thread string) string { return r.Pins(user) + thread + ".json" }

// Snapshots is the prefix of the snapshots of user's libraries that
// pinned threads read.
func (r VersionRoots) Snapshots(user string) string {
	return r.Root(LibraryRef{User: user}) + "snapshots/"
}

// Snapshot is the snapshot of user's libraries whose content sums to sum.
func (r VersionRoots) Snapshot(user, sum string) string { return r.Snapshots(user) + sum + ".json" }

// Validate checks that every root lies outside every mount of t, so no
// worker can write a blob, a snapshot or a pin as a file.
func (r VersionRoots) Validate(t *mounts.Table) error {
	if !strings.HasPrefix(r.User, "{user}/") || strings.Count(r.User, "{") != 1 || !strings.HasSuffix(r.User, "/") || len(r.User) == len("{user}/") {
		return fmt.Errorf("library: versions-prefix %q must be {user}/<dir>/", r.User)
	}
	if err := t.Disjoint(r.User); err != nil {
		return fmt.Errorf("library: versions-prefix: %w", err)
	}
	first, _, _ := strings.Cut(r.Shared, "/")
	if !strings.HasSuffix(r.Shared, "/") || strings.Contains(r.Shared, "{") || mounts.ValidateID("user", first) == nil {
		return fmt.Errorf("library: shared-versions-prefix %q must end in / and start with a segment that is no valid ID (e.g. _shared/versions/)", r.Shared)
	}
	if err := t.Disjoint(r.Shared); err != nil {
		return fmt.Errorf("library: shared-versions-prefix: %w", err)
	}
	first, _, _ = strings.Cut(r.Team, "/")
	if !strings.HasSuffix(r.Team, "/") || strings.Count(r.Team, "{team}") != 1 || strings.Count(r.Team, "{") != 1 || !strings.Contains(r.Team, "/{team}/") || strings.HasSuffix(r.Team, "/{team}/") || mounts.ValidateID("user", first) == nil {
		return fmt.Errorf("library: team-versions-prefix %q must hold {team} once as a whole segment below a first segment that is no valid ID, and a directory under it (e.g. _teams/{team}/versions/)", r.Team)
	}
	// As a mount sees it, {team} is any ID, like {user}.
	if err := t.Disjoint(strings.Replace(r.Team, "{team}", "{user}", 1)); err != nil {
		return fmt.Errorf("library: team-versions-prefix: %w", err)
	}
	if team := r.Root(LibraryRef{Team: "t"}); strings.HasPrefix(team, r.Shared) || strings.HasPrefix(r.Shared, team) {
		return fmt.Errorf("library: team-versions-prefix %q and shared-versions-prefix %q must lie apart", r.Team, r.Shared)
	}
	return nil
}

// Usage is the prefix of the daily usage roll-ups of the library l
// (internal/usage), outside every mount like the rest of its root; UsageDay
// is one day's (YYYY-MM-DD), and UsageDayOf parses such a key back.
func (r VersionRoots) Usage(l LibraryRef) string { return r.Root(l) + "usage/" }
func (r VersionRoots) UsageDay(l LibraryRef, day string) string {
	return r.Usage(l) + day + ".json"
}

// UsageDayOf returns the day of a key UsageDay rendered for l.
func (r VersionRoots) UsageDayOf(l LibraryRef, key string) (string, bool) {
	day, ok := strings.CutPrefix(key, r.Usage(l))
	if !ok {
		return "", false
	}
	day, ok = strings.CutSuffix(day, ".json")
	return day, ok && len(day) == len("2006-01-02") && !strings.Contains(day, "/")
}

// Intents is the one prefix every replica's recovery of interrupted
// publishes lists: under the shared versions root, outside every mount.
func (r VersionRoots) Intents() string { return r.Shared + "intents/" }

// Versions is where one library keeps its skills' published versions:
// below its versions root, each skill's records (v/), proposals (p/),
// publish order (t/) and labels (refs.json).
type Versions string

// VersionsOf is the versions of the library whose versions root is root
// (VersionRoots.Root).
func VersionsOf(root string) Versions { return Versions(root) }

// Skill is the prefix of everything the library keeps of skill name.
func (v Versions) Skill(name string) string { return string(v) + "skills/" + name + "/" }

// Records is the prefix of name's version records; Record one, by the hex
// of its ID.
func (v Versions) Records(name string) string     { return v.Skill(name) + "v/" }
func (v Versions) Record(name, hex string) string { return v.Records(name) + hex + ".json" }

// Proposals is the prefix of name's proposals (pending or rejected
// publishes); Proposal one, by the hex of its ID.
func (v Versions) Proposals(name string) string     { return v.Skill(name) + "p/" }
func (v Versions) Proposal(name, hex string) string { return v.Proposals(name) + hex + ".json" }

// Order is the prefix of name's publish order; Refs its labels.
func (v Versions) Order(name string) string { return v.Skill(name) + "t/" }
func (v Versions) Refs(name string) string  { return v.Skill(name) + "refs.json" }

// Provenance is the library's provenance of its live skills: one object
// listings read whole (internal/library's provenance index).
func (v Versions) Provenance() string { return string(v) + "provenance.json" }

// Scan is the scan report (internal/scan) of the version of name whose
// content is hex, kept beside its record when the library scans.
func (v Versions) Scan(name, hex string) string { return v.Skill(name) + "scan/" + hex + ".json" }
