package app

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/certs"
	"github.com/skillsvc/skillsvc/internal/embed"
	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/probe"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Config is the whole server configuration. Every field is a flag; every
// flag can also be set as SKILLSVC_<NAME> (upper case, "." and "-" as "_").
type Config struct {
	Listen          string
	HTTPListen      string
	MetricsListen   string
	MetricsTLS      bool
	MetricsAdmin    bool
	MetricsPprof    bool
	MemoryLimit     int64 // bytes; 0 derives it from the caches' budgets (MemoryLimit)
	Storage         string
	DataDir         string
	Examples        string        // when the example skill library is copied in (examples.go)
	Mounts          *mounts.Table // parsed once, when the flag is set
	LogLevel        string
	LogFormat       string
	ShutdownTimeout time.Duration
	Auth            auth.Config
	TLS             certs.Config
	Limits          quota.Config
	Audit           audit.Config
	S3              s3.Config
	VFS             vfs.Config
	Skills          skills.Config
	Embeddings      embed.Config     // --search.embeddings.*: the optional semantic stage of search
	Pins            skills.PinConfig // --library.pin-*; its roots are Library's
	Library         library.Config
	Cache           cache.Config
	Probe           probe.Config
	MCP             mcpserver.Config
	Events          events.Config
	Watch           watch.Config
}

// RegisterFlags registers all flags with their defaults.
func (c *Config) RegisterFlags(f *flag.FlagSet) {
	f.StringVar(&c.Listen, "listen", "127.0.0.1:7070", "gRPC listen address.")
	f.StringVar(&c.HTTPListen, "http.listen", "127.0.0.1:7080", "HTTP address serving MCP at /mcp and every RPC as JSON at POST /skillsvc.v1.<Service>/<Method>; empty disables it.")
	f.StringVar(&c.MetricsListen, "metrics.listen", "", "HTTP address serving Prometheus metrics at /metrics, e.g. 0.0.0.0:9090; empty disables it.")
	f.BoolVar(&c.MetricsTLS, "metrics.tls", false, "Serve metrics over HTTPS with the --tls.* certificate (and client-certificate check).")
	f.BoolVar(&c.MetricsAdmin, "metrics.require-admin", false, "Serve metrics only to callers with an admin token (in jwt mode); otherwise the metrics port is unauthenticated.")
	f.BoolVar(&c.MetricsPprof, "metrics.pprof", false, "Also serve Go's profiles (net/http/pprof) at /debug/pprof/ on the metrics listener, behind the same admin check, to profile a replica under load; off by default: a profile costs CPU and shows internals.")
	f.Int64Var(&c.MemoryLimit, "memory-limit-bytes", 0, "Soft limit on the Go runtime's memory (as GOMEMLIMIT), near which the garbage collector works harder rather than let the heap grow to twice what is live; 0 sets twice the caches' budgets (--skills.max-held-bytes + --skills.reply-cache-bytes + --cache.lru.max-bytes: 448 MiB by default), a negative value none. GOMEMLIMIT in the environment wins.")
	f.StringVar(&c.Storage, "storage", "local", `Object storage: "local" (a directory) or "s3" (AWS S3, MinIO or another S3-compatible server).`)
	f.StringVar(&c.DataDir, "data-dir", "./data", "Directory of the local storage.")
	f.StringVar(&c.Examples, "examples", ExamplesAuto, `When to copy the example skill library into the shared library (--skills.shared-prefix): "auto" on a first run with --storage=local (the data directory is new or empty), "if-empty" whenever the shared library is empty (S3 too), "off" never. Existing files are never overwritten.`)
	c.Mounts = mounts.Default()
	f.Var(tableFlag{&c.Mounts}, "mounts", "Mount table: comma-separated /mount=template:mode, with {user}, {thread} and {ticket} in templates and mode rw or ro.")
	f.StringVar(&c.LogLevel, "log.level", "info", "Log level: debug, info, warn or error.")
	f.StringVar(&c.LogFormat, "log.format", "text", "Log format: text or json.")
	f.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "How long in-flight calls may take to finish on shutdown.")
	c.Auth.RegisterFlagsWithPrefix("auth.", f)
	c.TLS.RegisterFlagsWithPrefix("tls.", f)
	c.Limits.RegisterFlagsWithPrefix("limits.", f)
	c.Audit.RegisterFlagsWithPrefix("audit.", f)
	c.S3.RegisterFlagsWithPrefix("s3.", f)
	c.VFS.RegisterFlagsWithPrefix("vfs.", f)
	c.Skills.RegisterFlagsWithPrefix("skills.", f)
	c.Embeddings.RegisterFlagsWithPrefix("search.embeddings.", f)
	c.Library.RegisterFlagsWithPrefix("library.", f)
	// The storage decides these defaults (storageDefaults), so app says so.
	f.Lookup("skills.index-refresh").Usage += fmt.Sprintf(" With --storage=local the default is %v: listing a directory is cheap.", LocalIndexRefresh)
	f.Lookup("skills.index-max-stale").Usage += " With --storage=local the default is the refresh interval."
	f.Lookup("skills.index-refresh").Usage += fmt.Sprintf(" With events (--events.webhook-token-file or --events.sqs.queue-url) the bucket's change events keep libraries fresh and the default is %v: polling is the safety net.", EventsIndexRefresh)
	f.Lookup("skills.index-max-stale").Usage += fmt.Sprintf(" With events the default is %v: the bound for a change whose event was lost.", EventsIndexMaxStale)
	c.Pins.RegisterFlagsWithPrefix("library.", f)
	c.Cache.RegisterFlagsWithPrefix("cache.", f)
	c.Probe.RegisterFlagsWithPrefix("probe.", f)
	c.MCP.RegisterFlagsWithPrefix("mcp.", f)
	c.Events.RegisterFlagsWithPrefix("events.", f)
	c.Watch.RegisterFlagsWithPrefix("watch.", f)
}

