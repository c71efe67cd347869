package options_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/options"
)

// fake is a small flag set shaped like the server's: top-level options,
// nested groups, a list, a secret, basic and experimental tags.
type fake struct {
	listen   string
	bucket   string
	pathPath bool
	conns    int
	weight   float64
	timeout  time.Duration
	addrs    string
	password string
	file     string
}

func newFake() (*fake, *flag.FlagSet) {
	var c fake
	f := flag.NewFlagSet("fake", flag.ContinueOnError)
	f.SetOutput(new(bytes.Buffer))
	f.StringVar(&c.file, "config.file", "", "YAML config file.")
	f.StringVar(&c.listen, "listen", "127.0.0.1:7070", "gRPC listen address.")
	f.StringVar(&c.bucket, "s3.bucket", "", "Bucket name. Required with --storage=s3.")
	f.BoolVar(&c.pathPath, "s3.path-style", false, "Path-style addressing.")
	f.IntVar(&c.conns, "s3.max-conns", 256, "Connections per host.")
	f.Float64Var(&c.weight, "search.weight", 0.2, "Weight of the semantic stage.")
	f.DurationVar(&c.timeout, "cache.redis.timeout", 250*time.Millisecond, "Read timeout.")
	f.StringVar(&c.addrs, "cache.redis.addrs", "", "Comma-separated Redis addresses.")
	f.StringVar(&c.password, "cache.redis.password", "", "Redis password.")
	options.Tag(f, options.Basic, "config.file", "listen", "s3.bucket", "cache.redis.addrs", "cache.redis.password")
	options.Tag(f, options.Experimental, "search.weight")
	options.Secret(f, "cache.redis.password")
	return &c, f
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       func(*fake) bool
		wantErr    string // a substring of the error; "" for none
	}{
		{"empty", "", func(c *fake) bool { return c.listen == "127.0.0.1:7070" }, ""},
		{"nested", "listen: 0.0.0.0:1\ns3:\n  bucket: b\n  path-style: true\n  max-conns: 8\ncache:\n  redis:\n    timeout: 1s\n", func(c *fake) bool {
			return c.listen == "0.0.0.0:1" && c.bucket == "b" && c.pathPath && c.conns == 8 && c.timeout == time.Second
		}, ""},
		{"dotted key is its nesting", "s3.bucket: b\n", func(c *fake) bool { return c.bucket == "b" }, ""},
		{"list joined with commas", "cache:\n  redis:\n    addrs:\n      - r1:6379\n      - r2:6379\n", func(c *fake) bool {
			return c.addrs == "r1:6379,r2:6379"
		}, ""},
		{"flow list", "cache: {redis: {addrs: [a:1, b:2]}}\n", func(c *fake) bool { return c.addrs == "a:1,b:2" }, ""},
		{"typed scalars as their text", "search:\n  weight: 0.5\n", func(c *fake) bool { return c.weight == 0.5 }, ""},
		{"null is empty", "listen:\n", func(c *fake) bool { return c.listen == "" }, ""},
		{"unknown key with its line", "listen: x\ns3:\n  bucket-name: b\n", nil, `test.yaml:3: unknown option "s3.bucket-name"`},
		{"unknown group", "nope:\n  x: 1\n", nil, `test.yaml:1: unknown option "nope"`},
		{"bad value with its line", "s3:\n  bucket: b\n  path-style: maybe\n", nil, `test.yaml:3: "s3.path-style": invalid value "maybe"`},
		{"bad duration", "cache:\n  redis:\n    timeout: soon\n", nil, `test.yaml:3: "cache.redis.timeout": invalid value "soon"`},
		{"map where a value belongs", "listen:\n  port: 1\n", nil, `test.yaml:2: "listen": takes a value, not a map`},
		{"value where a group belongs", "s3: b\n", nil, `test.yaml:1: "s3": is a group of options`},
		{"list of maps", "cache:\n  redis:\n    addrs:\n      - a: 1\n", nil, `test.yaml:4: "cache.redis.addrs": want a list of plain values`},
		{"given twice", "s3:\n  bucket: a\ns3.bucket: b\n", nil, `test.yaml:3: "s3.bucket": given twice (first at line 2)`},
		{"the file names no file", "config:\n  file: other.yaml\n", nil, `test.yaml:2: "config.file": cannot be set in the config file`},
		{"not a map", "- a\n", nil, "test.yaml:1: want a map of options"},
		{"syntax", "a: [\n", nil, "test.yaml: yaml:"},
		{"every error at once", "a: 1\nb: 2\n", nil, `test.yaml:2: unknown option "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake()
			_, err := options.Load(f, "test.yaml", []byte(tc.yaml), "config.file")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(c) {
				t.Errorf("loaded %+v", *c)
			}
		})
	}
}

func TestParsePrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("listen: file:1\ns3:\n  bucket: file\n  max-conns: 3\nsearch:\n  weight: 0.9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want fake
	}{
		{"file over defaults", nil, []string{"--config.file", file}, fake{listen: "file:1", bucket: "file", conns: 3, weight: 0.9}},
		{"env over file", map[string]string{"SKILLSVC_S3_BUCKET": "env"}, []string{"--config.file=" + file}, fake{listen: "file:1", bucket: "env", conns: 3, weight: 0.9}},
		{"flags over env", map[string]string{"SKILLSVC_S3_BUCKET": "env"}, []string{"--config.file=" + file, "--s3.bucket=flag", "--listen", "flag:2"}, fake{listen: "flag:2", bucket: "flag", conns: 3, weight: 0.9}},
		{"file from env", map[string]string{"SKILLSVC_CONFIG_FILE": file}, []string{"--s3.path-style", "--s3.max-conns=4"}, fake{listen: "file:1", bucket: "file", conns: 4, weight: 0.9, pathPath: true}},
		{"a flag's value is no flag", nil, []string{"--listen", "--config.file=nope", "--config.file=" + file}, fake{listen: "--config.file=nope", bucket: "file", conns: 3, weight: 0.9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake()
			if err := options.Parse(f, tc.args, func(k string) string { return tc.env[k] }, "config.file"); err != nil {
				t.Fatal(err)
			}
			c.file, c.timeout = "", 0
			if *c != tc.want {
				t.Errorf("got %+v, want %+v", *c, tc.want)
			}
		})
	}
	_, f := newFake()
	err := options.Parse(f, []string{"--config.file=" + filepath.Join(t.TempDir(), "none.yaml")}, func(string) string { return "" }, "config.file")
	if err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestHelpAsked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want options.Help
	}{
		{nil, options.NoHelp},
		{[]string{"-h"}, options.HelpBasic},
		{[]string{"--listen=x", "--help"}, options.HelpBasic},
		{[]string{"--help-all"}, options.HelpAll},
		{[]string{"--listen", "--help"}, options.NoHelp}, // --help is listen's value
		{[]string{"--", "--help"}, options.NoHelp},
	} {
		_, f := newFake()
		if got := options.HelpAsked(f, tc.args); got != tc.want {
			t.Errorf("HelpAsked(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestPrintUsage(t *testing.T) {
	_, f := newFake()
	var basic, all bytes.Buffer
	if err := options.PrintUsage(&basic, f, false); err != nil {
		t.Fatal(err)
	}
	if err := options.PrintUsage(&all, f, true); err != nil {
		t.Fatal(err)
	}
	// A group of one joins the top; a short help ends at its first clause.
	want := "  --config.file string                YAML config file\n" +
		"  --listen string                     gRPC listen address (default 127.0.0.1:7070)\n" +
		"  --s3.bucket string                  Bucket name. Required with --storage=s3\n" +
		"cache:\n" +
		"  --cache.redis.addrs string          Comma-separated Redis addresses\n" +
		"  --cache.redis.password string       Redis password\n"
	if basic.String() != want {
		t.Errorf("basic listing:\n%s\nwant:\n%s", basic.String(), want)
	}
	for _, s := range []string{"--search.weight float  [experimental]", "--cache.redis.password string  [basic, secret]", "--s3.path-style  [advanced]", "--s3.max-conns int  [advanced]\n        Connections per host. (default 256)", "Bucket name. Required with --storage=s3."} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("--help-all lacks %q:\n%s", s, all.String())
		}
	}
}

func TestWriteEffective(t *testing.T) {
	_, f := newFake()
	if err := f.Parse([]string{"--s3.bucket=b", "--cache.redis.password=hunter2", "--s3.path-style"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := options.WriteEffective(&b, f); err != nil {
		t.Fatal(err)
	}
	// The top level lists its options first, then the groups.
	// A set secret is left empty, saying where it comes from: the file
	// loads back, and the secret is given beside it.
	want := "listen: 127.0.0.1:7070\ncache:\n  redis:\n    addrs: \"\"\n    password: # secret, set but not printed: give it with SKILLSVC_CACHE_REDIS_PASSWORD or --cache.redis.password\n    timeout: 250ms\nconfig:\n  file: \"\"\ns3:\n  bucket: b\n  max-conns: 256\n  path-style: true\nsearch:\n  weight: 0.2\n"
	if b.String() != want {
		t.Errorf("effective:\n%s\nwant:\n%s", b.String(), want)
	}
	c, f := newFake()
	if _, err := options.Load(f, "effective.yaml", b.Bytes()); err != nil {
		t.Fatalf("the effective file with a secret does not load back: %v", err)
	}
	if c.bucket != "b" || c.password != "" {
		t.Errorf("loaded back %+v", *c)
	}
	// An empty secret prints empty: nothing to hide, and it shows unset.
	_, f = newFake()
	b.Reset()
	if err := options.WriteEffective(&b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "password: \"\"") {
		t.Errorf("an unset secret:\n%s", b.String())
	}
	// Without config.file, what it prints loads back.
	_, f = newFake()
	b.Reset()
	if err := f.Parse([]string{"--s3.bucket=b", "--s3.path-style", "--search.weight=1"}); err != nil {
		t.Fatal(err)
	}
	if err := options.WriteEffective(&b, f, "config.file"); err != nil {
		t.Fatal(err)
	}
	// A whole float prints as a plain number, not "!!float 1".
	if !strings.Contains(b.String(), "  weight: 1\n") {
		t.Errorf("a whole float:\n%s", b.String())
	}
	c, f = newFake()
	if _, err := options.Load(f, "effective.yaml", b.Bytes(), "config.file"); err != nil {
		t.Fatal(err)
	}
	if c.bucket != "b" || !c.pathPath || c.conns != 256 || c.weight != 1 {
		t.Errorf("loaded back %+v", *c)
	}
}

func TestWriteDefaults(t *testing.T) {
	_, f := newFake()
	var b bytes.Buffer
	if err := options.WriteDefaults(&b, f, "# head\n", "config.file"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"# head\n",
		"# gRPC listen address.\n# [basic] --listen, SKILLSVC_LISTEN\nlisten: 127.0.0.1:7070\n",
		"    # Redis password.\n    # [basic, secret] --cache.redis.password, SKILLSVC_CACHE_REDIS_PASSWORD\n    password: \"\"\n",
		"  # [advanced] --s3.max-conns, SKILLSVC_S3_MAX_CONNS\n  max-conns: 256\n",
		"  # [experimental] --search.weight, SKILLSVC_SEARCH_WEIGHT\n  weight: 0.2\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("defaults lack %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "config") {
		t.Errorf("defaults with config.file, which a file cannot set:\n%s", out)
	}
	// It loads as it is and changes nothing.
	_, f = newFake()
	names, err := options.Load(f, "defaults.yaml", b.Bytes(), "config.file")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 8 {
		t.Errorf("the defaults file sets %d options, want every one: %v", len(names), names)
	}
	f.VisitAll(func(fl *flag.Flag) {
		if fl.Value.String() != fl.DefValue {
			t.Errorf("%s = %q after loading the defaults, want %q", fl.Name, fl.Value, fl.DefValue)
		}
	})
}

func TestWriteReference(t *testing.T) {
	_, f := newFake()
	f.Lookup("listen").Usage = "Serves <Service> | *all* of it."
	var b bytes.Buffer
	if err := options.WriteReference(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"## General\n\n| Option | Category | Default | Environment variable | Description |\n|---|---|---|---|---|\n| `--listen` | basic | `127.0.0.1:7070` | `SKILLSVC_LISTEN` | Serves &lt;Service&gt; \\| \\*all\\* of it. |\n",
		"## `cache.*`\n",
		"| `--cache.redis.password` | basic, secret | (empty) | `SKILLSVC_CACHE_REDIS_PASSWORD` | Redis password. |\n",
		"| `--search.weight` | experimental | `0.2` |",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("reference lacks %q:\n%s", s, out)
		}
	}
}

func TestCheckNames(t *testing.T) {
	_, f := newFake()
	if err := options.CheckNames(f); err != nil {
		t.Fatal(err)
	}
	f.String("s3", "", "both an option and a group")
	f.String("a..b", "", "an empty segment")
	err := options.CheckNames(f)
	if err == nil || !strings.Contains(err.Error(), `option "s3" is also a group`) || !strings.Contains(err.Error(), `"a..b" has an empty segment`) {
		t.Errorf("CheckNames = %v", err)
	}
}

// FuzzLoad: any config file either loads or is refused with an error naming
// the file; none panics. Every name it set is a registered option.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"s3:\n  bucket: b\n  path-style: true\n",
		"listen: 127.0.0.1:0\ncache.redis.addrs: [a:1, b:2]\n",
		"s3: {bucket: [x, {y: z}]}\n",
		"a: &x {b: *x}\n",
		"search:\n  weight: 1e400\n",
		"? [k]\n: v\n",
		"--- !!map\ns3: !!binary aGk=\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, fs := newFake()
		set, err := options.Load(fs, "fuzz.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Errorf("error without the file's name: %v", err)
			}
			return
		}
		for _, name := range set {
			if fs.Lookup(name) == nil {
				t.Errorf("set %q, which is not an option", name)
			}
		}
	})
}

// TestLoadRefusesMask: a secret given as the mask (a file printed by an
// older skillsvc config) is refused, naming the option and its variable;
// the same text is a value like any other for an option that is no secret.
func TestLoadRefusesMask(t *testing.T) {
	_, f := newFake()
	_, err := options.Load(f, "old.yaml", []byte("cache:\n  redis:\n    password: '********'\n"))
	if err == nil || !strings.Contains(err.Error(), `old.yaml:3: "cache.redis.password": is "********", the mask of a secret`) || !strings.Contains(err.Error(), "SKILLSVC_CACHE_REDIS_PASSWORD") {
		t.Errorf("a masked secret: %v", err)
	}
	c, f := newFake()
	if _, err := options.Load(f, "ok.yaml", []byte("s3:\n  bucket: '********'\n")); err != nil || c.bucket != "********" {
		t.Errorf("the mask's text in an option that is no secret: %v %q", err, c.bucket)
	}
}

// TestCommand: a subcommand is found first or after the flags, never in
// a flag's value, past "--" or past a flag the set does not know.
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		cmd  string
		rest string
	}{
		{"first", []string{"config", "--listen=x"}, "config", "--listen=x"},
		{"after flags", []string{"--config.file=f.yaml", "config"}, "config", "--config.file=f.yaml"},
		{"after a flag and its value", []string{"--config.file", "f.yaml", "config", "--s3.bucket=b"}, "config", "--config.file f.yaml --s3.bucket=b"},
		{"after a boolean", []string{"--s3.path-style", "config"}, "config", "--s3.path-style"},
		{"a flag's value", []string{"--s3.bucket", "config"}, "", "--s3.bucket config"},
		{"past --", []string{"--", "config"}, "", "-- config"},
		{"past an unknown flag", []string{"--nope", "config"}, "", "--nope config"},
		{"another word", []string{"serve"}, "", "serve"},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f := newFake()
			cmd, rest := options.Command(f, tc.args, "config")
			if cmd != tc.cmd || strings.Join(rest, " ") != tc.rest {
				t.Errorf("Command(%q) = %q, %q; want %q, %q", tc.args, cmd, rest, tc.cmd, tc.rest)
			}
		})
	}
}
