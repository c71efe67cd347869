package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScopeEndToEnd: skillctl scope set, list and delete a scope of the
// shared library and of a user's; ls --scope and --harness show only its
// skills, the user's own scope of the name first; a bad definition is
// refused as INVALID_ARGUMENT; in jwt mode a token minted with
// `skillsvc token --scope` binds, and --scope naming another is refused.
func TestScopeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	put := func(env map[string]string, path, name, desc string) {
		mustRun(t, env, "admin", "put", path, skillFile(t, dir, name, desc), "--library", "shared")
	}
	put(env, "legal/nda/SKILL.md", "nda", "NDA review.")
	put(env, "legal/lease/SKILL.md", "lease", "Leases.")
	put(env, "eng/deploy/SKILL.md", "deploy", "Deploys.")

	r := mustRun(t, env, "scope", "set", "legal", "--include-category", "legal", "--exclude-name", "le*", "--library", "shared")
	if !strings.Contains(r.stdout, "legal  include-category=legal  exclude-name=le*") {
		t.Errorf("scope set printed %q", r.stdout)
	}
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "alice", "--scope", "legal").stdout); got != "nda" {
		t.Errorf("ls --scope legal = %q, want nda", got)
	}
	mustRun(t, env, "scope", "set", "legal", "--include-name", "deploy", "--user", "alice")
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "alice", "--scope", "legal").stdout); got != "deploy" {
		t.Errorf("ls --scope legal with alice's own = %q, want deploy", got)
	}
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "bob", "--scope", "legal").stdout); got != "nda" {
		t.Errorf("bob's ls --scope legal = %q, want the shared library's (nda)", got)
	}
	if r := mustRun(t, env, "scope", "list", "--user", "alice"); strings.TrimSpace(r.stdout) != "legal  include-name=deploy" {
		t.Errorf("scope list --user alice printed %q", r.stdout)
	}
	mustRun(t, env, "scope", "delete", "legal", "--user", "alice")
	if r := runCtl(t, env, "scope", "delete", "legal", "--user", "alice"); r.code == exitOK || !strings.Contains(r.stderr, "no scope") {
		t.Errorf("deleting a deleted scope: exit %d, %q", r.code, r.stderr)
	}
	if r := runCtl(t, env, "scope", "set", "bad", "--include-name", "a[", "--library", "shared"); r.code == exitOK || !strings.Contains(r.stderr, "not a valid glob") {
		t.Errorf("a bad glob: exit %d, %q", r.code, r.stderr)
	}
	if r := runCtl(t, env, "scope", "set", "x", "--compatibility", "sometimes", "--library", "shared"); r.code != exitUsage {
		t.Errorf("--compatibility sometimes: exit %d, want %d", r.code, exitUsage)
	}
	if r := runCtl(t, env, "ls", "--user", "alice", "--scope", "nope"); r.code == exitOK || !strings.Contains(r.stderr, `"nope"`) {
		t.Errorf("ls --scope nope: exit %d, %q", r.code, r.stderr)
	}

	// jwt mode: the token's scope binds.
	jwtAddr, mint := startJWTServer(t)
	jenv := map[string]string{"SKILLCTL_TARGET": jwtAddr, "SKILLCTL_TOKEN_FILE": mint("--admin")}
	put(jenv, "legal/nda/SKILL.md", "nda", "NDA review.")
	put(jenv, "eng/deploy/SKILL.md", "deploy", "Deploys.")
	mustRun(t, jenv, "scope", "set", "legal", "--include-category", "legal", "--library", "shared")
	mustRun(t, jenv, "scope", "set", "eng", "--include-category", "eng", "--library", "shared")
	jenv["SKILLCTL_TOKEN_FILE"] = mint("--user", "alice", "--thread", "t1", "--scope", "legal", "--harness", "codex")
	if got := names(t, mustRun(t, jenv, "ls", "--json").stdout); got != "nda" {
		t.Errorf("ls with a legal token = %q, want nda", got)
	}
	if r := runCtl(t, jenv, "ls", "--scope", "eng"); r.code == exitOK || !strings.Contains(r.stderr, "PermissionDenied") && !strings.Contains(r.stderr, "binds") {
		t.Errorf("ls --scope eng with a legal token: exit %d, %q; want refused", r.code, r.stderr)
	}
}
