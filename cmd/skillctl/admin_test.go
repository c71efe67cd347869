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
