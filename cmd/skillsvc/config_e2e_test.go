package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file start the binary from a YAML config file
// (--config.file) as a deployment does, everything else at its default.

// configFile writes a config file into a new directory and returns its path.
func configFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "skillsvc.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startWithFile runs the binary with --config.file=file, env (the whole
// environment) and args, and returns once it serves.
func startWithFile(t *testing.T, file string, env []string, args ...string) *proc {
	t.Helper()
	logs := &logtest.Buffer{}
	s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
		Bin: binary(t), Args: append([]string{"--config.file=" + file}, args...), Env: env, Dir: t.TempDir(), Log: logs, SkipHealth: true,
	}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	p := &proc{cmd: s.Cmd(), addr: s.Addrs["serving"], httpAddr: s.Addrs["serving http"], done: make(chan error, 1), logs: logs}
	go func() { p.done <- s.Err() }()
	return p
}

// cleanEnv is the environment without SKILLSVC_ and AWS_ variables: only
// the config file configures the binary.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLSVC_") && !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// TestConfigFileQuickStart: the quick start's settings written as a
// config file (local storage in a new data directory, the example library
// copied in) start the binary, which serves the examples over the JSON API
// as the README's curl call reads them.
func TestConfigFileQuickStart(t *testing.T) {
	dir := t.TempDir()
	// Listeners on free ports, where the quick start takes 7070 and 7080.
	file := configFile(t, fmt.Sprintf(`# the quick start's settings
listen: 127.0.0.1:0
http:
  listen: 127.0.0.1:0
storage: local
data-dir: %s
examples: auto
auth:
  mode: insecure
`, filepath.Join(dir, "data")))
	p := startWithFile(t, file, cleanEnv())
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.SkillsService/FormatSkills", strings.NewReader(`{"charBudget":4000}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-skillsvc-user", "alice")
	req.Header.Set("x-skillsvc-thread", "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var block struct{ Text string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &block) != nil {
		t.Fatalf("FormatSkills: %s %s", resp.Status, body)
	}
	for _, name := range exampleSkills(t) {
		if !strings.Contains(block.Text, "<name>"+name+"</name>") {
			t.Errorf("the prompt block lacks the example skill %s:\n%s", name, block.Text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "_shared", "skills")); err != nil {
		t.Errorf("the data directory the file names holds no shared library: %v", err)
	}
}

