package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestUsageAuthorizationEndToEnd: in jwt mode, whose usage each caller
// reads (GetUsage), over gRPC and JSON: one's own; not another user's; a
// team's only as a member who may change its library (admin scope), not
// as a plain member nor from outside; the organization's only as an
// admin; nothing without a token.
func TestUsageAuthorizationEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	putLibrary(put)
	put("_teams/legal/skills/law/nda/SKILL.md", skillMDOf("nda", "Review NDAs.", "Check it.\n"))
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	usageClient := skillsvcv1.NewUsageServiceClient(dial(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	token := func(user string, admin bool, teams ...string) string {
		c := agentClaims(user, "t1", "")
		c["teams"] = teams
		if admin {
			c["scope"] = "skillsvc:admin"
		}
		return signToken(t, jwt.SigningMethodHS256, f.secret, c)
	}
	tokens := map[string]string{
		"ann":        token("ann", false, "legal"),
		"lena admin": token("lena", true, "legal"),
		"ops admin":  token("ops", true),
		"carl":       token("carl", false, "eng"),
	}
	for _, c := range []struct {
		who  string
		lib  *skillsvcv1.LibraryRef
		want codes.Code
	}{
		{"ann", nil, codes.OK},
		{"ann", &skillsvcv1.LibraryRef{User: "ann"}, codes.OK},
		{"ann", &skillsvcv1.LibraryRef{User: "bob"}, codes.PermissionDenied},
		{"ann", &skillsvcv1.LibraryRef{Team: "legal"}, codes.PermissionDenied},
		{"ann", &skillsvcv1.LibraryRef{Shared: true}, codes.PermissionDenied},
		{"carl", &skillsvcv1.LibraryRef{Team: "legal"}, codes.PermissionDenied},
		{"carl", &skillsvcv1.LibraryRef{Team: "eng"}, codes.PermissionDenied},
		{"lena admin", &skillsvcv1.LibraryRef{Team: "legal"}, codes.OK},
		{"ops admin", &skillsvcv1.LibraryRef{Shared: true}, codes.OK},
		{"", nil, codes.Unauthenticated},
	} {
		cctx := ctx
		if c.who != "" {
			cctx = grpctest.WithBearer(ctx, tokens[c.who])
		}
		resp, err := usageClient.GetUsage(cctx, &skillsvcv1.GetUsageRequest{Library: c.lib, Days: 7})
		grpctest.WantCode(t, err, c.want)
		if err != nil {
			continue
		}
		// Each reads its own library's skills: the team admin legal's.
		// Its age is from when its SKILL.md appeared.
		if c.who == "lena admin" && !slices.ContainsFunc(resp.GetUnused(), func(u *skillsvcv1.UnusedSkill) bool {
			return u.GetName() == "nda" && u.GetDir() == "law/nda" && u.GetAdded() != nil && u.GetAgeDays() <= 1 && u.GetLastUsedDay() == ""
		}) {
			t.Errorf("legal's unused skills %v, want nda, added today (or yesterday, across midnight)", resp.GetUnused())
		}
		if c.who == "ops admin" && !slices.ContainsFunc(resp.GetUnused(), func(u *skillsvcv1.UnusedSkill) bool { return u.GetName() == "csv" }) {
			t.Errorf("the organization's unused skills %v, want csv", resp.GetUnused())
		}
	}
	// The same table over JSON: a plain member refused (403), the team
	// admin answered.
	for _, c := range []struct {
		who  string
		want int
	}{{"ann", http.StatusForbidden}, {"lena admin", http.StatusOK}} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.UsageService/GetUsage", strings.NewReader(`{"library":{"team":"legal"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokens[c.who])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("JSON GetUsage of legal as %s: %d, want %d", c.who, resp.StatusCode, c.want)
		}
	}
}

