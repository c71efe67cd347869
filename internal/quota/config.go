package quota

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/options"
)

// ErrInvalidConfig: the limit settings are out of range or do not fit
// together.
var ErrInvalidConfig = errors.New("quota: invalid configuration")

// ErrInvalidOverrides: the per-user overrides file cannot be used. At New
// it fails the start; on a reload the previous overrides stay in force.
var ErrInvalidOverrides = errors.New("quota: invalid overrides file")

// Config holds the default per-user limits and where to find per-user
// exceptions.
type Config struct {
	// Rate is the cost one user may spend per second (the token bucket's
	// refill), in units of the cost table (cost.go): one unit is a storage
	// listing page or write, a tenth is a call or a storage read; 0 turns
	// the rate limit off.
	Rate float64
	// Burst is the bucket's size: the cost a user who was idle may spend
	// at once, and the most debt a call's storage work can leave.
	Burst int
	// Concurrency is how many calls one user may have in flight; 0 turns
	// the concurrency limit off.
	Concurrency int
	// OverridesFile is an optional YAML file of per-user limits, re-read
	// every ReloadInterval.
	OverridesFile  string
	ReloadInterval time.Duration
	// MaxTrackedUsers bounds the per-user state held in memory. A user
	// forgotten to make room starts again with a full bucket; a user with
	// calls in flight is never forgotten.
	MaxTrackedUsers int
}

// RegisterFlagsWithPrefix registers the flags with their defaults, e.g. with
// prefix "limits.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.Float64Var(&c.Rate, prefix+"rate", 100, "Cost one user may spend per second on average (token bucket refill); 0 turns the rate limit off. A call costs 0.1 when admitted, plus, when it ends, 0.1 per storage read (GET, HEAD) and 1 per storage listing page, write or delete it made: a read served from memory costs 0.1, a listing of storage 1.1.")
	f.IntVar(&c.Burst, prefix+"burst", 1000, "Cost one user may spend at once after being idle (token bucket size, in the unit of --limits.rate); also the most debt one call's storage work can leave, refusing the user's calls until the rate has paid it off.")
	f.IntVar(&c.Concurrency, prefix+"concurrency", 32, "Calls one user may have in flight at once (a stream counts as one call for its whole life); 0 turns the concurrency limit off.")
	f.StringVar(&c.OverridesFile, prefix+"overrides-file", "", `Optional YAML file of per-user limits, e.g. "users: {alice: {rate: 10, burst: 20, concurrency: 4}}"; an omitted field takes the default. Changes apply without a restart; a bad edit keeps the previous overrides.`)
	f.DurationVar(&c.ReloadInterval, prefix+"reload-interval", 10*time.Second, "How often the overrides file is checked for changes.")
	f.IntVar(&c.MaxTrackedUsers, prefix+"max-tracked-users", 100000, "Most users whose limiter state is kept in memory; the least recently seen are forgotten first (and start again with a full bucket). Users with calls in flight are always kept.")
	options.Tag(f, options.Basic, prefix+"rate", prefix+"burst", prefix+"concurrency")
}

// DefaultConfig returns the defaults RegisterFlagsWithPrefix sets.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the settings without reading the overrides file.
func (c *Config) Validate() error {
	if err := c.defaults().validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	switch {
	case c.OverridesFile != "" && c.ReloadInterval <= 0:
		return fmt.Errorf("%w: reload-interval must be positive", ErrInvalidConfig)
	case c.MaxTrackedUsers <= 0:
		return fmt.Errorf("%w: max-tracked-users must be positive", ErrInvalidConfig)
	}
	return nil
}

func (c *Config) defaults() limits {
	return limits{rate: c.Rate, burst: c.Burst, concurrency: c.Concurrency}
}

// maxBurst keeps a bucket's size in tokens (burst × 100, cost.go) far from
// overflowing.
const maxBurst = 1 << 40

// limits are one user's limits, resolved from the defaults and overrides.
type limits struct {
	rate        float64 // requests per second; 0 is unlimited
	burst       int
	concurrency int // calls in flight; 0 is unlimited
}

func (l limits) unlimited() bool { return l.rate == 0 && l.concurrency == 0 }

func (l limits) validate() error {
	switch {
	case math.IsNaN(l.rate) || math.IsInf(l.rate, 0) || l.rate < 0:
		return fmt.Errorf("rate %v must be a finite number, 0 or more", l.rate)
	case l.burst < 0:
		return fmt.Errorf("burst %d must not be negative", l.burst)
	case l.burst > maxBurst:
		return fmt.Errorf("burst %d must be at most %d", l.burst, maxBurst)
	case l.rate > 0 && l.burst == 0:
		// An empty bucket that never holds a token refuses every call.
		return errors.New("burst must be at least 1 while the rate limit is on")
	case l.concurrency < 0:
		return fmt.Errorf("concurrency %d must not be negative", l.concurrency)
	}
	return nil
}

// overridesFile is the shape of the overrides file.
type overridesFile struct {
	Users map[string]*override `yaml:"users"`
}

// override is one user's exceptions; a nil field keeps the default.
type override struct {
	Rate        *float64 `yaml:"rate"`
	Burst       *int     `yaml:"burst"`
	Concurrency *int     `yaml:"concurrency"`
}

// parseOverrides returns the filewatch parser of the overrides file, which
// resolves every user's limits against the defaults once per change rather
// than once per call.
func parseOverrides(defaults limits) func([][]byte) (map[string]limits, error) {
	return func(contents [][]byte) (map[string]limits, error) {
		dec := yaml.NewDecoder(bytes.NewReader(contents[0]))
		dec.KnownFields(true)
		var f overridesFile
		if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // an empty file overrides nothing
			return nil, fmt.Errorf("%w: %w", ErrInvalidOverrides, err)
		}
		var extra yaml.Node
		if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: want one YAML document", ErrInvalidOverrides)
		}
		users := make([]string, 0, len(f.Users))
		for u := range f.Users {
			users = append(users, u)
		}
		slices.Sort(users) // the same file gives the same error
		out := make(map[string]limits, len(users))
		for _, u := range users {
			if u == "" {
				return nil, fmt.Errorf("%w: empty user name", ErrInvalidOverrides)
			}
			lim := defaults
			if o := f.Users[u]; o != nil {
				if o.Rate != nil {
					lim.rate = *o.Rate
				}
				if o.Burst != nil {
					lim.burst = *o.Burst
				}
				if o.Concurrency != nil {
					lim.concurrency = *o.Concurrency
				}
			}
			if err := lim.validate(); err != nil {
				return nil, fmt.Errorf("%w: user %q: %w", ErrInvalidOverrides, u, err)
			}
			out[u] = lim
		}
		return out, nil
	}
}