// Validate checks the combination of settings.
func (c *Config) Validate() error {
	switch c.Storage {
	case "local":
		if c.DataDir == "" {
			return errors.New("data-dir is required with --storage=local")
		}
	case "s3":
		if err := c.S3.Validate(); err != nil {
			return err
		}
		if err := c.Mounts.Disjoint(WriteProbeRoot); err != nil {
			return fmt.Errorf("the write-safety probe's key: %w", err)
		}
	default:
		return fmt.Errorf("unknown storage %q: want local or s3", c.Storage)
	}
	switch c.Examples {
	case ExamplesAuto, ExamplesIfEmpty, ExamplesOff:
	default:
		return fmt.Errorf("unknown --examples %q: want %s, %s or %s", c.Examples, ExamplesAuto, ExamplesIfEmpty, ExamplesOff)
	}
	if err := c.Auth.Validate(); err != nil {
		return err
	}
	for _, addr := range []string{c.Listen, c.HTTPListen} {
		if addr == "" {
			continue
		}
		if err := c.Auth.CheckListener(addr); err != nil {
			return err
		}
	}
	if err := c.TLS.Validate(); err != nil {
		return err
	}
	if c.MetricsPprof && c.MetricsListen == "" {
		return errors.New("metrics.pprof needs --metrics.listen")
	}
	if c.MetricsTLS && !c.TLS.Enabled() {
		return errors.New("metrics.tls needs --tls.cert-file and --tls.key-file")
	}
	if err := c.Limits.Validate(); err != nil {
		return err
	}
	if err := c.Embeddings.Validate(); err != nil {
		return err
	}
	if err := c.Skills.Validate(c.Mounts); err != nil {
		return err
	}
	if err := c.Library.Validate(c.Mounts, c.Skills); err != nil {
		return err
	}
	if err := c.Cache.Validate(); err != nil {
		return err
	}
	if err := c.MCP.Validate(); err != nil {
		return err
	}
	if err := c.Probe.Validate(); err != nil {
		return err
	}
	if err := c.validateEvents(); err != nil {
		return err
	}
	if err := c.Watch.Validate(); err != nil {
		return err
	}
	return c.VFS.Validate()
}

