// Package libconfig is the configuration of the authors' path
// (--library.*): the versions roots, review, the bounds of versions and
// proposals, garbage collection's grace, the memory budget and the
// signature policy. internal/library runs on it.
package libconfig

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/options"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Config is the authors' path's configuration (--library.*).
type Config struct {
	// Roots are each library's versions root: its versions, and the blobs
	// and snapshots pinned threads share with them (layout.VersionRoots).
	// Both lie outside every mount: no worker can write a version.
	Roots layout.VersionRoots
	// Review makes a non-admin's publish to the shared library, and a
	// member's to its team's, a pending version until an admin approves
	// it; without it such a publish is refused.
	Review bool
	// LockWait bounds how long a change waits for another change of the
	// same skill to finish (ABORTED after).
	LockWait time.Duration
	// MaxVersions bounds the versions one skill keeps listed and resolved.
	MaxVersions int
	// MaxProposals and MaxProposalsPerAuthor bound one skill's proposals
	// (non-admins' pending publishes, kept apart from its versions): all
	// of them, and one author's pending ones, so proposals never crowd
	// out the versions or the other authors.
	MaxProposals          int
	MaxProposalsPerAuthor int
	// GCGrace is how old a blob no version or snapshot refers to must be
	// before garbage collection deletes it: a publish or pin in flight
	// writes its blobs before the record naming them.
	GCGrace time.Duration
	// MemoryBudget is the replica's Budget in bytes: publishes received
	// and written, version records and files read; MemoryWait how long a
	// call waits for it before RESOURCE_EXHAUSTED.
	MemoryBudget int64
	MemoryWait   time.Duration
	// RecoverEvery is how often a replica finishes the publishes a crash
	// interrupted (internal/library); also once at start.
	RecoverEvery time.Duration
	// CoexistenceTimeout bounds a publish's coexistence check and
	// triggering evals (internal/coexist); 0 turns them off. Past it the publish
	// goes ahead with a warning that the check could not run.
	CoexistenceTimeout time.Duration
	// Scan is each library's scan policy (internal/scanpolicy): off, warn
	// or block, for the organization's library, teams and users.
	Scan scanpolicy.Policy
	// ScanWorkers is how many background scans of uploaded skills a
	// replica runs at once (--library.scan-workers).
	ScanWorkers int
	// Pins are pinned threads' own settings (--library.pin-*); PinConfig
	// adds what they share with the versions.
	Pins skills.PinConfig
	// Signing is the signature policy (--library.signing-keys,
	// --library.require-signature); Validate loads it into policy.
	Signing signing.Config
	policy  *signing.Policy
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	def := layout.DefaultVersionRoots()
	f.StringVar(&c.Roots.User, prefix+"versions-prefix", def.User, "Key prefix of what a user's library keeps outside every mount: published versions (records, labels), content-addressed blobs, pinned threads' snapshots and pins.")
	f.StringVar(&c.Roots.Shared, prefix+"shared-versions-prefix", def.Shared, "The shared library's versions prefix; outside every mount and the shared library, its first segment no valid user ID.")
	f.StringVar(&c.Roots.Team, prefix+"team-versions-prefix", def.Team, "Each team library's versions prefix; {team} is the team ID (a whole segment), outside every mount and apart from --skills.team-prefix and the team's index and protected-list keys.")
	f.BoolVar(&c.Review, prefix+"review", false, "Publishing to the shared library by a non-admin, or to a team library by a member, creates a pending version that only its author and admins see until an admin approves it (ReviewSkillVersion); without it such a publish is PERMISSION_DENIED.")
	options.Tag(f, options.Basic, prefix+"review")
	c.Scan = scanpolicy.DefaultPolicy()
	f.Var(&c.Scan, prefix+"scan", "Scan policy of each library (every publish, and every skill an out-of-band upload changes, scanned by internal/scan, never running its code): off; warn (findings shown as warnings in the publish reply, to reviewers, in ListSkills and GetSkill); block (a publish with a high-severity finding is refused with FAILED_PRECONDITION and its findings; an uploaded skill with one, or not scanned yet, is served to no one: listed as invalid, with why, only to admins (and a user their own) with ListSkills include_invalid). One mode for all, then overrides: MODE[,shared=MODE][,teams=MODE][,users=MODE][,team:ID=MODE], e.g. warn,shared=block.")
	options.Tag(f, options.Basic, prefix+"scan")
	f.IntVar(&c.ScanWorkers, prefix+"scan-workers", 1, "Background scans of uploaded skills (out of band) one replica runs at once, each taking a core while it scans: a large upload is scanned at that pace beside the calls instead of taking every core. A publish's scan runs in its call, not here.")
	f.DurationVar(&c.LockWait, prefix+"lock-wait", 10*time.Second, "How long a publish, delete, rollback or review waits for another change of the same skill to finish.")
	f.DurationVar(&c.GCGrace, prefix+"gc-grace", skills.DefaultGCGrace, "Garbage collection (AdminService.CollectLibraryGarbage) deletes a blob no version or pinned snapshot refers to only once it is this old, so a publish or pin in flight keeps its blobs; at least 10m.")
	f.IntVar(&c.MaxVersions, prefix+"max-versions", 1000, "Most versions of one skill listed and resolved; a publish past it is refused (FAILED_PRECONDITION). Proposals (pending publishes) are kept apart and never count.")
	f.IntVar(&c.MaxProposals, prefix+"max-proposals", 100, "Most proposals (pending or rejected) one skill keeps; a proposal past it is refused (FAILED_PRECONDITION) until an admin rejects or deletes some (AdminService.RejectProposals).")
	f.IntVar(&c.MaxProposalsPerAuthor, prefix+"max-proposals-per-author", 10, "Most pending proposals one author keeps for one skill; a proposal past it is refused (FAILED_PRECONDITION).")
	f.Int64Var(&c.MemoryBudget, prefix+"memory-budget", 128<<20, "Bytes of memory one replica gives publishes (the folder received, then written) and version reads (records listed, files read, rollbacks) at once; a call beyond it waits --library.memory-wait, then is RESOURCE_EXHAUSTED with a retry delay. One publish larger than the budget runs alone.")
	f.DurationVar(&c.MemoryWait, prefix+"memory-wait", 2*time.Second, "How long a publish or version read waits for --library.memory-budget before RESOURCE_EXHAUSTED.")
	f.DurationVar(&c.CoexistenceTimeout, prefix+"coexistence-timeout", 5*time.Second, "How long a publish (validate_only too) may spend searching the target library for skills the new version competes with and running its eval_queries.json; past it the publish goes ahead with a warning that the check could not run. 0 turns the check off.")
	f.DurationVar(&c.RecoverEvery, prefix+"recover-every", time.Minute, "How often each replica finishes publishes a crash interrupted (from their intent objects under the shared versions prefix); also once at start.")
	// A pin snapshots the library beside its versions: one owner of the
	// prefix, so one struct registers all of it.
	c.Pins.RegisterFlagsWithPrefix(prefix, f)
	c.Signing.RegisterFlagsWithPrefix(prefix, f)
}

