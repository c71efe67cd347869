package cache

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/options"
)

// Config selects the cache stack New builds: the in-process LRU alone, or the
// LRU in front of Redis when Redis has an address.
type Config struct {
	LRU   LRUConfig
	Redis RedisConfig
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	c.LRU.RegisterFlagsWithPrefix(prefix+"lru.", f)
	c.Redis.RegisterFlagsWithPrefix(prefix+"redis.", f)
}

// Validate checks both layers; Redis only when it is enabled.
func (c *Config) Validate() error {
	if err := c.LRU.Validate(); err != nil {
		return err
	}
	return c.Redis.Validate()
}

// LRUConfig sizes the in-process cache.
type LRUConfig struct {
	// MaxBytes bounds keys plus values plus a small fixed cost per entry.
	MaxBytes int64
	// MaxTTL caps how long an item stays in process memory in front of
	// Redis, so a change another replica makes shows up here within it.
	// Without Redis the caller's TTL applies.
	MaxTTL time.Duration
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *LRUConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.Int64Var(&c.MaxBytes, prefix+"max-bytes", 32<<20, "Most bytes (keys and values) the in-process cache holds; least recently used items are evicted first.")
	f.DurationVar(&c.MaxTTL, prefix+"max-ttl", 5*time.Second, "With Redis, the longest an item is kept in process memory: another replica's change shows up within it.")
}

// Validate checks the limits.
func (c *LRUConfig) Validate() error {
	if c.MaxBytes <= 0 || c.MaxTTL <= 0 {
		return fmt.Errorf("%w: lru max-bytes and max-ttl must be positive", ErrInvalidConfig)
	}
	return nil
}

// RedisConfig says how to reach Redis: a single node, Sentinel (with
// MasterName) or Cluster (several addresses, or Cluster set).
type RedisConfig struct {
	// Addrs is empty when Redis is off.
	Addrs      []string
	Cluster    bool
	MasterName string
	Username   string
	Password   Secret
	DB         int
	TLS        TLSConfig

	PoolSize     int
	DialTimeout  time.Duration
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	PoolTimeout  time.Duration

	// KeyPrefix is put before every key (and the Keyspace). It must hold
	// no hash tag: the caller's {…} picks the slot.
	KeyPrefix string
	// Keyspace is the deployment's, set by the service from its storage
	// (not a flag): it is what keeps deployments sharing a Redis apart.
	Keyspace Keyspace

	Breaker BreakerConfig
}

// TLSConfig turns on TLS to Redis.
type TLSConfig struct {
	Enabled bool
	// CAFile replaces the system roots when set (a private CA).
	CAFile     string
	ServerName string
}

// BreakerConfig says when to stop calling Redis and for how long.
type BreakerConfig struct {
	// Failures is how many calls in a row must fail to open the breaker.
	Failures int
	// CoolDown is how long an open breaker fails calls at once before one
	// probe call may go through (half-open); a success closes it again.
	CoolDown time.Duration
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *RedisConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.Var((*stringList)(&c.Addrs), prefix+"addrs", "Comma-separated Redis host:port addresses; empty keeps the cache in process. One address is a single node; several are Cluster seed nodes, or Sentinels when master-name is set.")
	f.BoolVar(&c.Cluster, prefix+"cluster", false, "Treat a single address as a Redis Cluster endpoint (e.g. a managed cluster's configuration endpoint).")
	f.StringVar(&c.MasterName, prefix+"master-name", "", "Sentinel master name; the addresses are then Sentinels.")
	f.StringVar(&c.Username, prefix+"username", "", "Redis ACL user name.")
	f.Var(&c.Password, prefix+"password", "Redis password.")
	f.IntVar(&c.DB, prefix+"db", 0, "Redis database number (single node and Sentinel only).")
	f.BoolVar(&c.TLS.Enabled, prefix+"tls.enabled", false, "Connect to Redis over TLS.")
	f.StringVar(&c.TLS.CAFile, prefix+"tls.ca-file", "", "PEM file of the CA that signed Redis's certificate; empty uses the system roots.")
	f.StringVar(&c.TLS.ServerName, prefix+"tls.server-name", "", "Name to verify Redis's certificate against; empty uses the host of the address.")
	f.IntVar(&c.PoolSize, prefix+"pool-size", 32, "Connections kept per Redis node.")
	f.DurationVar(&c.DialTimeout, prefix+"dial-timeout", 500*time.Millisecond, "How long connecting to Redis may take.")
	f.DurationVar(&c.ReadTimeout, prefix+"read-timeout", 250*time.Millisecond, "How long one Redis reply may take; the caller's deadline applies too when it is sooner.")
	f.DurationVar(&c.WriteTimeout, prefix+"write-timeout", 250*time.Millisecond, "How long sending one Redis command may take.")
	f.DurationVar(&c.PoolTimeout, prefix+"pool-timeout", 250*time.Millisecond, "How long a call waits for a free connection when all are busy.")
	f.StringVar(&c.KeyPrefix, prefix+"key-prefix", "skillsvc:", "Prefix of every Redis key and channel. Deployments sharing a Redis are kept apart by their storage (S3 endpoint and bucket, or data directory), whose digest follows the prefix and frames every value, whatever the prefix; replicas of one deployment share entries when they name the same storage (the endpoint normalized: case, default port, trailing slash, AWS however named).")
	f.IntVar(&c.Breaker.Failures, prefix+"breaker.failures", 5, "Failed Redis calls in a row that open the circuit breaker.")
	f.DurationVar(&c.Breaker.CoolDown, prefix+"breaker.cool-down", 10*time.Second, "How long an open breaker skips Redis before one call probes it again.")
	options.Tag(f, options.Basic, prefix+"addrs", prefix+"password", prefix+"key-prefix")
	options.Secret(f, prefix+"password")
}

