package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file try the authors' path as a hostile author would,
// through the binary on MinIO in jwt mode with --library.review.

// reviewFixture is a binary with review on, and callers by name.
type reviewFixture struct {
	p     *proc
	srv   *testserver.MinIO
	lib   skillsvcv1.LibraryServiceClient
	sk    skillsvcv1.SkillsServiceClient
	adm   skillsvcv1.AdminServiceClient
	as    func(user, sub string) context.Context
	admin context.Context
}

func startReview(t *testing.T, bucket string, srv *testserver.MinIO, extra ...string) reviewFixture {
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f, append([]string{"--library.review"}, extra...)...)...)...)
	conn := dial(t, p.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	as := func(user, sub string) context.Context {
		c := agentClaims(user, "t1", "")
		if sub != "" {
			c["sub"] = sub
		}
		return grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, c))
	}
	adminClaims := agentClaims("ops", "t1", "")
	adminClaims["scope"] = "skillsvc:admin"
	return reviewFixture{
		p: p, srv: srv, lib: skillsvcv1.NewLibraryServiceClient(conn), sk: skillsvcv1.NewSkillsServiceClient(conn),
		adm: skillsvcv1.NewAdminServiceClient(conn), as: as,
		admin: grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, adminClaims)),
	}
}

var sharedRef = &skillsvcv1.LibraryRef{Shared: true}

// TestReviewBypassRefusedEndToEnd: a non-admin who re-publishes the files
// of a version once published gets a pending proposal of its own: nothing
// goes live, no label moves, a deleted skill stays deleted, and an admin's
// rollback leaves one folder serving the admin's choice. A user sharing
// another's token subject sees none of its drafts, and the same files
// proposed again by someone else reveal nothing of the first proposal.
func TestReviewBypassRefusedEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	r := startReview(t, bucket, srv)
	bob, carol := r.as("bob", ""), r.as("carol", "")
	mallory := r.as("mallory", "agent-bob") // bob's token subject, another user
	v1files := map[string]string{"SKILL.md": skillMDOf("pdf", "Read PDFs.", "Version one.\n")}
	v2files := map[string]string{"SKILL.md": skillMDOf("pdf", "Read PDFs.", "Version two.\n")}
	r1, err := pushFolder(r.admin, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "docs", Name: "pdf"}, v1files)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := pushFolder(r.admin, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "docs", Name: "pdf", Labels: []string{"production"}}, v2files)
	if err != nil {
		t.Fatal(err)
	}
	served := func() string {
		t.Helper()
		l, err := r.sk.ListSkills(carol, &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.GetSkills() {
			if s.GetName() == "pdf" {
				return s.GetManifestDigest()
			}
		}
		return ""
	}
	labels := func() map[string]string {
		t.Helper()
		vs, err := r.lib.ListSkillVersions(r.admin, &skillsvcv1.ListSkillVersionsRequest{Library: sharedRef, Name: "pdf"})
		if err != nil {
			t.Fatal(err)
		}
		return vs.GetLabels()
	}
	// bob re-publishes v1's files asking for production: refused; without
	// labels, a pending proposal, and v2 still served and labelled.
	_, err = pushFolder(bob, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "docs", Name: "pdf", Labels: []string{"production"}}, v1files)
	grpctest.WantCode(t, err, codes.PermissionDenied)
	pend, err := pushFolder(bob, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "docs", Name: "pdf", Message: "bob's note"}, v1files)
	if err != nil || pend.GetVersion().GetState() != skillsvcv1.VersionState_VERSION_STATE_PENDING || pend.GetSkill() != nil {
		t.Fatalf("bob's re-publish of v1 = %v, %v", pend, err)
	}
	if got := served(); got != r2.GetVersion().GetId() {
		t.Fatalf("after bob's re-publish of v1 the shared library serves %q, want v2 %s", got, r2.GetVersion().GetId())
	}
	if l := labels(); l["production"] != r2.GetVersion().GetId() || l["latest"] != r2.GetVersion().GetId() {
		t.Fatalf("labels moved: %v", l)
	}
	// Drafts by user, not token subject.
	vs, err := r.lib.ListSkillVersions(mallory, &skillsvcv1.ListSkillVersionsRequest{Library: sharedRef, Name: "pdf"})
	if err != nil || slices.ContainsFunc(vs.GetVersions(), func(v *skillsvcv1.SkillVersion) bool {
		return v.GetState() != skillsvcv1.VersionState_VERSION_STATE_PUBLISHED
	}) {
		t.Fatalf("mallory, with bob's token subject, lists %v, %v", vs, err)
	}
	_, err = r.sk.GetSkill(mallory, &skillsvcv1.GetSkillRequest{Path: "pdf", Version: pend.GetVersion().GetId()})
	grpctest.WantCode(t, err, codes.NotFound)
	if _, err := r.lib.ReviewSkillVersion(r.admin, &skillsvcv1.ReviewSkillVersionRequest{Library: sharedRef, Name: "pdf", Version: pend.GetVersion().GetId(), Comment: "bob: no"}); err != nil {
		t.Fatal(err)
	}
	// mallory proposes the same files: her own, revealing nothing of bob's.
	mp, err := pushFolder(mallory, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "docs", Name: "pdf"}, v1files)
	if v := mp.GetVersion(); err != nil || v.GetId() == pend.GetVersion().GetId() || v.GetMessage() != "" || v.GetReviewComment() != "" || v.GetState() != skillsvcv1.VersionState_VERSION_STATE_PENDING {
		t.Fatalf("mallory's proposal of bob's files = %v, %v", mp, err)
	}
	got, err := r.lib.GetSkillVersion(bob, &skillsvcv1.GetSkillVersionRequest{Library: sharedRef, Name: "pdf", Version: pend.GetVersion().GetId()})
	if err != nil || got.GetVersion().GetState() != skillsvcv1.VersionState_VERSION_STATE_REJECTED {
		t.Fatalf("bob's rejected proposal after mallory's = %v, %v", got, err)
	}

	// A deleted skill stays deleted.
	if _, err := r.lib.DeleteSkill(r.admin, &skillsvcv1.DeleteSkillRequest{Library: sharedRef, Name: "pdf"}); err != nil {
		t.Fatal(err)
	}
	if res, err := pushFolder(bob, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Category: "other", Name: "pdf"}, v2files); err != nil || res.GetVersion().GetState() != skillsvcv1.VersionState_VERSION_STATE_PENDING {
		t.Fatalf("bob's re-publish of a deleted skill = %v, %v", res, err)
	}
	if got := served(); got != "" {
		t.Fatalf("a deleted skill came back as %s", got)
	}
	// The admin's rollback: one folder, the admin's choice.
	if _, err := r.lib.RollbackSkill(r.admin, &skillsvcv1.RollbackSkillRequest{Library: sharedRef, Name: "pdf", Version: r1.GetVersion().GetId()}); err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, k := range bucketKeys(t, r.srv, bucket) {
		if strings.HasSuffix(k, "/pdf/SKILL.md") && !strings.Contains(k, "/versions/") {
			folders = append(folders, k)
		}
	}
	if len(folders) != 1 || served() != r1.GetVersion().GetId() {
		t.Fatalf("after the admin's rollback: folders %q, serving %q, want v1 %s", folders, served(), r1.GetVersion().GetId())
	}
}

