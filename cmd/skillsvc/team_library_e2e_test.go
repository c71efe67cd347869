package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestTeamLibraryEndToEnd: in jwt mode an admin publishes two versions of
// a skill to team legal's library; ann (team legal, from her token) lists
// it, its versions, and reads the first version pinned; carl (team eng)
// sees neither, even claiming legal in metadata; ann cannot publish to the
// team without an admin; the team's versions live under its own root and
// its garbage is collected.
func TestTeamLibraryEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	conn := dial(t, p.addr)
	lib, sk := skillsvcv1.NewLibraryServiceClient(conn), skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	as := func(user string, teams ...string) context.Context {
		c := agentClaims(user, "t1", "")
		c["teams"] = teams
		return grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, c))
	}
	adminClaims := agentClaims("ops", "t1", "")
	adminClaims["scope"] = "skillsvc:admin"
	admin := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, adminClaims))
	ann, carl := as("ann", "legal"), as("carl", "eng")
	legal := &skillsvcv1.LibraryRef{Team: "legal"}

	var ids []string
	for _, desc := range []string{"NDA review, first.", "NDA review, second."} {
		r, err := pushFolder(admin, lib, &skillsvcv1.PublishSkillHeader{Library: legal, Category: "law", Name: "nda"}, map[string]string{"SKILL.md": skillMDOf("nda", desc, "Check it.\n")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetVersion().GetId())
	}
	if !slices.ContainsFunc(bucketKeys(t, srv, bucket), func(k string) bool { return strings.HasPrefix(k, "_teams/legal/versions/skills/nda/v/") }) {
		t.Fatalf("no version record under _teams/legal/versions/: %v", bucketKeys(t, srv, bucket))
	}

	// ann: listed from her team, both versions, the first pinned.
	list, err := sk.ListSkills(ann, &skillsvcv1.ListSkillsRequest{})
	if err != nil || !slices.ContainsFunc(list.GetSkills(), func(s *skillsvcv1.SkillSummary) bool {
		return s.GetName() == "nda" && s.GetLayer() == "team:legal" && s.GetManifestDigest() == ids[1]
	}) {
		t.Fatalf("ann's ListSkills = %v, %v; want legal's nda at %s", list.GetSkills(), err, ids[1])
	}
	vs, err := lib.ListSkillVersions(ann, &skillsvcv1.ListSkillVersionsRequest{Library: legal, Name: "nda"})
	if err != nil || len(vs.GetVersions()) != 2 {
		t.Fatalf("ann's ListSkillVersions = %v, %v; want 2", vs, err)
	}
	g, err := sk.GetSkill(ann, &skillsvcv1.GetSkillRequest{Path: "nda", Version: ids[0]})
	if err != nil || g.GetSkill().GetDescription() != "NDA review, first." || g.GetSkill().GetLayer() != "team:legal" {
		t.Fatalf("ann's GetSkill(nda@%s) = %v, %v; want the first version from team legal", ids[0], g.GetSkill(), err)
	}

	// carl: nothing of legal's, also when his metadata claims the team.
	for label, c := range map[string]context.Context{"carl": carl, "carl claiming legal": grpctest.InTeams(carl, "legal")} {
		list, err := sk.ListSkills(c, &skillsvcv1.ListSkillsRequest{})
		if err != nil || slices.ContainsFunc(list.GetSkills(), func(s *skillsvcv1.SkillSummary) bool { return s.GetName() == "nda" }) {
			t.Errorf("%s: ListSkills = %v, %v; want no nda", label, list.GetSkills(), err)
		}
		_, err = lib.ListSkillVersions(c, &skillsvcv1.ListSkillVersionsRequest{Library: legal, Name: "nda"})
		grpctest.WantCode(t, err, codes.PermissionDenied)
		_, err = sk.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: "nda", Version: ids[0]})
		grpctest.WantCode(t, err, codes.NotFound)
		_, err = lib.GetSkillVersion(c, &skillsvcv1.GetSkillVersionRequest{Library: legal, Name: "nda", Version: ids[0]})
		grpctest.WantCode(t, err, codes.PermissionDenied)
	}

	// A member does not change the team's library without review.
	_, err = pushFolder(ann, lib, &skillsvcv1.PublishSkillHeader{Library: legal, Name: "mine"}, map[string]string{"SKILL.md": skillMDOf("mine", "Ann's.", "")})
	grpctest.WantCode(t, err, codes.PermissionDenied)
	_, err = lib.RollbackSkill(ann, &skillsvcv1.RollbackSkillRequest{Library: legal, Name: "nda", Version: ids[0]})
	grpctest.WantCode(t, err, codes.PermissionDenied)

	// The team's garbage is collected (none yet: every blob is young).
	gc, err := skillsvcv1.NewAdminServiceClient(conn).CollectLibraryGarbage(admin, &skillsvcv1.CollectLibraryGarbageRequest{Library: legal})
	if err != nil || gc.GetBlobsDeleted() != 0 {
		t.Fatalf("CollectLibraryGarbage(team legal) = %v, %v", gc, err)
	}
}
