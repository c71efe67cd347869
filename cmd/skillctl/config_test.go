package main

import (
	"bytes"
	"errors"
	"io"
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
			settings{Context: Context{Target: "ctx:1", User: "ctx-user", Thread: defaultThread, TokenFile: "/ctx/token", Library: "shared"}, ContextName: "dev", TargetSet: true}},
		{"env beats context", Context{}, nil, "", map[string]string{"SKILLCTL_TARGET": "env:2", "SKILLCTL_TOKEN": "t", "SKILLCTL_THREAD": "th"},
			settings{Context: Context{Target: "env:2", User: "ctx-user", Thread: "th", Token: "t", Library: "shared"}, ContextName: "dev", TargetSet: true}},
		{"flag beats env", Context{Target: "flag:3", Library: ""}, []string{"target", "library"}, "", map[string]string{"SKILLCTL_TARGET": "env:2"},
			settings{Context: Context{Target: "flag:3", User: "ctx-user", Thread: defaultThread, TokenFile: "/ctx/token"}, ContextName: "dev", TargetSet: true}},
		{"context by flag", Context{}, nil, "prod", map[string]string{"SKILLCTL_CONTEXT": "dev"},
			settings{Context: Context{Target: "prod:443", TLS: true, Thread: defaultThread}, ContextName: "prod", TargetSet: true}},
		{"context by env", Context{}, nil, "", map[string]string{"SKILLCTL_CONTEXT": "prod", "SKILLCTL_TLS": "false"},
			settings{Context: Context{Target: "prod:443", Thread: defaultThread}, ContextName: "prod", TargetSet: true}},
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
	if err != nil || got.Target != defaultTarget || got.Thread != defaultThread || got.TargetSet {
		t.Errorf("defaults = %+v, %v", got, err)
	}
	if _, err := resolve(cfg, Context{}, "missing", none, noEnv); err == nil {
		t.Error("an unknown context was accepted")
	}
}

// TestConfigSaveNeverFollowsLinks: a symbolic link planted at the old
// fixed temporary name, or at names like the new ones, is not written
// through (its target is unchanged); the file written is a new regular
// file of mode 0600, not a link; a link at config.yaml itself is refused and
// left alone; and the config ends up 0600 even when a 0644 config and a 0644
// temporary file were there before.
func TestConfigSaveNeverFollowsLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skillctl")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.yaml.tmp", ".config.yaml.tmp", ".config.yaml.1.tmp", ".config.yaml.123456789.tmp", "config.yaml.1"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, []byte("current-context: old\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cfg := &Config{CurrentContext: "dev", Contexts: map[string]*Context{"dev": {Target: "localhost:7070", Token: "s3cret"}}}
	if err := cfg.save(path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "victim\n" {
		t.Errorf("a link's target was written: %q, %v", b, err)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("config.yaml: %v, %v; want a regular file, 0600", st.Mode(), err)
	}
	if got, err := loadConfig(path); err != nil || got.CurrentContext != "dev" || got.Contexts["dev"].Token != "s3cret" {
		t.Errorf("saved config reads back as %+v, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("the directory holds %d entries, want config.yaml and the 5 planted links: %v", len(entries), entries)
	}

	// What write is handed is the file at a new name in the directory: a
	// regular file of its own, 0600, whatever is planted.
	err = writeFileAtomic(path, func(w io.Writer) error {
		f := w.(*os.File)
		fst, err := f.Stat()
		if err != nil {
			return err
		}
		lst, err := os.Lstat(f.Name())
		if err != nil {
			return err
		}
		if filepath.Dir(f.Name()) != dir || !lst.Mode().IsRegular() || !os.SameFile(fst, lst) || lst.Mode().Perm() != 0o600 || lst.Size() != 0 {
			t.Errorf("temporary file %s: %v, size %d, same file %v", f.Name(), lst.Mode(), lst.Size(), os.SameFile(fst, lst))
		}
		_, err = io.WriteString(w, "current-context: dev\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A link at config.yaml: refused, neither followed nor replaced.
	link := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := cfg.save(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("save through a link at config.yaml: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the link at config.yaml was followed: %q", b)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link at config.yaml was replaced: %v, %v", st, err)
	}
}

// TestConfigSaveOldModeTemp: the old fixed temporary file, left 0644 by an
// earlier run, does not make the config 0644.
func TestConfigSaveOldModeTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path+".tmp", []byte("old temp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&Config{CurrentContext: "dev"}).save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("config.yaml: %v, %v; want 0600", st, err)
	}
}

// TestConfigSaveFailedWrite: a write that fails part-way (a full disk, a
// crash) leaves the old config as it was and no temporary file behind; a
// new config directory is 0700.
func TestConfigSaveFailedWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skillctl")
	path := filepath.Join(dir, "config.yaml")
	if err := (&Config{CurrentContext: "old"}).save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("config directory: %v, %v; want 0700", st, err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	errFull := errors.New("no space left on device")
	err = writeFileAtomic(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "current-context: n"); err != nil {
			return err
		}
		return errFull
	})
	if !errors.Is(err, errFull) {
		t.Errorf("writeFileAtomic = %v, want the write's error", err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Errorf("config after a failed write = %q, %v; want %q", after, err, before)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %v", entries)
	}
	if cfg, err := loadConfig(path); err != nil || cfg.CurrentContext != "old" {
		t.Errorf("config = %+v, %v", cfg, err)
	}
}
