package watch

import (
	"errors"
	"flag"
	"time"
)

// Config bounds the feed.
type Config struct {
	// MaxPerUser is the most watches one user may hold open on a replica.
	MaxPerUser int
	// MaxPerReplica is the most watches a replica serves at once.
	MaxPerReplica int
	// ResumeTTL is how long a state stays known for resuming from its digest.
	ResumeTTL time.Duration
	// Interval is how often a watched library is looked at without being
	// told of a change; 0: half of --skills.index-refresh (a second when
	// that is 0).
	Interval time.Duration
	// MaxStateBytes bounds a state kept for resuming; a bigger one is not
	// kept (a resume from it is a reset).
	MaxStateBytes int
}

// RegisterFlagsWithPrefix registers the flags under prefix (e.g. "watch.").
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.IntVar(&c.MaxPerUser, prefix+"max-per-user", 8, "Most WatchSkills streams one user may hold open on a replica; one more is RESOURCE_EXHAUSTED. MCP sessions' change notifications are not counted (their sessions are bounded by --mcp.max-sessions-per-identity and --mcp.max-sessions).")
	f.IntVar(&c.MaxPerReplica, prefix+"max-per-replica", 4096, "Most WatchSkills streams a replica serves at once.")
	f.DurationVar(&c.ResumeTTL, prefix+"resume-ttl", time.Hour, "How long a catalog state is kept (in the shared cache) for a WatchSkills client to resume from its digest; older ones are answered with reset.")
	f.DurationVar(&c.Interval, prefix+"interval", 0, "How often a watched library is checked without being told of a change (a bucket upload without S3 events); 0 means half of --skills.index-refresh.")
	f.IntVar(&c.MaxStateBytes, prefix+"max-state-bytes", 4<<20, "Largest encoded catalog state kept for resuming; a bigger catalog's watchers resume with reset.")
}

// DefaultConfig is the flags' defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the bounds.
func (c *Config) Validate() error {
	switch {
	case c.MaxPerUser <= 0 || c.MaxPerReplica <= 0:
		return errors.New("watch: max-per-user and max-per-replica must be positive")
	case c.MaxPerUser > c.MaxPerReplica:
		return errors.New("watch: max-per-user must not exceed max-per-replica")
	case c.ResumeTTL <= 0:
		return errors.New("watch: resume-ttl must be positive")
	case c.Interval < 0:
		return errors.New("watch: interval must not be negative")
	case c.MaxStateBytes <= 0:
		return errors.New("watch: max-state-bytes must be positive")
	}
	return nil
}

// interval is Interval with its default applied for an index refresh of
// refresh.
func (c *Config) interval(refresh time.Duration) time.Duration {
	switch {
	case c.Interval > 0:
		return c.Interval
	case refresh > 0:
		return max(refresh/2, 10*time.Millisecond)
	}
	return time.Second
}
