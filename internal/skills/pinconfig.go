package skills

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

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
	User   string `yaml:"user"`   // "{user}/versions/"
	Shared string `yaml:"shared"` // "_shared/versions/"
	Team   string `yaml:"team"`   // "_teams/{team}/versions/"
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

// userRoot is the root of user's own library.
func (r VersionRoots) userRoot(user string) string { return r.Root(LibraryRef{User: user}) }

// Pins is the prefix of the pins of user's threads, Pin a thread's.
func (r VersionRoots) Pins(user string) string { return r.userRoot(user) + "pins/" }

// Pin is the object pinning user's thread to a snapshot.
func (r VersionRoots) Pin(user, thread string) string { return r.Pins(user) + thread + ".json" }

// Snapshots is the prefix of the snapshots of user's libraries that
// pinned threads read.
func (r VersionRoots) Snapshots(user string) string { return r.userRoot(user) + "snapshots/" }

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

// PinConfig configures pinned threads (pins.go).
type PinConfig struct {
	// Roots are the library's, set from --library.versions-prefix and
	// --library.shared-versions-prefix, which the authors' path registers.
	Roots VersionRoots `yaml:"-"`
	// Retention is how long a thread keeps the library it pinned; after
	// it, its next pinned call pins the library as it is then.
	Retention time.Duration `yaml:"pin_retention"`
	// MaxBytes bounds the bytes of skill files one pin copies (the user's
	// and the shared library together).
	MaxBytes int64 `yaml:"pin_max_bytes"`
	// GCGrace is --library.gc-grace, which the authors' path registers: a
	// pin writes an old blob it reuses again first (blobs.Store.Fresh).
	GCGrace time.Duration `yaml:"-"`
}

// DefaultGCGrace is the default of --library.gc-grace.
const DefaultGCGrace = 24 * time.Hour

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *PinConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	c.Roots, c.GCGrace = DefaultVersionRoots(), DefaultGCGrace
	f.DurationVar(&c.Retention, prefix+"pin-retention", 7*24*time.Hour, "How long a pinned thread keeps the library it pinned; its next pinned call after that pins the library as it is then.")
	f.Int64Var(&c.MaxBytes, prefix+"pin-max-bytes", 1<<30, "Most bytes of skill files (the user's and the shared library's) one pin copies; a larger library is RESOURCE_EXHAUSTED for pinned calls.")
}

// DefaultPinConfig returns the flag defaults.
func DefaultPinConfig() PinConfig {
	var c PinConfig
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the config against the mount table.
func (c PinConfig) Validate(t *mounts.Table) error {
	if c.Retention <= 0 || c.MaxBytes <= 0 {
		return errors.New("library: pin-retention and pin-max-bytes must be positive")
	}
	return c.Roots.Validate(t)
}
