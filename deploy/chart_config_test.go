package deploy_test

import (
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// configFile is where the chart mounts skillsvc's config file.
const configFile = "/etc/skillsvc/config/config.yaml"

// TestChartConfig renders the chart with value sets and loads the rendered
// config file, with the Deployment's arguments and environment, through the
// binary's own loader (app.Load), so every value the chart names must reach
// the option it means, and skillsvc must accept the whole. app.Load checks
// the settings without opening the files they name (keys, certificates,
// overrides are read when the server starts), so the test proves the file
// options instead by finding each path among the files the pod mounts.
func TestChartConfig(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    []string
		values string   // a values file, for lists, numbers and strings with commas
		extra  []string // the arguments after --config.file: extraArgs, nothing of the chart's
		check  func(t *testing.T, c app.Config, file string)
	}{{
		name: "defaults",
		check: func(t *testing.T, c app.Config, file string) {
			want := map[string]any{
				"storage": c.Storage == "s3", "s3.bucket": c.S3.Bucket == "skills", "s3.region": c.S3.Region == "us-east-1",
				"s3.path-style": !c.S3.PathStyle, "listen": c.Listen == "0.0.0.0:7070", "http.listen": c.HTTPListen == "0.0.0.0:7080",
				"metrics.listen": c.MetricsListen == "0.0.0.0:9090", "metrics.tls": !c.MetricsTLS,
				"auth.mode": c.Auth.Mode == "jwt", "auth.allow-insecure-remote": !c.Auth.AllowInsecureRemote,
				"auth.jwt.jwks-url":   c.Auth.JWT.JWKSURL == "https://idp.example/jwks.json",
				"auth.jwt.user-claim": c.Auth.JWT.UserClaim == "user", "auth.jwt.admin-scope": c.Auth.JWT.AdminScope == "skillsvc:admin",
				"auth.jwt.secret-file": c.Auth.JWT.SecretFile == "", "tls": !c.TLS.Enabled(),
				"limits":            c.Limits.Rate == 100 && c.Limits.Burst == 1000 && c.Limits.Concurrency == 32 && c.Limits.OverridesFile == "",
				"cache.redis.addrs": len(c.Cache.Redis.Addrs) == 0, "events.sqs.queue-url": c.Events.SQS.QueueURL == "",
				"audit.output": c.Audit.Output == "stdout", "log": c.LogFormat == "json" && c.LogLevel == "info",
				"shutdown-timeout": c.ShutdownTimeout == 15*time.Second,
			}
			for k, ok := range want {
				if !ok.(bool) {
					t.Errorf("%s is not what the default values say: %+v", k, c)
				}
			}
		},
	}, {
		name: "jwt key files from a Secret",
		set: []string{"auth.jwt.jwksUrl=", "auth.jwt.existingSecret=skillsvc-jwt", "auth.jwt.files.secret=hs256",
			"auth.jwt.files.publicKey=idp.pem", "auth.jwt.files.jwks=idp.json", "auth.jwt.issuer=https://idp.example",
			"auth.jwt.audience=skillsvc", "auth.jwt.leeway=1m", "auth.jwt.reloadInterval=30s", "auth.jwt.userClaim=sub"},
		check: func(t *testing.T, c app.Config, file string) {
			j := c.Auth.JWT
			if j.SecretFile != "/etc/skillsvc/jwt/secret" || j.PublicKeyFile != "/etc/skillsvc/jwt/public-key.pem" ||
				j.JWKSFile != "/etc/skillsvc/jwt/jwks.json" || j.JWKSURL != "" {
				t.Errorf("key files = %q %q %q, jwks-url %q", j.SecretFile, j.PublicKeyFile, j.JWKSFile, j.JWKSURL)
			}
			if j.Issuer != "https://idp.example" || j.Audience != "skillsvc" || j.Leeway != time.Minute ||
				j.ReloadInterval != 30*time.Second || j.UserClaim != "sub" {
				t.Errorf("jwt = %+v", j)
			}
		},
	}, {
		name: "jwks URL",
		set:  []string{"auth.jwt.jwksRefresh=5m", "auth.jwt.adminScope=admin"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.Auth.JWT.JWKSURL != "https://idp.example/jwks.json" || c.Auth.JWT.JWKSRefresh != 5*time.Minute || c.Auth.JWT.AdminScope != "admin" {
				t.Errorf("jwt = %+v", c.Auth.JWT)
			}
		},
	}, {
		name: "TLS with client CAs from the same Secret",
		set:  []string{"tls.enabled=true", "tls.existingSecret=skillsvc-tls", "tls.clientCA=true", "metrics.tls=true"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.TLS.CertFile != "/etc/skillsvc/tls/tls.crt" || c.TLS.KeyFile != "/etc/skillsvc/tls/tls.key" ||
				c.TLS.ClientCAFile != "/etc/skillsvc/tls/ca.crt" || !c.MetricsTLS {
				t.Errorf("tls = %+v, metrics.tls %v", c.TLS, c.MetricsTLS)
			}
		},
	}, {
		name: "TLS with client CAs from their own Secret",
		// 1.3 is a number in a values file: it must still reach the option as "1.3".
		values: "tls:\n  enabled: true\n  existingSecret: skillsvc-tls\n  clientCA: true\n  clientCASecret: client-ca\n  minVersion: 1.3\n  reloadInterval: 1m\n",
		check: func(t *testing.T, c app.Config, file string) {
			if c.TLS.ClientCAFile != "/etc/skillsvc/tls-client-ca/ca.crt" || c.TLS.MinVersion != "1.3" || c.TLS.ReloadInterval != time.Minute {
				t.Errorf("tls = %+v", c.TLS)
			}
		},
	}, {
		name:   "Redis with a password from a Secret",
		values: "cache:\n  redis:\n    addrs: redis-0:6379,redis-1:6379\n    cluster: true\n    tls: true\n    keyPrefix: team-a\n    existingSecret: redis-auth\n",
		check: func(t *testing.T, c app.Config, file string) {
			r := c.Cache.Redis
			if !reflect.DeepEqual(r.Addrs, []string{"redis-0:6379", "redis-1:6379"}) || !r.Cluster || !r.TLS.Enabled || r.KeyPrefix != "team-a" {
				t.Errorf("redis = %+v", r)
			}
			if r.Password.Value != "secret redis-auth/REDIS_PASSWORD" {
				t.Errorf("redis password = %q, want the Secret's", r.Password.Value)
			}
			if strings.Contains(file, "password") {
				t.Errorf("the config file names a password:\n%s", file)
			}
		},
	}, {
		name: "events from an SQS queue",
		set: []string{"events.sqs.queueUrl=https://sqs.eu-west-1.amazonaws.com/123456789012/skills-events",
			"events.sqs.region=eu-west-1", "events.sqs.endpoint=http://sqs.local:4566", "events.sqs.visibilityTimeout=5m",
			"events.sqs.waitTime=10s", "cache.redis.addrs=redis:6379"},
		check: func(t *testing.T, c app.Config, file string) {
			q := c.Events.SQS
			if q.QueueURL != "https://sqs.eu-west-1.amazonaws.com/123456789012/skills-events" || q.Region != "eu-west-1" ||
				q.Endpoint != "http://sqs.local:4566" || q.VisibilityTimeout != 5*time.Minute || q.WaitTime != 10*time.Second {
				t.Errorf("sqs = %+v", q)
			}
			if c.Skills.IndexRefresh != skills.EventsIndexRefresh {
				t.Errorf("skills.index-refresh = %v, want %v with events", c.Skills.IndexRefresh, skills.EventsIndexRefresh)
			}
		},
	}, {
		name: "events without the optional settings",
		set:  []string{"events.sqs.queueUrl=https://sqs.us-east-1.amazonaws.com/123456789012/q"},
		check: func(t *testing.T, c app.Config, file string) {
			var tree map[string]any
			if err := yaml.Unmarshal([]byte(file), &tree); err != nil {
				t.Fatal(err)
			}
			if sqs, _ := get(tree, "events", "sqs").(map[string]any); len(sqs) != 1 {
				t.Errorf("events.sqs = %v, want the queue URL alone: the others are not set", sqs)
			}
			if c.Events.SQS.WaitTime != 20*time.Second {
				t.Errorf("events.sqs.wait-time = %v, want the binary's default", c.Events.SQS.WaitTime)
			}
		},
	}, {
		name:   "limits and overrides",
		values: "limits:\n  rate: 0.5\n  burst: 5\n  concurrency: 0\n  overrides:\n    batch-importer: {rate: 500, burst: 5000}\n",
		check: func(t *testing.T, c app.Config, file string) {
			l := c.Limits
			if l.Rate != 0.5 || l.Burst != 5 || l.Concurrency != 0 || l.OverridesFile != "/etc/skillsvc/limits/overrides.yaml" {
				t.Errorf("limits = %+v", l)
			}
		},
	}, {
		name: "limits left to the binary",
		set:  []string{"limits.rate=", "limits.burst=", "limits.concurrency=null"},
		check: func(t *testing.T, c app.Config, file string) {
			if l := c.Limits; l.Rate != 100 || l.Burst != 1000 || l.Concurrency != 32 || strings.Contains(file, "limits:") {
				t.Errorf("limits = %+v; file:\n%s", l, file)
			}
		},
	}, {
		name: "no metrics, no HTTP",
		set:  []string{"metrics.enabled=false", "http.enabled=false"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.MetricsListen != "" || c.HTTPListen != "" {
				t.Errorf("metrics.listen %q, http.listen %q, want both off", c.MetricsListen, c.HTTPListen)
			}
		},
	}, {
		name: "metrics on another port",
		set:  []string{"metrics.port=9100", "http.port=8080", "shutdownTimeoutSeconds=40"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.MetricsListen != "0.0.0.0:9100" || c.HTTPListen != "0.0.0.0:8080" || c.ShutdownTimeout != 40*time.Second {
				t.Errorf("metrics.listen %q, http.listen %q, shutdown-timeout %v", c.MetricsListen, c.HTTPListen, c.ShutdownTimeout)
			}
		},
	}, {
		name: "insecure behind a mesh",
		set:  []string{"auth.mode=insecure", "auth.allowInsecureRemote=true", "mounts=/skills={user}/skills/:ro"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.Auth.Mode != "insecure" || !c.Auth.AllowInsecureRemote || strings.Contains(file, "jwt") {
				t.Errorf("auth = %+v; file:\n%s", c.Auth, file)
			}
			if got := c.Mounts.String(); got != "/skills={user}/skills/:ro" {
				t.Errorf("mounts = %q", got)
			}
		},
	}, {
		name: "S3-compatible storage",
		set:  []string{"s3.endpoint=http://minio.minio.svc:9000", "s3.pathStyle=true", "s3.region=eu-central-1"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.S3.Endpoint != "http://minio.minio.svc:9000" || !c.S3.PathStyle || c.S3.Region != "eu-central-1" {
				t.Errorf("s3 = %+v", c.S3)
			}
		},
	}, {
		name: "config overrides then flags",
		// config wins over the named values, false and "" included, a
		// dotted key too; extraArgs win over both.
		values: "s3:\n  pathStyle: true\nconfig:\n  s3:\n    path-style: false\n  http:\n    listen: \"\"\n" +
			"  vfs:\n    max-upload-bytes: 536870912\n  log:\n    level: debug\n    format: text\n" +
			"  skills:\n    index-refresh: 10s\n  s3.region: eu-west-3\nextraArgs: [\"--log.level=warn\"]\n",
		extra: []string{"--log.level=warn"},
		check: func(t *testing.T, c app.Config, file string) {
			if c.S3.PathStyle || c.HTTPListen != "" || c.VFS.MaxUploadBytes != 536870912 || c.LogFormat != "text" || c.Skills.IndexRefresh != 10*time.Second || c.S3.Region != "eu-west-3" {
				t.Errorf("path-style %v, http.listen %q, max-upload-bytes %d, log.format %q, index-refresh %v, s3.region %q: want config's",
					c.S3.PathStyle, c.HTTPListen, c.VFS.MaxUploadBytes, c.LogFormat, c.Skills.IndexRefresh, c.S3.Region)
			}
			if c.LogLevel != "warn" {
				t.Errorf("log.level = %q, want extraArgs' warn over config's debug", c.LogLevel)
			}
			if c.S3.Bucket != "skills" || c.Auth.Mode != "jwt" {
				t.Errorf("the named values next to config are lost: %+v", c)
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, c.set, c.values)
			cfg, file := load(t, objs)
			if a := args(only(t, objs, "Deployment")); !slices.Equal(a[1:], c.extra) {
				t.Errorf("args after --config.file = %v, want %v: the chart's settings belong in the file", a[1:], c.extra)
			}
			c.check(t, cfg, file)
		})
	}
}

