package usage

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/skillsvc/skillsvc/internal/options"
)

// Config says whether usage is counted, how often each replica flushes its
// counts, how long they are kept and how much memory counting may hold.
type Config struct {
	Enabled bool
	// FlushInterval is how often a replica sends its counts to the shared
	// store; a Redis outage loses at most about this much.
	FlushInterval time.Duration
	// RedisRetentionDays is how long the per-day counters stay in Redis;
	// BucketRetentionDays how long the daily roll-ups stay in the bucket.
	RedisRetentionDays  int
	BucketRetentionDays int
	// MaxEntries bounds what a replica holds between flushes: counters,
	// distinct users and threads, searches and threads' last searches.
	// Events that would need a new entry past it are dropped and counted.
	MaxEntries int
	// TopQueries is how many distinct queries a library keeps per day.
	TopQueries int
	// QueryMinUsers is how many distinct users must have searched a query
	// in a report's range before anyone but its searcher sees its text.
	QueryMinUsers int
	// SearchTTL is how long after a search an activation in the same
	// thread counts as the search's outcome.
	SearchTTL time.Duration
	// RecentDays is how many days of activations order a listing by use
	// (Ranks): today and the days before it.
	RecentDays int
}

// RegisterFlagsWithPrefix registers the flags under prefix (e.g. "usage.").
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.BoolVar(&c.Enabled, prefix+"enabled", true, "Count skill usage (activations, file reads, searches) per library and day: in Redis when --cache.redis.addrs is set, rolled up daily into the bucket. Off records nothing.")
	f.DurationVar(&c.FlushInterval, prefix+"flush-interval", 10*time.Second, "How often each replica sends its usage counts to Redis (or its in-process store); a failed flush is kept and merged with the next (within --usage.max-entries) until one lands.")
	f.IntVar(&c.RedisRetentionDays, prefix+"redis-retention-days", 8, "Days a day's usage counters stay in Redis; the daily roll-up into the bucket must run within them.")
	f.IntVar(&c.BucketRetentionDays, prefix+"bucket-retention-days", 400, "Days the daily usage roll-ups stay in the bucket; older ones are deleted when the library is next rolled up.")
	f.IntVar(&c.MaxEntries, prefix+"max-entries", 50000, "Most usage entries (counters, distinct users and threads, searches) a replica holds between flushes; events past it are dropped and counted in skillsvc_usage_dropped_total.")
	f.IntVar(&c.TopQueries, prefix+"top-queries", 100, "Distinct search queries kept per library and day (the most frequent).")
	f.IntVar(&c.QueryMinUsers, prefix+"query-min-users", 5, "Distinct users who must have searched a query in a report's range before a report other than the searcher's own (a team's, the organization's) shows its text (k-anonymity); fewer, and it is summed into the report's other searches without its text. A user's own report shows all their queries. 1 to 100.")
	f.DurationVar(&c.SearchTTL, prefix+"search-ttl", 30*time.Minute, "How long after a search an activation in the same thread counts as having come from it.")
	f.IntVar(&c.RecentDays, prefix+"recent-days", 7, "Days of activations (today and the days before) by which a prompt block without a query orders each layer's skills (--skills.order-by-use) and a search breaks ties (--skills.search-use-prior).")
	options.Tag(f, options.Basic, prefix+"enabled")
}

// maxQueryMinUsers bounds the users' hashes a shared library keeps per
// query (QueryMinUsers of them), and so each query entry's size.
const maxQueryMinUsers = 100

// DefaultConfig is the flags' defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the bounds.
func (c *Config) Validate() error {
	switch {
	case c.FlushInterval <= 0:
		return errors.New("usage: flush-interval must be positive")
	case c.RedisRetentionDays < 2:
		return errors.New("usage: redis-retention-days must be at least 2 (yesterday is rolled up from it)")
	case c.BucketRetentionDays < 1:
		return errors.New("usage: bucket-retention-days must be positive")
	case c.MaxEntries <= 0 || c.TopQueries <= 0:
		return errors.New("usage: max-entries and top-queries must be positive")
	case c.QueryMinUsers < 1 || c.QueryMinUsers > maxQueryMinUsers:
		return fmt.Errorf("usage: query-min-users must be within 1 and %d", maxQueryMinUsers)
	case c.SearchTTL <= 0:
		return errors.New("usage: search-ttl must be positive")
	case c.RecentDays < 1:
		return errors.New("usage: recent-days must be positive")
	}
	return nil
}