// TestUsageReportEndToEnd: activations through gRPC on one replica, which
// flushes them to Redis as it stops; a second replica on the same Redis
// and bucket reports them to whom they belong: alice her own library's
// skill by layer, version, users and threads, her unused skill and her
// search that found nothing; bob nothing of hers; the organization's
// shared skill, used by both, to an admin only.
func TestUsageReportEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	flags := s3Flags(srv, bucket, redisFlags(red, newKeyPrefix())...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice1, alice2, bob := grpctest.AsCaller(ctx, "alice", "t1", ""), grpctest.AsCaller(ctx, "alice", "t2", ""), grpctest.AsCaller(ctx, "bob", "t1", "")

	first := startBinary(t, minioEnv(srv), flags...)
	sk := skillsvcv1.NewSkillsServiceClient(dial(t, first.addr))
	var pdfDigest string
	for _, c := range []context.Context{alice1, alice1, alice2} {
		g, err := sk.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: "pdf"})
		if err != nil {
			t.Fatal(err)
		}
		pdfDigest = g.GetSkill().GetManifestDigest()
	}
	for _, c := range []context.Context{alice1, bob} {
		if _, err := sk.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: "csv"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sk.SearchSkills(alice1, &skillsvcv1.SearchSkillsRequest{Query: "zebra quilting"}); err != nil {
		t.Fatal(err)
	}
	uc := flushedUsage(t, srv, first, flags)
	mine, err := uc.GetUsage(alice1, &skillsvcv1.GetUsageRequest{Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(mine.GetSkills()) != 1 {
		t.Fatalf("alice's skills %v, want pdf alone", mine.GetSkills())
	}
	pdf := mine.GetSkills()[0]
	if pdf.GetName() != "pdf" || pdf.GetLayer() != "user" || pdf.GetActivations() != 3 || pdf.GetUsers() != 1 || pdf.GetThreads() != 2 || pdf.GetSurfaces()["grpc"] != 3 {
		t.Errorf("alice's pdf %v; want 3 activations over gRPC by 1 user in 2 threads, layer user", pdf)
	}
	if v := pdf.GetVersions(); len(v) != 1 || v[0].GetVersion() != pdfDigest || v[0].GetActivations() != 3 {
		t.Errorf("pdf's versions %v, want %s x3", v, pdfDigest)
	}
	if got := unusedNames(mine.GetUnused()); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("alice's unused %v, want notes", got)
	}
	if !slices.ContainsFunc(mine.GetSearches(), func(q *skillsvcv1.SearchUsage) bool {
		return q.GetQuery() == "zebra quilting" && q.GetSearches() == 1 && q.GetEmpty() == 1
	}) {
		t.Errorf("alice's searches %v, want zebra quilting that found nothing", mine.GetSearches())
	}
	theirs, err := uc.GetUsage(bob, &skillsvcv1.GetUsageRequest{Days: 1})
	if err != nil || len(theirs.GetSkills()) != 0 {
		t.Errorf("bob's own usage %v, %v; want none of alice's", theirs.GetSkills(), err)
	}
	_, err = uc.GetUsage(alice1, &skillsvcv1.GetUsageRequest{Library: &skillsvcv1.LibraryRef{Shared: true}})
	grpctest.WantCode(t, err, codes.PermissionDenied)
	org, err := uc.GetUsage(metadata.AppendToOutgoingContext(alice1, auth.AdminKey, "true"), &skillsvcv1.GetUsageRequest{Library: &skillsvcv1.LibraryRef{Shared: true}, Days: 1})
	if err != nil || len(org.GetSkills()) != 1 || org.GetSkills()[0].GetName() != "csv" || org.GetSkills()[0].GetActivations() != 2 || org.GetSkills()[0].GetUsers() != 2 || org.GetSkills()[0].GetLayer() != "shared" {
		t.Errorf("the organization's usage %v, %v; want csv x2 by 2 users", org.GetSkills(), err)
	}
}

// flushedUsage stops first with SIGTERM, as which the replica flushes its
// counts (to Redis), and returns the usage service of a second replica
// started with flags.
func flushedUsage(t *testing.T, srv *testserver.MinIO, first *proc, flags []string) skillsvcv1.UsageServiceClient {
	t.Helper()
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-first.done; err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, first.output())
	}
	second := startBinary(t, minioEnv(srv), flags...)
	return skillsvcv1.NewUsageServiceClient(dial(t, second.addr))
}

func unusedNames(us []*skillsvcv1.UnusedSkill) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.GetName())
	}
	return out
}