// TestConfigFileProduction: a production deployment's settings in one
// file (S3 on MinIO, Redis, jwt with a secret file, limits, JSON logs)
// start the binary: a call with a signed token works, and its cache
// entries are in Redis under the file's key prefix; a call without a token
// is refused.
func TestConfigFileProduction(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	s3Put(t, srv, bucket)("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\n")
	f := newJWTFixture(t)
	keyPrefix := "config-e2e-" + rand.Text() + ":"
	file := configFile(t, fmt.Sprintf(`listen: 127.0.0.1:0
http:
  listen: 127.0.0.1:0
storage: s3
s3:
  bucket: %s
  endpoint: %s
  region: %s
  path-style: true
cache:
  redis:
    addrs:
      - %s
    key-prefix: %q
auth:
  mode: jwt
  jwt:
    secret-file: %s
    issuer: https://issuer.config.test
    audience: skillsvc
limits:
  rate: 50
  burst: 500
  concurrency: 16
log:
  level: info
  format: json
`, bucket, srv.Endpoint, srv.Region, red.Addr, keyPrefix, f.file))
	p := startWithFile(t, file, srv.SkillsvcEnv())
	if !logged(p.output(), `"msg":"cache: in process in front of Redis"`, `"addrs":"`+red.Addr+`"`) {
		t.Errorf("the log does not say Redis %s is the cache:\n%s", red.Addr, p.output())
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sc := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
	claims := agentClaims("alice", "t1", "")
	claims["iss"], claims["aud"] = "https://issuer.config.test", "skillsvc"
	signed := metadata.AppendToOutgoingContext(ctx, auth.AuthorizationKey, "Bearer "+signToken(t, jwt.SigningMethodHS256, f.secret, claims))
	resp, err := sc.ListSkills(signed, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetSkills()) != 1 || resp.GetSkills()[0].GetName() != "notes" {
		t.Errorf("ListSkills with a token = %v", resp.GetSkills())
	}
	_, err = sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
	grpctest.WantCode(t, err, codes.Unauthenticated)
	// The identity headers that insecure mode trusts are no token.
	_, err = sc.ListSkills(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.ListSkillsRequest{})
	grpctest.WantCode(t, err, codes.Unauthenticated)

	rc := redis.NewClient(&redis.Options{Addr: red.Addr})
	defer rc.Close()
	keys, err := rc.Keys(ctx, keyPrefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Errorf("no Redis key under the file's key prefix %q after a call (%v)", keyPrefix, err)
	}
}

// logged reports whether one line of log holds every part of parts.
func logged(log string, parts ...string) bool {
	for line := range strings.Lines(log) {
		all := true
		for _, s := range parts {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}

// TestConfigFileRefused: an unknown key and a bad value each stop the
// binary before it serves, exit status 2, the file, line and key named.
func TestConfigFileRefused(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "storage: s3\ns3:\n  bucket-name: skillsvc\n", `skillsvc.yaml:3: unknown option "s3.bucket-name"`},
		{"bad value", "listen: 127.0.0.1:0\nlimits:\n  rate: fast\n", `skillsvc.yaml:3: "limits.rate": invalid value "fast"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := configFile(t, tc.yaml)
			for _, args := range [][]string{{"--config.file=" + file}, {"config", "--config.file=" + file}} {
				cmd := exec.CommandContext(t.Context(), bin, args...)
				cmd.Dir, cmd.Env = t.TempDir(), cleanEnv()
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 {
					t.Fatalf("skillsvc %q: %v, want exit status 2; stderr:\n%s", args, err, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.want) {
					t.Errorf("skillsvc %q: stderr %q lacks %q", args, stderr.String(), tc.want)
				}
			}
		})
	}
}

// TestConfigFileOverrides: an environment variable and a flag override
// what the file sets. The file names a bucket that does not exist and jwt
// mode; SKILLSVC_S3_BUCKET names the real bucket and --auth.mode=insecure
// turns tokens off, so the binary serves alice's skill from the real
// bucket to a caller without a token.
func TestConfigFileOverrides(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	s3Put(t, srv, bucket)("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\n")
	f := newJWTFixture(t)
	file := configFile(t, fmt.Sprintf(`listen: 127.0.0.1:0
http:
  listen: 127.0.0.1:0
storage: s3
s3:
  bucket: no-such-bucket-%s
  endpoint: %s
  region: %s
  path-style: true
auth:
  mode: jwt
  jwt:
    secret-file: %s
`, strings.ToLower(rand.Text()), srv.Endpoint, srv.Region, f.file))
	p := startWithFile(t, file, append(srv.SkillsvcEnv(), "SKILLSVC_S3_BUCKET="+bucket), "--auth.mode=insecure")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp, err := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)).ListSkills(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetSkills()) != 1 || resp.GetSkills()[0].GetName() != "notes" {
		t.Errorf("ListSkills = %v", resp.GetSkills())
	}

	// skillsvc config shows the same decisions.
	cmd := exec.CommandContext(ctx, binary(t), "config", "--config.file="+file, "--auth.mode=insecure")
	cmd.Env = append(cleanEnv(), "SKILLSVC_S3_BUCKET="+bucket)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skillsvc config: %v", err)
	}
	for _, s := range []string{"\n  bucket: " + bucket + "\n", "\n  mode: insecure\n", "\n    secret-file: " + f.file + "\n", "\nstorage: s3\n"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("skillsvc config lacks %q:\n%s", s, out)
		}
	}
}

// TestConfigPrintedRestarts: what `skillsvc FLAGS config` prints (the
// subcommand after the flags) starts the binary as it is, the Redis
// password left out of the file and still taken from the environment: a
// call's cache entries reach Redis as the ACL user the password is for.
func TestConfigPrintedRestarts(t *testing.T) {
	red := testserver.SharedRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: red.Addr})
	defer rc.Close()
	user, password := "config-e2e-"+strings.ToLower(rand.Text()), rand.Text()
	if err := rc.Do(t.Context(), "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Do(context.Background(), "ACL", "DELUSER", user) })
	keyPrefix := "config-printed-" + rand.Text() + ":"
	env := cleanEnv("SKILLSVC_CACHE_REDIS_PASSWORD=" + password)

	cmd := exec.CommandContext(t.Context(), binary(t), "--listen=127.0.0.1:0", "--http.listen=", "--storage=local", "--data-dir="+filepath.Join(t.TempDir(), "data"),
		"--cache.redis.addrs="+red.Addr, "--cache.redis.username="+user, "--cache.redis.key-prefix="+keyPrefix, "config")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	printed, err := cmd.Output()
	if err != nil {
		t.Fatalf("skillsvc FLAGS config: %v\n%s", err, stderr.String())
	}
	if strings.Contains(string(printed), password) || strings.Contains(string(printed), "********") ||
		!strings.Contains(string(printed), "password: # secret, set but not printed: give it with SKILLSVC_CACHE_REDIS_PASSWORD") {
		t.Fatalf("the printed configuration shows the password, or not where it comes from:\n%s", printed)
	}

	p := startWithFile(t, configFile(t, string(printed)), env)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)).ListSkills(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Fatal(err)
	}
	keys, err := rc.Keys(ctx, keyPrefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Errorf("no Redis key under %q after a call from the printed file (%v):\n%s", keyPrefix, err, p.output())
	}
}
