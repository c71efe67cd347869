package skills

import (
	"errors"
	"flag"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/snapshots"
)

// PinConfig configures pinned threads (pins.go).
type PinConfig struct {
	// Roots are the library's, set from --library.versions-prefix and
	// --library.shared-versions-prefix, which the authors' path registers.
	Roots layout.VersionRoots
	// Retention is how long a thread keeps the library it pinned; after
	// it, its next pinned call pins the library as it is then.
	Retention time.Duration
	// MaxBytes bounds the bytes of skill files one pin copies (the user's
	// and the shared library together).
	MaxBytes int64
	// GCGrace is --library.gc-grace, which the authors' path registers: a
	// pin writes an old blob it reuses again first (blobs.Store.Fresh).
	GCGrace time.Duration
}

// DefaultGCGrace is the default of --library.gc-grace.
const DefaultGCGrace = 24 * time.Hour

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *PinConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	c.Roots, c.GCGrace = layout.DefaultVersionRoots(), DefaultGCGrace
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

// snapshotsConfig is the snapshot store's settings c makes; the pins fill
// in the bounds that follow from the catalog's (newPins).
func (c PinConfig) snapshotsConfig() snapshots.Config {
	return snapshots.Config{Retention: c.Retention, MaxBytes: c.MaxBytes, GCGrace: c.GCGrace, Keys: c.Roots}
}