// TestRecordBoundsEndToEnd: a proposal whose version record would pass
// the stored-record bound is INVALID_ARGUMENT naming it; records put in
// the bucket by hand that cannot be read are skipped, and named by key in
// the log, by ListSkillVersions, RejectProposals and garbage collection
// (which then deletes no blob), and an admin deletes them.
func TestRecordBoundsEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	r := startReview(t, bucket, srv)
	bob := r.as("bob", "")
	// 511 paths of quotes, which JSON writes as two bytes each.
	files := map[string]string{"SKILL.md": skillMDOf("big", "Big.", "")}
	seg := strings.Repeat(`"`, 249)
	for i := 1; i < 512; i++ {
		files[fmt.Sprintf("f%03d/%s/%s/%s/%s", i, seg, seg, seg, seg)] = "x"
	}
	_, err := pushFolder(bob, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Name: "big"}, files)
	grpctest.WantCode(t, err, codes.InvalidArgument)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "1048576") {
		t.Fatalf("the refusal names no limit: %s", msg)
	}

	if _, err := pushFolder(r.admin, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Name: "sql"}, map[string]string{"SKILL.md": skillMDOf("sql", "Query.", "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFolder(bob, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Name: "sql"}, map[string]string{"SKILL.md": skillMDOf("sql", "Query more.", "")}); err != nil {
		t.Fatal(err)
	}
	put := s3Put(t, srv, bucket)
	bad := "_shared/versions/skills/sql/v/" + strings.Repeat("a", 64) + ".json"
	huge := "_shared/versions/skills/sql/p/" + strings.Repeat("b", 64) + ".json"
	put(bad, "{not json")
	put(huge, `{"id":"`+strings.Repeat(" ", 1<<20)+`"}`)

	vs, err := r.lib.ListSkillVersions(r.admin, &skillsvcv1.ListSkillVersionsRequest{Library: sharedRef, Name: "sql"})
	if err != nil || len(vs.GetVersions()) != 2 {
		t.Fatalf("ListSkillVersions beside unreadable records = %v, %v", vs, err)
	}
	rej, err := r.adm.RejectProposals(r.admin, &skillsvcv1.RejectProposalsRequest{Library: sharedRef, Name: "sql", Comment: "expired"})
	if err != nil || rej.GetRejected() != 1 || !slices.Equal(rej.GetUnreadableRecords(), []string{huge}) {
		t.Fatalf("RejectProposals = %v, %v", rej, err)
	}
	gc, err := r.adm.CollectLibraryGarbage(r.admin, &skillsvcv1.CollectLibraryGarbageRequest{Library: sharedRef})
	if err != nil || gc.GetBlobsDeleted() != 0 || len(gc.GetUnreadableRecords()) != 2 {
		t.Fatalf("CollectLibraryGarbage beside unreadable records = %v, %v", gc, err)
	}
	for _, k := range []string{bad, huge} {
		if !strings.Contains(r.p.output(), "key="+k) && !strings.Contains(r.p.output(), `"key":"`+k+`"`) {
			t.Errorf("the log does not name %s", k)
		}
	}
	// Labelled versions stay; unreadable records go.
	_, err = r.adm.DeleteSkillVersions(r.admin, &skillsvcv1.DeleteSkillVersionsRequest{Library: sharedRef, Name: "sql", Versions: []string{vs.GetLabels()["latest"]}})
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	del, err := r.adm.DeleteSkillVersions(r.admin, &skillsvcv1.DeleteSkillVersionsRequest{Library: sharedRef, Name: "sql", Versions: []string{"sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)}})
	if err != nil || del.GetDeleted() != 2 {
		t.Fatalf("DeleteSkillVersions = %v, %v", del, err)
	}
	if gc, err := r.adm.CollectLibraryGarbage(r.admin, &skillsvcv1.CollectLibraryGarbageRequest{Library: sharedRef, DryRun: true}); err != nil || len(gc.GetUnreadableRecords()) != 0 {
		t.Fatalf("CollectLibraryGarbage after the deletes = %v, %v", gc, err)
	}
}

// TestProposalsCannotFillVersionsEndToEnd: proposals are capped per
// author and per skill and kept apart from the versions, so the admin's
// publish succeeds with proposals at their cap. The caps are lowered
// (3 versions, 3 proposals, 2 per author) only to keep the publishes few;
// the defaults (1,000 versions, 100 proposals, 10 per author) relate the
// same way.
func TestProposalsCannotFillVersionsEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	r := startReview(t, bucket, srv, "--library.max-versions=3", "--library.max-proposals=3", "--library.max-proposals-per-author=2")
	bob, carol := r.as("bob", ""), r.as("carol", "")
	push := func(ctx context.Context, desc string) error {
		_, err := pushFolder(ctx, r.lib, &skillsvcv1.PublishSkillHeader{Library: sharedRef, Name: "c"}, map[string]string{"SKILL.md": skillMDOf("c", desc, "")})
		return err
	}
	for i := range 2 {
		if err := push(bob, fmt.Sprint("bob ", i)); err != nil {
			t.Fatal(err)
		}
	}
	grpctest.WantCode(t, push(bob, "bob 2"), codes.FailedPrecondition)
	if err := push(carol, "carol 0"); err != nil {
		t.Fatal(err)
	}
	grpctest.WantCode(t, push(carol, "carol 1"), codes.FailedPrecondition)
	for i := range 3 {
		if err := push(r.admin, fmt.Sprint("admin ", i)); err != nil {
			t.Fatalf("the admin's publish %d with proposals at their cap: %v", i, err)
		}
	}
	// Deleting the proposals frees their cap.
	if res, err := r.adm.RejectProposals(r.admin, &skillsvcv1.RejectProposalsRequest{Library: sharedRef, Name: "c", Delete: true}); err != nil || res.GetDeleted() != 3 {
		t.Fatalf("RejectProposals(delete) = %v, %v", res, err)
	}
	if err := push(carol, "carol 1"); err != nil {
		t.Fatal(err)
	}
}