// TestChartConfigRollsPods checks that the pods roll when the config file
// changes and only then: skillsvc reads it at start alone.
func TestChartConfigRollsPods(t *testing.T) {
	checksum := func(set ...string) string {
		d := only(t, render(t, set, ""), "Deployment")
		sum := str(d, "spec", "template", "metadata", "annotations", "checksum/config")
		if len(sum) != 64 {
			t.Fatalf("checksum/config = %q", sum)
		}
		return sum
	}
	base := checksum()
	if checksum("replicaCount=3") != base {
		t.Error("a change outside the config file changed checksum/config")
	}
	for _, set := range []string{"log.level=debug", "config.vfs.max-upload-bytes=1024"} {
		if checksum(set) == base {
			t.Errorf("%s left checksum/config as it was", set)
		}
	}
}

// TestChartConfigRefuses checks the refusals of the config value.
func TestChartConfigRefuses(t *testing.T) {
	out, err := helm(t, append([]string{"template", "skillsvc", chart}, setFlags(append(append([]string{}, required...), "config=verbose"))...)...)
	if err == nil || !strings.Contains(out, "config must be a map") {
		t.Errorf("helm template: %v, want a failure saying config must be a map:\n%s", err, out)
	}
}

// render lints and renders the chart with the required values, set and a
// values file's contents.
func render(t *testing.T, set []string, values string) []manifest {
	t.Helper()
	flags := setFlags(append(append([]string{}, required...), set...))
	if values != "" {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(values), 0o600); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "--values", f)
	}
	if out, err := helm(t, append([]string{"lint", "--strict", chart}, flags...)...); err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
	out, err := helm(t, append([]string{"template", "skillsvc", chart, "--namespace", "agents"}, flags...)...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	return parse(t, out)
}

