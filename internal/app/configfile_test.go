package app

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flagopt "github.com/skillsvc/skillsvc/internal/options"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// update regenerates docs/reference/configuration.md (make docs).
var update = flag.Bool("update", false, "rewrite docs/reference/configuration.md from the code")

const referencePath = "../../docs/reference/configuration.md"

// TestConfigReference fails when the committed option reference is not
// what the code registers.
func TestConfigReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(referencePath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referencePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(referencePath)
	if err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("docs/reference/configuration.md is not what the code registers (%v): run make docs and commit it", err)
	}
}

// TestOptionNames: every option name is a path of the YAML file, none
// both an option and a group of others.
func TestOptionNames(t *testing.T) {
	var c Config
	if err := flagopt.CheckNames(newFlagSet(&c)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "skillsvc.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFileSources(t *testing.T) {
	file := writeFile(t, `storage: s3
s3:
  bucket: from-file
  path-style: true
cache:
  redis:
    addrs: [r1:6379, r2:6379]
    key-prefix: file
auth:
  mode: jwt
  jwt:
    secret-file: /run/secret
skills:
  index-refresh: 10s
limits:
  rate: 7
log:
  format: json
`)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want func(Config) bool
	}{
		{"the file over the defaults", nil, []string{"--config.file=" + file}, func(c Config) bool {
			return c.Storage == "s3" && c.S3.Bucket == "from-file" && c.S3.PathStyle && len(c.Cache.Redis.Addrs) == 2 &&
				c.Cache.Redis.Addrs[1] == "r2:6379" && c.Auth.Mode == "jwt" && c.Auth.JWT.SecretFile == "/run/secret" &&
				c.Limits.Rate == 7 && c.LogFormat == "json" && c.Listen == "127.0.0.1:7070"
		}},
		{"the file from the environment", map[string]string{"SKILLSVC_CONFIG_FILE": file}, nil, func(c Config) bool {
			return c.S3.Bucket == "from-file" && c.ConfigFile == file
		}},
		{"the environment over the file", map[string]string{"SKILLSVC_S3_BUCKET": "from-env"}, []string{"--config.file", file}, func(c Config) bool {
			return c.S3.Bucket == "from-env" && c.Cache.Redis.KeyPrefix == "file"
		}},
		{"flags over the environment", map[string]string{"SKILLSVC_S3_BUCKET": "from-env", "SKILLSVC_CONFIG_FILE": file}, []string{"--s3.bucket=from-flag", "--cache.redis.key-prefix=flag"}, func(c Config) bool {
			return c.S3.Bucket == "from-flag" && c.Cache.Redis.KeyPrefix == "flag" && c.LogFormat == "json"
		}},
		// A freshness the file sets is set: s3 without events keeps the
		// other's polled default, which must not fall under it.
		{"freshness set in the file", nil, []string{"--config.file=" + file, "--skills.index-max-stale=1m"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 10*time.Second && c.Skills.IndexMaxStale == time.Minute
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(c) {
				t.Errorf("config %+v not as expected", c)
			}
		})
	}
}

// The "auto" freshness defaults resolve alike whichever source sets the
// storage, and a value the file gives counts as given.
func TestConfigFileFreshness(t *testing.T) {
	for _, tc := range []struct {
		name, yaml              string
		args                    []string
		wantRefresh, wantMaxAge time.Duration
	}{
		{"local by default", "", nil, skills.LocalIndexRefresh, skills.LocalIndexRefresh},
		{"local refresh set in the file", "skills:\n  index-refresh: 10s\n", nil, 10 * time.Second, 10 * time.Second},
		{"local max stale set in the file", "skills:\n  index-max-stale: 200ms\n", nil, 200 * time.Millisecond, 200 * time.Millisecond},
		{"auto written out", "skills:\n  index-refresh: auto\n  index-max-stale: auto\n", nil, skills.LocalIndexRefresh, skills.LocalIndexRefresh},
		{"auto on the command line undoes the file", "skills:\n  index-refresh: 10s\n", []string{"--skills.index-refresh=auto"}, skills.LocalIndexRefresh, skills.LocalIndexRefresh},
		{"s3 from the file", "storage: s3\ns3:\n  bucket: b\n", nil, skills.PolledIndexRefresh, skills.PolledIndexMaxStale},
		{"events from the file", "storage: s3\ns3:\n  bucket: b\nevents:\n  sqs:\n    queue-url: https://sqs.eu-west-1.amazonaws.com/1/q\n", nil, skills.EventsIndexRefresh, skills.EventsIndexMaxStale},
		{"events with max stale in the file", "storage: s3\ns3:\n  bucket: b\nevents:\n  webhook-token-file: /run/token\nskills:\n  index-max-stale: 20s\n", nil, 20 * time.Second, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(append([]string{"--config.file=" + writeFile(t, tc.yaml)}, tc.args...), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if c.Skills.IndexRefresh != tc.wantRefresh || c.Skills.IndexMaxStale != tc.wantMaxAge {
				t.Errorf("index-refresh %v, index-max-stale %v; want %v, %v", c.Skills.IndexRefresh, c.Skills.IndexMaxStale, tc.wantRefresh, tc.wantMaxAge)
			}
		})
	}
}

func TestConfigFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "storage: local\ns3:\n  bucket-name: x\n", `:3: unknown option "s3.bucket-name"`},
		{"bad value", "storage: local\nskills:\n  index-refresh: soon\n", `:3: "skills.index-refresh": invalid value "soon"`},
		{"bad list", "cache:\n  redis:\n    addrs: [redis]\n", "redis"}, // refused by Validate: no port
		{"invalid combination", "storage: s3\n", "bucket"},
		{"config.file in the file", "config:\n  file: other.yaml\n", `"config.file": cannot be set in the config file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]string{"--config.file=" + writeFile(t, tc.yaml)}, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Load([]string{"--config.file=" + filepath.Join(t.TempDir(), "none.yaml")}, func(string) string { return "" }); err == nil {
		t.Error("a missing config file is no error")
	}
	if _, err := Load([]string{"serve"}, func(string) string { return "" }); err == nil {
		t.Error("an argument that is no flag is no error")
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--help-all"}, {"--listen=x", "-help"}} {
		if _, err := Load(args, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Load(%q) = %v, want flag.ErrHelp", args, err)
		}
	}
	var c Config
	f := newFlagSet(&c)
	var basic, all bytes.Buffer
	printUsage(&basic, f, false)
	printUsage(&all, f, true)
	if n := strings.Count(basic.String(), "\n"); n >= 60 {
		t.Errorf("--help prints %d lines, want under 60:\n%s", n, basic.String())
	}
	f.VisitAll(func(fl *flag.Flag) {
		listed := strings.Contains(basic.String(), "  --"+fl.Name+" ")
		if listed != (flagopt.CategoryOf(fl) == flagopt.Basic) {
			t.Errorf("--help lists --%s: %v; it is %v", fl.Name, listed, flagopt.CategoryOf(fl))
		}
		if !strings.Contains(all.String(), "  --"+fl.Name+" ") {
			t.Errorf("--help-all lacks --%s", fl.Name)
		}
	})
}

// TestConfigCommand: skillsvc config prints what Load decided, secrets
// masked and the auto freshness resolved, and it loads back; --defaults
// prints a file that loads as it is into the defaults.
func TestConfigCommand(t *testing.T) {
	env := map[string]string{"SKILLSVC_CACHE_REDIS_PASSWORD": "hunter2"}
	getenv := func(k string) string { return env[k] }
	var out bytes.Buffer
	if err := ConfigCommand([]string{"--storage=s3", "--s3.bucket=b", "--cache.redis.addrs=r:6379"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"storage: s3\n", "    password: # secret, set but not printed: give it with SKILLSVC_CACHE_REDIS_PASSWORD or --cache.redis.password\n", "  index-refresh: 5s\n", "  index-max-stale: 30s\n", "    addrs: r:6379\n", "  path-style: false\n"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("skillsvc config lacks %q:\n%s", s, out.String())
		}
	}
	if strings.Contains(out.String(), "hunter2") || strings.Contains(out.String(), "config:") {
		t.Errorf("skillsvc config shows the secret or config.file:\n%s", out.String())
	}
	// It loads back, the secret still from the environment.
	c, err := Load([]string{"--config.file=" + writeFile(t, out.String())}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.S3.Bucket != "b" || c.Cache.Redis.Addrs[0] != "r:6379" || c.Skills.IndexMaxStale != 30*time.Second || c.Cache.Redis.Password.Value != "hunter2" {
		t.Errorf("loaded back %+v", c)
	}
	// Without the environment the secret is unset, not the mask.
	if c, err := Load([]string{"--config.file=" + writeFile(t, out.String())}, func(string) string { return "" }); err != nil || c.Cache.Redis.Password.Value != "" {
		t.Errorf("loaded back without the environment: %v, password %q", err, c.Cache.Redis.Password.Value)
	}
	// The subcommand after the flags is the same command.
	var after bytes.Buffer
	if cmd, args := Subcommand([]string{"--storage=s3", "--s3.bucket=b", "--cache.redis.addrs=r:6379", "config"}); cmd != "config" {
		t.Errorf("Subcommand found %q in %q", cmd, args)
	} else if err := ConfigCommand(args, getenv, &after); err != nil || after.String() != out.String() {
		t.Errorf("config after the flags: %v\n%s", err, after.String())
	}
	if err := ConfigCommand([]string{"--storage=ftp"}, getenv, &out); err == nil {
		t.Error("skillsvc config accepts an invalid configuration")
	}

	var defaults bytes.Buffer
	if err := ConfigCommand([]string{"--defaults"}, getenv, &defaults); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(defaults.String(), "  # [advanced] --skills.index-refresh, SKILLSVC_SKILLS_INDEX_REFRESH\n  index-refresh: auto\n") {
		t.Errorf("the defaults file lacks the auto freshness:\n%s", defaults.String())
	}
	if err := ConfigCommand([]string{"--defaults", "--listen=x"}, getenv, &out); err == nil {
		t.Error("--defaults with other flags is no error")
	}
	// The defaults file sets every option but config.file, to its default.
	var d Config
	f := newFlagSet(&d)
	names, err := flagopt.Load(f, "defaults.yaml", defaults.Bytes(), ConfigFileFlag)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	f.VisitAll(func(fl *flag.Flag) {
		n++
		if fl.Value.String() != fl.DefValue {
			t.Errorf("--%s is %q after loading the defaults file, want %q", fl.Name, fl.Value, fl.DefValue)
		}
	})
	if len(names) != n-1 {
		t.Errorf("the defaults file sets %d options of %d", len(names), n)
	}
	fromFile, err := Load([]string{"--config.file=" + writeFile(t, defaults.String())}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Skills.IndexRefresh != skills.LocalIndexRefresh || fromFile.Listen != "127.0.0.1:7070" {
		t.Errorf("the defaults file loads as %+v", fromFile)
	}
}
