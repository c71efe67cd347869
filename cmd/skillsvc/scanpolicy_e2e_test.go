package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// maliciousSkills are internal/scan's crafted malicious skills, one per
// rule (fake secrets, unreachable hosts).
const maliciousSkills = "../../internal/scan/testdata/malicious"

// maliciousFiles reads one crafted malicious skill as pushFolder sends it.
func maliciousFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	root := filepath.Join(maliciousSkills, name)
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// awsCp uploads a local folder with `aws s3 cp --recursive`, as a user
// uploads a skill out of band.
func awsCp(t *testing.T, srv *testserver.MinIO, dir, dest string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), testserver.AWSCLI(t), "--endpoint-url", srv.Endpoint, "s3", "cp", "--recursive", "--only-show-errors", dir, dest)
	cmd.Env = srv.AWSEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp: %v\n%s", err, out)
	}
}

func problemRules(ps []*skillsvcv1.SkillProblem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.GetRule()+" "+p.GetFile())
	}
	return out
}

func mentions(lines []string, s string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, s) })
}

// TestScanPolicyPublishEndToEnd: --library.scan=warn,users=block with the
// default limits. An admin's publish of a skill that pipes a download into
// a shell to the organization's library (warn) goes live with the finding
// in the reply's warnings (rule, file, line), in the version's record (what
// a reviewer reads), in ListSkills and GetSkill, and its report beside the
// version record; alice's publish of the same kind to her own library
// (block) is FAILED_PRECONDITION with the findings in the message and the
// SkillProblems detail, and leaves nothing live and no version; her clean
// skill publishes with no warning. Each content is scanned once: a
// publish of the same files again, and the live copy the index sees, reuse
// the verdict (skillsvc_scan_runs_total).
func TestScanPolicyPublishEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--library.scan=warn,users=block")...)
	conn := dial(t, p.addr)
	lib, sk := skillsvcv1.NewLibraryServiceClient(conn), skillsvcv1.NewSkillsServiceClient(conn)
	m := metricsFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	admin := metadata.AppendToOutgoingContext(grpctest.AsCaller(ctx, "ops", "t1", ""), auth.AdminKey, "true")
	shared := &skillsvcv1.LibraryRef{Shared: true}
	bad := maliciousFiles(t, "script-download-exec")

	// warn: live, with the finding.
	r, err := pushFolder(admin, lib, &skillsvcv1.PublishSkillHeader{Library: shared, Name: "script-download-exec"}, bad)
	if err != nil {
		t.Fatalf("publish under warn: %v", err)
	}
	if !slices.Contains(problemRules(r.GetProblems()), "script/download-exec scripts/install.sh") {
		t.Fatalf("publish warnings %v, want script/download-exec in scripts/install.sh", r.GetProblems())
	}
	id := r.GetVersion().GetId()
	v, err := lib.GetSkillVersion(admin, &skillsvcv1.GetSkillVersionRequest{Library: shared, Name: "script-download-exec", Version: id})
	if err != nil || !slices.Contains(problemRules(v.GetVersion().GetProblems()), "script/download-exec scripts/install.sh") {
		t.Fatalf("the version's record (a reviewer's view) = %v, %v; want the finding", v.GetVersion().GetProblems(), err)
	}
	if key := "_shared/versions/skills/script-download-exec/scan/" + strings.TrimPrefix(id, "sha256:") + ".json"; !slices.Contains(bucketKeys(t, srv, bucket), key) {
		t.Fatalf("no scan report at %s: %v", key, bucketKeys(t, srv, bucket))
	}
	g, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "script-download-exec"})
	if err != nil || !mentions(g.GetSkill().GetWarnings(), "script/download-exec at scripts/install.sh:4") {
		t.Fatalf("alice's GetSkill = %v, %v; want the finding among the warnings", g.GetSkill().GetWarnings(), err)
	}
	list, err := sk.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil || !slices.ContainsFunc(list.GetSkills(), func(s *skillsvcv1.SkillSummary) bool {
		return s.GetName() == "script-download-exec" && mentions(s.GetWarnings(), "script/download-exec")
	}) {
		t.Fatalf("alice's ListSkills = %v, %v; want the skill with its finding", list.GetSkills(), err)
	}

	// block: refused, with the findings; nothing live, no version.
	override := maliciousFiles(t, "injection-override")
	_, err = pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "injection-override"}, override)
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	if !strings.Contains(status.Convert(err).Message(), "injection/override at SKILL.md:") {
		t.Errorf("refusal message %q, want the rule and its place", status.Convert(err).Message())
	}
	var detail []string
	for _, d := range status.Convert(err).Details() {
		if ps, ok := d.(*skillsvcv1.SkillProblems); ok {
			detail = problemRules(ps.GetProblems())
		}
	}
	if !slices.Contains(detail, "injection/override SKILL.md") {
		t.Errorf("refusal details %v, want injection/override in SKILL.md", detail)
	}
	list, err = sk.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true})
	if err != nil || slices.ContainsFunc(list.GetSkills(), func(s *skillsvcv1.SkillSummary) bool { return s.GetName() == "injection-override" }) {
		t.Fatalf("after the refused publish ListSkills = %v, %v; want no injection-override", list.GetSkills(), err)
	}
	if keys := bucketKeys(t, srv, bucket); slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "injection-override") }) {
		t.Fatalf("a refused publish stored %v", keys)
	}
	// A clean skill publishes under block with no warning.
	r, err = pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "notes"}, map[string]string{"SKILL.md": skillMDOf("notes", "Summarize meeting notes into action items.", "List the decisions and the owners.\n")})
	if err != nil || len(r.GetProblems()) != 0 {
		t.Fatalf("clean publish under block = %v, %v; want no problems", r.GetProblems(), err)
	}

	// Once per content: the refused skill again, and the warned one
	// again, are not scanned again; nor is the live copy the index sees.
	_, err = pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "injection-override"}, override)
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	if _, err := pushFolder(admin, lib, &skillsvcv1.PublishSkillHeader{Library: shared, Name: "script-download-exec"}, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := sk.ListSkills(alice, &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := m.value(t, `skillsvc_scan_runs_total{source="publish"}`); n != 3 {
		t.Errorf("publish scans = %v, want 3 (one per content)", n)
	}
	if n := m.value(t, `skillsvc_scan_runs_total{source="upload"}`); n != 0 {
		t.Errorf("upload scans = %v, want 0 (the live copies of published versions were judged at publish)", n)
	}
}

// TestScanPolicyUploadEndToEnd: --library.scan=warn,shared=block with the
// default limits. Crafted malicious skills uploaded with `aws s3 cp`: to
// alice's own library (warn) one is served with its finding among the
// warnings; to the organization's (block) one is served to no one (bob
// does not see it listed, also with include_invalid, and GetSkill does not
// serve it), and is listed as invalid with why to an admin; a clean skill
// uploaded beside it is served. Each content is scanned once
// (skillsvc_scan_runs_total), whoever lists it how often.
func TestScanPolicyUploadEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--library.scan=warn,shared=block")...)
	conn := dial(t, p.addr)
	sk := skillsvcv1.NewSkillsServiceClient(conn)
	m := metricsFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice, bob := grpctest.AsCaller(ctx, "alice", "t1", ""), grpctest.AsCaller(ctx, "bob", "t1", "")
	admin := metadata.AppendToOutgoingContext(grpctest.AsCaller(ctx, "ops", "t1", ""), auth.AdminKey, "true")

	awsCp(t, srv, filepath.Join(maliciousSkills, "hidden-unicode-tags"), "s3://"+bucket+"/alice/skills/hidden-unicode-tags/")
	awsCp(t, srv, filepath.Join(maliciousSkills, "secret-aws-key"), "s3://"+bucket+"/_shared/skills/secret-aws-key/")
	clean := t.TempDir()
	if err := os.WriteFile(filepath.Join(clean, "SKILL.md"), []byte(skillMDOf("release-notes", "Write release notes from merged changes.", "Group the changes by area.\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	awsCp(t, srv, clean, "s3://"+bucket+"/_shared/skills/release-notes/")

	summary := func(c context.Context, name string, invalid bool) *skillsvcv1.SkillSummary {
		t.Helper()
		list, err := sk.ListSkills(c, &skillsvcv1.ListSkillsRequest{IncludeInvalid: invalid})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.GetSkills() {
			if s.GetName() == name {
				return s
			}
		}
		return nil
	}
	// warn: served, the finding among its warnings once scanned.
	pollUntil(t, time.Minute, "alice's uploaded skill listed with its finding", func() bool {
		s := summary(alice, "hidden-unicode-tags", false)
		return s != nil && mentions(s.GetWarnings(), "hidden-text/unicode-tags at SKILL.md:")
	})
	g, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "hidden-unicode-tags"})
	if err != nil || !mentions(g.GetSkill().GetWarnings(), "hidden-text/unicode-tags") {
		t.Fatalf("alice's GetSkill = %v, %v; want the finding among the warnings", g.GetSkill().GetWarnings(), err)
	}
	// block: an admin sees it listed as invalid, with why.
	pollUntil(t, time.Minute, "the admin's listing of the blocked skill with its finding", func() bool {
		s := summary(admin, "secret-aws-key", true)
		return s != nil && mentions(s.GetErrors(), "secret/aws-access-token at config.env:")
	})
	if s := summary(admin, "secret-aws-key", false); s != nil {
		t.Errorf("the blocked skill is listed without include_invalid: %v", s)
	}
	// Not served to another user of the organization's library.
	for _, invalid := range []bool{false, true} {
		if s := summary(bob, "secret-aws-key", invalid); s != nil {
			t.Errorf("bob's ListSkills(include_invalid=%t) lists the blocked skill: %v", invalid, s)
		}
	}
	_, err = sk.GetSkill(bob, &skillsvcv1.GetSkillRequest{Path: "secret-aws-key"})
	if c := status.Code(err); c != codes.NotFound && c != codes.FailedPrecondition {
		t.Errorf("bob's GetSkill of the blocked skill: %v; want NOT_FOUND or FAILED_PRECONDITION", err)
	}
	if err != nil && strings.Contains(err.Error(), "config.env") {
		t.Errorf("bob's GetSkill tells him why the skill is blocked: %v", err)
	}
	_, err = sk.ReadSkillFile(bob, &skillsvcv1.ReadSkillFileRequest{Path: "secret-aws-key", File: "config.env"})
	if err == nil {
		t.Errorf("bob reads a file of the blocked skill")
	}
	// A clean skill beside it is served.
	pollUntil(t, time.Minute, "the clean uploaded skill served to bob", func() bool {
		s := summary(bob, "release-notes", false)
		return s != nil && len(s.GetWarnings()) == 0
	})
	if _, err := sk.GetSkill(bob, &skillsvcv1.GetSkillRequest{Path: "release-notes"}); err != nil {
		t.Fatalf("bob's GetSkill of the clean skill: %v", err)
	}

	// Once per content, however often and by whom it is listed.
	for _, c := range []context.Context{alice, bob, admin, alice} {
		if _, err := sk.ListSkills(c, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true}); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.value(t, `skillsvc_scan_runs_total{source="upload"}`); n != 3 {
		t.Errorf("upload scans = %v, want 3 (one per content uploaded)", n)
	}
}
