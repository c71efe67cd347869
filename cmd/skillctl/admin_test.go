package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
)

// TestAdminEndToEnd: skillctl admin puts a file into team legal's library,
// which a member lists; protects the shared csv skill so a member's
// namesake does not replace it; lists the protected names; deletes the
// file; and refuses a call without --library.
func TestAdminEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr}
	dir := t.TempDir()
	skill := filepath.Join(dir, "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: nda\ndescription: Legal's NDA review.\n---\nReview.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "admin", "put", "nda/SKILL.md", skill, "--library", "team:legal")
	mustRun(t, env, "admin", "put", "csv/SKILL.md", skillFile(t, dir, "csv", "alice's csv"), "--library", "alice")

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(grpctest.InTeams(grpctest.AsCaller(t.Context(), "alice", "t1", ""), "legal"), time.Minute)
	defer cancel()
	describe := func(ref string) string {
		t.Helper()
		g, err := sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: ref})
		if err != nil {
			t.Fatalf("GetSkill(%s): %v", ref, err)
		}
		return g.GetSkill().GetLayer() + " " + g.GetSkill().GetDescription()
	}
	if got := describe("nda"); got != "team:legal Legal's NDA review." {
		t.Errorf("nda = %q, want legal's", got)
	}
	if got := describe("csv"); got != "user alice's csv" {
		t.Errorf("csv before protection = %q, want alice's", got)
	}
	if r := mustRun(t, env, "admin", "protect", "csv", "--library", "shared"); !strings.Contains(r.stdout, "protected: csv") {
		t.Errorf("protect printed %q", r.stdout)
	}
	if got := describe("csv"); !strings.HasPrefix(got, "shared ") {
		t.Errorf("csv after protection = %q, want the shared one", got)
	}
	if r := mustRun(t, env, "admin", "protected", "--library", "shared"); strings.TrimSpace(r.stdout) != "csv" {
		t.Errorf("protected printed %q", r.stdout)
	}
	mustRun(t, env, "admin", "unprotect", "csv", "--library", "shared")
	mustRun(t, env, "admin", "delete", "nda/SKILL.md", "--library", "team:legal")
	mustRun(t, env, "admin", "drop-index", "--library", "team:legal")
	if _, err := sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "nda"}); err == nil {
		t.Error("nda still served after admin delete")
	}
	if r := runCtl(t, env, "admin", "protected"); r.code != exitUsage {
		t.Errorf("admin protected without --library: exit %d, want %d", r.code, exitUsage)
	}
}

func skillFile(t *testing.T, dir, name, desc string) string {
	t.Helper()
	p := filepath.Join(dir, name+".md")
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nbody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTeamMemberEndToEnd: skillctl acts as a team member, with --teams in
// insecure mode (SKILLCTL_TEAMS and a context too) and with a token minted
// by `skillsvc token --teams` in jwt mode, where the token's claim decides
// and the metadata does not.
func TestTeamMemberEndToEnd(t *testing.T) {
	dir := t.TempDir()
	skill := skillFile(t, dir, "nda", "Legal's NDA review.")

	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	mustRun(t, env, "admin", "put", "nda/SKILL.md", skill, "--library", "team:legal")
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "alice").stdout); strings.Contains(got, "nda") {
		t.Errorf("ls without teams = %s; want no team skill", got)
	}
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "alice", "--teams", "legal").stdout); !strings.Contains(got, "nda") {
		t.Errorf("ls --teams legal = %s; want legal's nda", got)
	}
	mustRun(t, env, "config", "set-context", "legal", "--target", addr, "--user", "alice", "--teams", "legal")
	if got := names(t, mustRun(t, env, "ls", "--json", "--context", "legal").stdout); !strings.Contains(got, "nda") {
		t.Errorf("ls in a context with teams = %s; want legal's nda", got)
	}
	env["SKILLCTL_TEAMS"] = "eng"
	if got := names(t, mustRun(t, env, "ls", "--json", "--context", "legal").stdout); strings.Contains(got, "nda") {
		t.Errorf("SKILLCTL_TEAMS=eng over the context's legal = %s; want no legal skill", got)
	}
	delete(env, "SKILLCTL_TEAMS")

	jwtAddr, mint := startJWTServer(t)
	jenv := map[string]string{"SKILLCTL_TARGET": jwtAddr, "SKILLCTL_TOKEN_FILE": mint("--admin")}
	mustRun(t, jenv, "admin", "put", "nda/SKILL.md", skill, "--library", "team:legal")
	jenv["SKILLCTL_TOKEN_FILE"] = mint("--user", "alice", "--thread", "t1", "--teams", "legal")
	if got := names(t, mustRun(t, jenv, "ls", "--json").stdout); !strings.Contains(got, "nda") {
		t.Errorf("a member's token = %s; want legal's nda", got)
	}
	jenv["SKILLCTL_TOKEN_FILE"] = mint("--user", "alice", "--thread", "t1")
	if got := names(t, mustRun(t, jenv, "ls", "--json", "--teams", "legal").stdout); strings.Contains(got, "nda") {
		t.Errorf("a token without teams, metadata claiming legal = %s; want no legal skill", got)
	}
}

// TestAdminPublishEndToEnd: in insecure mode a push to the shared library
// is refused unless the caller says --admin (SKILLCTL_ADMIN, a context's
// admin field), which the built binary sends as x-skillsvc-admin; in jwt
// mode --admin beside a non-admin token is still refused: the token's
// admin scope decides.
func TestAdminPublishEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice", "SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	skill := writeSkill(t, "release-notes", map[string]string{"SKILL.md": "---\nname: release-notes\ndescription: Write release notes from a changelog.\n---\nGroup by feature.\n"})
	if r := runCtl(t, env, "push", skill, "--library", "shared"); r.code != exitServer || !strings.Contains(r.stderr, "PermissionDenied") {
		t.Fatalf("push --library shared without --admin: exit %d\n%s", r.code, r.stderr)
	}
	out, err := ctlCommand(t, env, "push", skill, "--library", "shared", "--admin").CombinedOutput()
	if err != nil {
		t.Fatalf("skillctl push --library shared --admin: %v\n%s", err, out)
	}
	if got := names(t, mustRun(t, map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "bob"}, "ls", "--json").stdout); !strings.Contains(got, "release-notes") {
		t.Errorf("bob's catalog after the shared publish = %s", got)
	}
	for what, e := range map[string]map[string]string{
		"SKILLCTL_ADMIN=true":  {"SKILLCTL_ADMIN": "true"},
		"a context with admin": {"SKILLCTL_CONTEXT": "ops"},
	} {
		run := map[string]string{}
		for k, v := range env {
			run[k] = v
		}
		for k, v := range e {
			run[k] = v
		}
		if what == "a context with admin" {
			mustRun(t, run, "config", "set-context", "ops", "--target", addr, "--user", "alice", "--admin")
		}
		mustRun(t, run, "push", skill, "--library", "shared", "-m", what)
	}

	jwtAddr, mint := startJWTServer(t)
	jenv := map[string]string{"SKILLCTL_TARGET": jwtAddr, "SKILLCTL_TOKEN_FILE": mint("--user", "alice", "--thread", "t1")}
	if r := runCtl(t, jenv, "push", skill, "--library", "shared", "--admin"); r.code != exitServer || !strings.Contains(r.stderr, "PermissionDenied") {
		t.Errorf("jwt mode, a non-admin token with --admin: exit %d\n%s", r.code, r.stderr)
	}
}