// Enabled reports whether Redis is configured.
func (c *RedisConfig) Enabled() bool { return len(c.Addrs) > 0 }

// Validate checks an enabled config; a disabled one is always valid.
func (c *RedisConfig) Validate() error {
	if !c.Enabled() {
		return nil
	}
	for _, a := range c.Addrs {
		if a == "" || !strings.Contains(a, ":") {
			return fmt.Errorf("%w: redis address %q must be host:port", ErrInvalidConfig, a)
		}
	}
	switch {
	case c.MasterName != "" && c.Cluster:
		return fmt.Errorf("%w: redis master-name (Sentinel) and cluster exclude each other", ErrInvalidConfig)
	case c.DB != 0 && (c.Cluster || (len(c.Addrs) > 1 && c.MasterName == "")):
		return fmt.Errorf("%w: redis db must be 0 with Redis Cluster", ErrInvalidConfig)
	case c.DB < 0:
		return fmt.Errorf("%w: redis db must not be negative", ErrInvalidConfig)
	case c.TLS.CAFile != "" && !c.TLS.Enabled, c.TLS.ServerName != "" && !c.TLS.Enabled:
		return fmt.Errorf("%w: redis tls.ca-file and tls.server-name need tls.enabled", ErrInvalidConfig)
	case c.PoolSize <= 0:
		return fmt.Errorf("%w: redis pool-size must be positive", ErrInvalidConfig)
	case c.DialTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.PoolTimeout <= 0:
		return fmt.Errorf("%w: redis timeouts must be positive: a cache call must be bounded", ErrInvalidConfig)
	case strings.ContainsAny(c.KeyPrefix, "{}"):
		return fmt.Errorf("%w: redis key-prefix %q must not contain { or }: a hash tag there would put every key in one Cluster slot", ErrInvalidConfig, c.KeyPrefix)
	case c.Breaker.Failures <= 0 || c.Breaker.CoolDown <= 0:
		return fmt.Errorf("%w: redis breaker.failures and breaker.cool-down must be positive", ErrInvalidConfig)
	}
	return nil
}

// Secret is a flag and YAML value that never shows itself: String, logs and
// YAML output print ******** when it is set.
type Secret struct {
	Value string
}

const hidden = "********"

// String hides the value; flag.PrintDefaults and %v call it.
func (s Secret) String() string {
	if s.Value == "" {
		return ""
	}
	return hidden
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return `cache.Secret{Value:"` + s.String() + `"}` }

// Set implements flag.Value.
func (s *Secret) Set(v string) error {
	s.Value = v
	return nil
}

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalYAML hides the value when a config is printed.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalYAML reads the value from a YAML string.
func (s *Secret) UnmarshalYAML(n *yaml.Node) error { return n.Decode(&s.Value) }

// stringList is a comma-separated flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// DefaultConfig returns the flag defaults (Redis off).
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}
