package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigContexts: set-context, use-context, get-contexts and view edit
// and show the file; view hides tokens; the file is private.
func TestConfigContexts(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "skillctl", "config.yaml")
	env := map[string]string{"SKILLCTL_CONFIG": cfg}
	for _, args := range [][]string{
		{"config", "set-context", "dev", "--target", "localhost:7070", "--user", "alice"},
		{"config", "set-context", "prod", "--target", "skills.example.com:443", "--tls", "--token", "s3cret", "--library", "shared"},
	} {
		if r := runCtl(t, env, args...); r.code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	r := runCtl(t, env, "config", "get-contexts")
	if !strings.Contains(r.stdout, "*        dev   localhost:7070") || !strings.Contains(r.stdout, "prod  skills.example.com:443  -      token") {
		t.Errorf("get-contexts (the first context set becomes current):\n%s", r.stdout)
	}
	if r := runCtl(t, env, "config", "use-context", "prod"); r.code != exitOK {
		t.Fatal(r.stderr)
	}
	if r := runCtl(t, env, "config", "current-context"); strings.TrimSpace(r.stdout) != "prod" {
		t.Errorf("current-context = %q", r.stdout)
	}
	r = runCtl(t, env, "config", "view")
	if strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, "token: '********'") {
		t.Errorf("view shows the token:\n%s", r.stdout)
	}
	if st, err := os.Stat(cfg); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("config file mode: %v, %v", st, err)
	}
	if r := runCtl(t, env, "config", "use-context", "nope"); r.code != exitUsage {
		t.Errorf("unknown context: exit %d", r.code)
	}
	if r := runCtl(t, env, "config", "set-context", "prod", "--token-file", "/x"); r.code != exitUsage || !strings.Contains(r.stderr, "both a token and a token file") {
		t.Errorf("token and token file: exit %d %s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "config", "delete-context", "prod"); r.code != exitOK {
		t.Fatal(r.stderr)
	}
	if r := runCtl(t, env, "config", "current-context"); r.code != exitUsage {
		t.Errorf("current-context after deleting it: exit %d", r.code)
	}
}

// TestResolvePrecedence: flags beat the environment, which beats the
// context, which beats the defaults; a token from a higher level replaces a
// token file from a lower one.
func TestResolvePrecedence(t *testing.T) {
	cfg := &Config{CurrentContext: "dev", Contexts: map[string]*Context{
		"dev":  {Target: "ctx:1", User: "ctx-user", TokenFile: "/ctx/token", Library: "shared"},
		"prod": {Target: "prod:443", TLS: true},
	}}
	none := func(string) bool { return false }
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		flags   Context
		changed []string
		flagCtx string
		env     map[string]string
		want    settings
	}{
		{"context", Context{}, nil, "", nil,
			settings{Context: Context{Target: "ctx:1", User: "ctx-user", Thread: defaultThread, TokenFile: "/ctx/token", Library: "shared"}, ContextName: "dev"}},
		{"env beats context", Context{}, nil, "", map[string]string{"SKILLCTL_TARGET": "env:2", "SKILLCTL_TOKEN": "t", "SKILLCTL_THREAD": "th"},
			settings{Context: Context{Target: "env:2", User: "ctx-user", Thread: "th", Token: "t", Library: "shared"}, ContextName: "dev"}},
		{"flag beats env", Context{Target: "flag:3", Library: ""}, []string{"target", "library"}, "", map[string]string{"SKILLCTL_TARGET": "env:2"},
			settings{Context: Context{Target: "flag:3", User: "ctx-user", Thread: defaultThread, TokenFile: "/ctx/token"}, ContextName: "dev"}},
		{"context by flag", Context{}, nil, "prod", map[string]string{"SKILLCTL_CONTEXT": "dev"},
			settings{Context: Context{Target: "prod:443", TLS: true, Thread: defaultThread}, ContextName: "prod"}},
		{"context by env", Context{}, nil, "", map[string]string{"SKILLCTL_CONTEXT": "prod", "SKILLCTL_TLS": "false"},
			settings{Context: Context{Target: "prod:443", Thread: defaultThread}, ContextName: "prod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := none
			if tc.changed != nil {
				changed = func(f string) bool {
					for _, c := range tc.changed {
						if c == f {
							return true
						}
					}
					return false
				}
			}
			getenv := noEnv
			if tc.env != nil {
				getenv = func(k string) string { return tc.env[k] }
			}
			got, err := resolve(cfg, tc.flags, tc.flagCtx, changed, getenv)
			if err != nil || got != tc.want {
				t.Errorf("resolve = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
	got, err := resolve(&Config{}, Context{}, "", none, noEnv)
	if err != nil || got.Target != defaultTarget || got.Thread != defaultThread {
		t.Errorf("defaults = %+v, %v", got, err)
	}
	if _, err := resolve(cfg, Context{}, "missing", none, noEnv); err == nil {
		t.Error("an unknown context was accepted")
	}
}