// PinConfig is the pinned threads' configuration: their own flags, and the
// versions roots (whose blob spaces snapshots share) and the garbage
// collection grace of the versions.
func (c *Config) PinConfig() skills.PinConfig {
	p := c.Pins
	p.Roots, p.GCGrace = c.Roots, c.GCGrace
	return p
}

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the layout against the mount table and the catalog's
// library keys (sk).
func (c *Config) Validate(table *mounts.Table, sk skills.Config) error {
	if err := c.Roots.Validate(table); err != nil {
		return err
	}
	if err := c.Roots.Apart(sk.Keys()); err != nil {
		return err
	}
	if c.LockWait <= 0 || c.MaxVersions <= 0 || c.MaxProposals <= 0 || c.MaxProposalsPerAuthor <= 0 || c.MemoryBudget <= 0 || c.MemoryWait < 0 || c.RecoverEvery <= 0 || c.CoexistenceTimeout < 0 || c.ScanWorkers <= 0 {
		return errors.New("library: lock-wait, max-versions, max-proposals, max-proposals-per-author, memory-budget, recover-every and scan-workers must be positive, memory-wait and coexistence-timeout not negative")
	}
	if c.MaxProposalsPerAuthor > c.MaxProposals {
		return fmt.Errorf("library: max-proposals-per-author %d is over max-proposals %d", c.MaxProposalsPerAuthor, c.MaxProposals)
	}
	if c.GCGrace < MinGCGrace {
		return fmt.Errorf("library: gc-grace %v is under %v", c.GCGrace, MinGCGrace)
	}
	pol, err := c.Signing.Load()
	if err != nil {
		return err
	}
	c.policy = pol
	return nil
}

// Policy is the signature policy Validate loaded.
func (c *Config) Policy() *signing.Policy { return c.policy }

// Root is the versions root of the library l (validated by the caller);
// layout.VersionRoots.Root decides it, for pins too.
func (c *Config) Root(l layout.LibraryRef) string { return c.Roots.Root(l) }

// BlobSpace is the blob space (internal/blobs) of the library l: the
// versions of its skills and pinned threads' snapshots of it keep their
// files there, each once.
func (c *Config) BlobSpace(l layout.LibraryRef) string { return c.Roots.BlobSpace(l) }

// MinGCGrace is the least --library.gc-grace: a publish or a pin writes
// its blobs at most this long before its record.
const MinGCGrace = 10 * time.Minute