// LocalIndexRefresh is --skills.index-refresh and --skills.index-max-stale
// with --storage=local unless they are set. Listing a directory is cheap,
// so a library copied into the data directory is listed afresh by the
// first call a second after the copy; the flags' own defaults (5s
// revalidated in the background, 30s at most) save S3 LIST requests.
const LocalIndexRefresh = time.Second

// EventsIndexRefresh and EventsIndexMaxStale are --skills.index-refresh and
// --skills.index-max-stale with events on (storage S3) unless they are set:
// a change shows up by its event within a second, so polling is only the
// safety net for an event lost, and a replica lists each library it serves
// once every 5 minutes at most (less while it stays unchanged, libindex.FreshFor).
const (
	EventsIndexRefresh  = 5 * time.Minute
	EventsIndexMaxStale = 15 * time.Minute
)

// storageDefaults applies the defaults that depend on the storage and the
// event paths to the flags not given (by name).
func (c *Config) storageDefaults(given map[string]bool) {
	const refresh, maxStale = "skills.index-refresh", "skills.index-max-stale"
	switch {
	case c.Storage == "local":
		if !given[refresh] {
			c.Skills.IndexRefresh = LocalIndexRefresh
			if given[maxStale] {
				c.Skills.IndexRefresh = min(LocalIndexRefresh, c.Skills.IndexMaxStale)
			}
		}
		if !given[maxStale] {
			c.Skills.IndexMaxStale = c.Skills.IndexRefresh
		}
	case c.Events.Enabled():
		if !given[refresh] {
			c.Skills.IndexRefresh = EventsIndexRefresh
			if given[maxStale] {
				c.Skills.IndexRefresh = min(EventsIndexRefresh, c.Skills.IndexMaxStale)
			}
		}
		if !given[maxStale] {
			c.Skills.IndexMaxStale = max(EventsIndexMaxStale, c.Skills.IndexRefresh)
		}
	}
}

// tableFlag parses the mount table when the flag is set, so a bad table
// fails with the other flag errors and is parsed only once.
type tableFlag struct{ t **mounts.Table }

func (f tableFlag) String() string {
	if f.t == nil || *f.t == nil {
		return ""
	}
	return (*f.t).String()
}

func (f tableFlag) Set(s string) error {
	t, err := mounts.Parse(s)
	if err != nil {
		return err
	}
	*f.t = t
	return nil
}

// envName maps a flag name to its environment variable.
func envName(flagName string) string {
	return "SKILLSVC_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(flagName))
}

// parse applies SKILLSVC_* environment variables, then the command line, so
// flags win over the environment, and then the defaults that depend on
// other flags (Config.storageDefaults) to c.
func parse(c *Config, f *flag.FlagSet, args []string, getenv func(string) string) error {
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		if v := getenv(envName(fl.Name)); v != "" {
			if err := fl.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(fl.Name), err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	f.VisitAll(func(fl *flag.Flag) {
		if getenv(envName(fl.Name)) != "" {
			given[fl.Name] = true
		}
	})
	c.storageDefaults(given)
	return nil
}

// Load reads the configuration from args (the command line without the
// program name) and getenv (os.Getenv), and validates it. With -h it
// prints the usage and returns flag.ErrHelp.
func Load(args []string, getenv func(string) string) (Config, error) {
	var c Config
	f := flag.NewFlagSet("skillsvc", flag.ContinueOnError)
	c.RegisterFlags(f)
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: skillsvc [flags]\n\nEvery flag can also be set as SKILLSVC_<FLAG>, e.g. SKILLSVC_S3_BUCKET for -s3.bucket.\n\n")
		f.PrintDefaults()
	}
	if err := parse(&c, f, args, getenv); err != nil {
		return c, err
	}
	return c, c.Validate()
}