// load writes the rendered config file to a temporary directory and loads
// it as the container would: app.Load with the container's arguments (the
// --config.file one pointed at the copy) and its environment, where a
// variable from a Secret reads "secret NAME/KEY". It checks that the chart
// passes no option twice (the arguments are --config.file and extraArgs,
// the environment sets no option the file sets) and that every file the
// configuration names is one the pod mounts. It returns the configuration
// and the file's text.
func load(t *testing.T, objs []manifest) (app.Config, string) {
	t.Helper()
	cm := named(t, objs, "ConfigMap", "skillsvc-config")
	text := str(cm, "data", "config.yaml")
	var tree map[string]any
	if err := yaml.Unmarshal([]byte(text), &tree); err != nil {
		t.Fatalf("config.yaml: %v\n%s", err, text)
	}
	inFile := map[string]bool{}
	flatten("", tree, inFile)

	d := only(t, objs, "Deployment")
	a := args(d)
	if len(a) == 0 || a[0] != "--config.file="+configFile {
		t.Fatalf("args = %v, want --config.file=%s first", a, configFile)
	}
	f := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	loadArgs := append([]string{"--config.file=" + f}, a[1:]...)

	environ := map[string]string{}
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		for _, e := range get(c, "env").([]any) {
			v := str(e, "value")
			if ref := get(e, "valueFrom", "secretKeyRef"); ref != nil {
				v = "secret " + str(ref, "name") + "/" + str(ref, "key")
			}
			environ[str(e, "name")] = v
		}
	}
	for name := range environ {
		for opt := range inFile {
			if name == "SKILLSVC_"+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(opt)) {
				t.Errorf("%s is set both in the config file and as %s", opt, name)
			}
		}
	}

	c, err := app.Load(loadArgs, func(k string) string { return environ[k] })
	if err != nil {
		t.Fatalf("app.Load(%v): %v\nconfig.yaml:\n%s", loadArgs, err, text)
	}

	mounted := mountedFiles(t, objs, d)
	if !mounted[configFile] {
		t.Errorf("%s is not mounted (mounted: %v)", configFile, mounted)
	}
	for opt, p := range map[string]string{
		"auth.jwt.secret-file": c.Auth.JWT.SecretFile, "auth.jwt.public-key-file": c.Auth.JWT.PublicKeyFile,
		"auth.jwt.jwks-file": c.Auth.JWT.JWKSFile, "tls.cert-file": c.TLS.CertFile, "tls.key-file": c.TLS.KeyFile,
		"tls.client-ca-file": c.TLS.ClientCAFile, "limits.overrides-file": c.Limits.OverridesFile,
	} {
		if p != "" && !mounted[p] {
			t.Errorf("%s = %s, which the pod does not mount (mounted: %v)", opt, p, slices.Sorted(maps.Keys(mounted)))
		}
	}
	return c, text
}

