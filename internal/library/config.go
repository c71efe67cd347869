package library

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Config is the authors' path's configuration (--library.*).
type Config struct {
	// VersionsPrefix is each user library's versions root ({user} is
	// replaced); SharedVersionsPrefix the shared library's. Both lie
	// outside every mount: no worker can write a version.
	VersionsPrefix       string `yaml:"versions_prefix"`
	SharedVersionsPrefix string `yaml:"shared_versions_prefix"`
	// Review makes a non-admin's publish to the shared library a pending
	// version until an admin approves it; without it such a publish is
	// refused.
	Review bool `yaml:"review"`
	// LockWait bounds how long a change waits for another change of the
	// same skill to finish (ABORTED after).
	LockWait time.Duration `yaml:"lock_wait"`
	// MaxVersions bounds the versions one skill keeps listed and resolved.
	MaxVersions int `yaml:"max_versions"`
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.VersionsPrefix, prefix+"versions-prefix", "{user}/versions/", "Key prefix of a user library's published versions (records, labels and content-addressed blobs); outside every mount.")
	f.StringVar(&c.SharedVersionsPrefix, prefix+"shared-versions-prefix", "_shared/versions/", "Key prefix of the shared library's published versions; outside every mount and the shared library.")
	f.BoolVar(&c.Review, prefix+"review", false, "Publishing to the shared library by a non-admin creates a pending version that only its author and admins see until an admin approves it (ReviewSkillVersion); without it such a publish is PERMISSION_DENIED.")
	f.DurationVar(&c.LockWait, prefix+"lock-wait", 10*time.Second, "How long a publish, delete, rollback or review waits for another change of the same skill to finish.")
	f.IntVar(&c.MaxVersions, prefix+"max-versions", 1000, "Most versions of one skill listed and resolved; a publish past it is refused (FAILED_PRECONDITION).")
}

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the layout against the mount table and the catalog's
// shared library prefix.
func (c *Config) Validate(table *mounts.Table, sharedPrefix string) error {
	if !strings.HasPrefix(c.VersionsPrefix, "{user}/") || strings.Count(c.VersionsPrefix, "{") != 1 || !strings.HasSuffix(c.VersionsPrefix, "/") || c.VersionsPrefix == "{user}/" {
		return fmt.Errorf("library: versions-prefix %q must be {user}/<dir>/, outside every mount", c.VersionsPrefix)
	}
	if err := table.Disjoint(c.VersionsPrefix); err != nil {
		return fmt.Errorf("library: versions-prefix: %w", err)
	}
	first, _, _ := strings.Cut(c.SharedVersionsPrefix, "/")
	if !strings.HasSuffix(c.SharedVersionsPrefix, "/") || mounts.ValidateID("user", first) == nil ||
		strings.HasPrefix(c.SharedVersionsPrefix, sharedPrefix) || strings.HasPrefix(sharedPrefix, c.SharedVersionsPrefix) {
		return fmt.Errorf("library: shared-versions-prefix %q must end in / and start with a segment that is no valid ID, apart from the shared library %q", c.SharedVersionsPrefix, sharedPrefix)
	}
	if err := table.Disjoint(c.SharedVersionsPrefix); err != nil {
		return fmt.Errorf("library: shared-versions-prefix: %w", err)
	}
	if c.LockWait <= 0 || c.MaxVersions <= 0 {
		return errors.New("library: lock-wait and max-versions must be positive")
	}
	return nil
}

// Root is the versions root of the library l (validated by the caller).
func (c *Config) Root(l skills.LibraryRef) string {
	if l.Shared {
		return c.SharedVersionsPrefix
	}
	return strings.Replace(c.VersionsPrefix, "{user}", l.User, 1)
}

// BlobSpace is the blob space (internal/blobs) of the library l: the
// versions of its skills and pinned threads' snapshots of it keep their
// files there, each once.
func (c *Config) BlobSpace(l skills.LibraryRef) string { return c.Root(l) + "blobs/" }
