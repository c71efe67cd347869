package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
	flagopt "github.com/skillsvc/skillsvc/internal/options"
	"github.com/skillsvc/skillsvc/internal/probe"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/usage"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Config is the whole server configuration. Every field is a flag; every
// flag can also be set as SKILLSVC_<NAME> (upper case, "." and "-" as "_")
// and as a key of the YAML file --config.file names (options.Parse).
type Config struct {
	ConfigFile      string // --config.file: read by options.Parse before the flags
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
	Embeddings      embed.Config   // --search.embeddings.*: the optional semantic stage of search
	Library         library.Config // --library.*, pins too
	Cache           cache.Config
	Probe           probe.Config
	MCP             mcpserver.Config
	Events          events.Config
	Watch           watch.Config
	Usage           usage.Config // --usage.*: skill usage counted per library and day
}

// RegisterFlags registers all flags with their defaults.
func (c *Config) RegisterFlags(f *flag.FlagSet) {
	f.StringVar(&c.ConfigFile, ConfigFileFlag, "", "YAML config file: the options below as keys, nested at each \".\" (s3.bucket is bucket under s3); a list is an option's comma-separated form. Flags and SKILLSVC_* variables override it; skillsvc config --defaults prints a complete one.")
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
	flagopt.Tag(f, flagopt.Basic, ConfigFileFlag, "listen", "http.listen", "metrics.listen", "storage", "data-dir", "examples", "mounts", "log.level", "log.format")
	c.Auth.RegisterFlagsWithPrefix("auth.", f)
	c.TLS.RegisterFlagsWithPrefix("tls.", f)
	c.Limits.RegisterFlagsWithPrefix("limits.", f)
	c.Audit.RegisterFlagsWithPrefix("audit.", f)
	c.S3.RegisterFlagsWithPrefix("s3.", f)
	c.VFS.RegisterFlagsWithPrefix("vfs.", f)
	c.Skills.RegisterFlagsWithPrefix("skills.", f)
	c.Embeddings.RegisterFlagsWithPrefix("search.embeddings.", f)
	c.Library.RegisterFlagsWithPrefix("library.", f)
	c.Cache.RegisterFlagsWithPrefix("cache.", f)
	c.Probe.RegisterFlagsWithPrefix("probe.", f)
	c.MCP.RegisterFlagsWithPrefix("mcp.", f)
	c.Events.RegisterFlagsWithPrefix("events.", f)
	c.Watch.RegisterFlagsWithPrefix("watch.", f)
	c.Usage.RegisterFlagsWithPrefix("usage.", f)
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
	if c.Usage.Enabled {
		if err := c.Usage.Validate(); err != nil {
			return err
		}
	}
	return c.VFS.Validate()
}

// freshness is what the "auto" defaults of --skills.index-refresh and
// --skills.index-max-stale depend on (skills.Config.ResolveFreshness).
func (c *Config) freshness() skills.Storage {
	switch {
	case c.Storage == "local":
		return skills.Local
	case c.Events.Enabled():
		return skills.Events
	default:
		return skills.Polled
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

// ConfigFileFlag names the YAML config file.
const ConfigFileFlag = "config.file"

// parse sets c from its defaults, the config file, the SKILLSVC_*
// environment and args, in that order (options.Parse), then resolves the
// defaults that depend on other options (the skills' freshness).
func parse(c *Config, f *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := flagopt.Parse(f, args, getenv, ConfigFileFlag); err != nil {
		return err
	}
	c.Skills.ResolveFreshness(c.freshness())
	return nil
}

// newFlagSet registers c's flags on a new flag set whose usage (on a
// flag error) is the basic listing.
func newFlagSet(c *Config) *flag.FlagSet {
	f := flag.NewFlagSet("skillsvc", flag.ContinueOnError)
	c.RegisterFlags(f)
	f.Usage = func() { printUsage(f.Output(), f, false) }
	return f
}

const usageHead = `Usage: skillsvc [flags]                 serve
       skillsvc [flags] config [flags]  print the effective configuration as a config file
       skillsvc config --defaults       print a config file of every option, commented
       skillsvc token --user=U ...      print a development token (skillsvc token -h)

Every option is a flag, a SKILLSVC_<NAME> environment variable (SKILLSVC_S3_BUCKET
for --s3.bucket) and a key of the YAML --config.file; flags override the
environment, which overrides the file.
`

func printUsage(w io.Writer, f *flag.FlagSet, all bool) {
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if all {
		fmt.Fprintf(w, "%s\nAll %d options, with their category:\n\n", usageHead, n)
	} else {
		fmt.Fprintf(w, "%s\nThe basic options (--help-all lists all %d):\n\n", usageHead, n)
	}
	flagopt.PrintUsage(w, f, all)
}

// load is Load, also returning the flag set that holds the configuration.
func load(args []string, getenv func(string) string) (Config, *flag.FlagSet, error) {
	var c Config
	f := newFlagSet(&c)
	if h := flagopt.HelpAsked(f, args); h != flagopt.NoHelp {
		printUsage(f.Output(), f, h == flagopt.HelpAll)
		return c, f, flag.ErrHelp
	}
	if err := parse(&c, f, args, getenv); err != nil {
		return c, f, err
	}
	if f.NArg() > 0 {
		return c, f, fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	return c, f, c.Validate()
}

// Load reads the configuration from args (the command line without the
// program name), getenv (os.Getenv) and the config file they name, and
// validates it. With -h or --help it prints the basic options, with
// --help-all all of them, and returns flag.ErrHelp.
func Load(args []string, getenv func(string) string) (Config, error) {
	c, _, err := load(args, getenv)
	return c, err
}
