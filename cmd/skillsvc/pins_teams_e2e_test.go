package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestPinnedTeamThreadEndToEnd: ann (team legal) pins thread t1; her
// team's library changes through AdminService.PutLibraryFile and `aws s3
// cp` to _teams/legal/skills/, and the organization stops protecting
// contracts. Thread t1 keeps the team skill's old bytes and the protection
// as pinned; her unpinned thread t2 sees every change; carl (team eng)
// pinned sees nothing of legal's.
func TestPinnedTeamThreadEndToEnd(t *testing.T) {
	awsCLI := testserver.AWSCLI(t)
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	teamsLibrary(put)
	put("_teams/legal/skills/nda/clauses.md", "old clauses\n")
	put("ann/skills/contracts/SKILL.md", "---\nname: contracts\ndescription: Ann's contracts.\n---\nmine\n")
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...)
	conn := dial(t, p.addr)
	sc, adm := skillsvcv1.NewSkillsServiceClient(conn), skillsvcv1.NewAdminServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	as := func(user, thread, teams string, pinned bool) context.Context {
		c := grpctest.InTeams(grpctest.AsCaller(ctx, user, thread, ""), teams)
		if pinned {
			c = metadata.AppendToOutgoingContext(c, auth.PinKey, auth.PinLibrary)
		}
		return c
	}
	shared := &skillsvcv1.LibraryRef{Shared: true}
	if _, err := adm.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: shared, Name: "contracts", Protected: true}); err != nil {
		t.Fatal(err)
	}
	// view is nda's SKILL.md and clauses and whose contracts the name
	// refers to.
	view := func(c context.Context) string {
		t.Helper()
		g, err := sc.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: "nda"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := sc.ReadSkillFile(c, &skillsvcv1.ReadSkillFileRequest{Path: "nda", File: "clauses.md"})
		if err != nil {
			t.Fatal(err)
		}
		k, err := sc.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: "contracts"})
		if err != nil {
			t.Fatal(err)
		}
		return g.GetSkill().GetLayer() + " " + g.GetSkill().GetDescription() + " " + strings.TrimSpace(f.GetContent()) + " | contracts " + k.GetSkill().GetLayer()
	}
	t1, t2 := as("ann", "t1", "legal", true), as("ann", "t2", "legal", false)
	const before = "team:legal Legal team NDA review. old clauses | contracts shared"
	if got := view(t1); got != before {
		t.Fatalf("pinned t1 = %q, want %q", got, before)
	}
	carl := as("carl", "t1", "eng", true)
	if names, err := skillNames(carl, sc); err != nil || names != "contracts,deploy" {
		t.Fatalf("carl pinned lists %q, %v", names, err)
	}

	// Legal's library changes through the API and with the AWS CLI.
	if _, err := adm.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{Team: "legal"}, Path: "nda/SKILL.md",
		Data: []byte("---\nname: nda\ndescription: NDA review, second edition.\n---\nv2\n"),
	}); err != nil {
		t.Fatal(err)
	}
	clauses := filepath.Join(t.TempDir(), "clauses.md")
	if err := os.WriteFile(clauses, []byte("new clauses\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, awsCLI, "--endpoint-url", srv.Endpoint, "s3", "cp", "--only-show-errors", clauses, "s3://"+bucket+"/_teams/legal/skills/nda/clauses.md")
	cmd.Env = srv.AWSEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp: %v\n%s", err, out)
	}
	if _, err := adm.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{Team: "legal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: shared, Name: "contracts", Protected: false}); err != nil {
		t.Fatal(err)
	}

	if got, want := view(t2), "team:legal NDA review, second edition. new clauses | contracts user"; got != want {
		t.Errorf("unpinned t2 = %q, want %q", got, want)
	}
	if got := view(t1); got != before {
		t.Errorf("pinned t1 after the changes = %q, want as pinned %q", got, before)
	}
	// carl's pinned thread still has nothing of legal's, also by path.
	_, err := sc.GetSkill(carl, &skillsvcv1.GetSkillRequest{Path: "nda"})
	grpctest.WantCode(t, err, codes.NotFound)
}