// flatten records the option names (dotted key paths) of a config tree.
func flatten(prefix string, v any, out map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		out[strings.TrimSuffix(prefix, ".")] = true
		return
	}
	for k, sub := range m {
		flatten(prefix+k+".", sub, out)
	}
}

// mountedFiles are the paths of the files the skillsvc container sees in
// its Secret and ConfigMap volumes: a volume's items, or every key of a
// ConfigMap the chart renders.
func mountedFiles(t *testing.T, objs []manifest, d manifest) map[string]bool {
	t.Helper()
	volumes := map[string]any{}
	for _, v := range get(d, "spec", "template", "spec", "volumes").([]any) {
		volumes[str(v, "name")] = v
	}
	out := map[string]bool{}
	c := get(d, "spec", "template", "spec", "containers").([]any)[0]
	for _, m := range get(c, "volumeMounts").([]any) {
		v := volumes[str(m, "name")]
		if v == nil {
			t.Errorf("volume mount %s has no volume", str(m, "name"))
			continue
		}
		src := get(v, "secret")
		if src == nil {
			src = get(v, "configMap")
		}
		if src == nil {
			continue // the emptyDir
		}
		items, _ := get(src, "items").([]any)
		for _, it := range items {
			out[path.Join(str(m, "mountPath"), str(it, "path"))] = true
		}
		if items == nil && get(v, "configMap") != nil {
			data, _ := get(named(t, objs, "ConfigMap", str(v, "configMap", "name")), "data").(map[string]any)
			for k := range data {
				out[path.Join(str(m, "mountPath"), k)] = true
			}
		}
	}
	return out
}
