package library_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// TestReviewRules: whether a publish goes live is the caller's role and
// the library's policy, never what is stored; proposals are their
// author's (by user ID) and share nothing with another's of the same
// files; stored records are bounded on write and an unreadable one is
// skipped; proposals never fill the version cap.
func TestReviewRules(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		review := func(c *library.Config) { c.Review = true }
		t.Run("NoBypass", func(t *testing.T) { testNoBypass(t, newEnv(t, newBucket(t), review)) })
		t.Run("OneFolderAfterRollback", func(t *testing.T) { testOneFolder(t, newEnv(t, newBucket(t), review)) })
		t.Run("ProposalsApart", func(t *testing.T) { testProposalsApart(t, newEnv(t, newBucket(t), review)) })
		t.Run("RecordBound", func(t *testing.T) { testRecordBound(t, newEnv(t, newBucket(t), review)) })
		t.Run("Caps", func(t *testing.T) {
			testCaps(t, newEnv(t, newBucket(t), func(c *library.Config) {
				c.Review, c.MaxVersions, c.MaxProposals, c.MaxProposalsPerAuthor = true, 3, 3, 2
			}))
		})
	})
}

var shared = layout.LibraryRef{Shared: true}

// sharedDirs lists the shared library's live folders holding SKILL.md.
func sharedDirs(t *testing.T, e env) []string {
	t.Helper()
	var dirs []string
	for _, k := range keys(t, e.bucket) {
		if rest, ok := strings.CutPrefix(k, "_shared/skills/"); ok && strings.HasSuffix(rest, "/SKILL.md") {
			dirs = append(dirs, strings.TrimSuffix(rest, "/SKILL.md"))
		}
	}
	return dirs
}

func testNoBypass(t *testing.T, e env) {
	ctx := t.Context()
	v1 := folder("pdf", "One.")
	r1, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Name: "pdf", Files: v1})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Name: "pdf", Files: folder("pdf", "Two."), Labels: []string{"production"}})
	if err != nil {
		t.Fatal(err)
	}
	// bob re-publishes v1's files: a proposal, with no label moved.
	_, err = e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "pdf", Files: v1, Labels: []string{"production"}})
	wantKind(t, err, errkind.PermissionDenied)
	res, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "pdf", Files: v1})
	if err != nil || !res.Pending || res.Version.State != versions.Pending || res.Version.ID == r1.Version.ID || res.Version.Content != r1.Version.ID {
		t.Fatalf("bob's re-publish of v1 = %+v, %v", res, err)
	}
	if got := e.listed(t, "carol")["pdf@shared"]; got != r2.Version.ID {
		t.Fatalf("after bob's re-publish the shared library serves %q, want v2", got)
	}
	page, err := e.pub.ListVersions(ctx, admin, library.ListRequest{Library: shared, Name: "pdf"})
	if err != nil || page.Labels["production"] != r2.Version.ID || page.Labels[versions.Latest] != r2.Version.ID {
		t.Fatalf("labels after bob's re-publish: %v, %v", page.Labels, err)
	}
	// A deleted skill stays deleted.
	if _, err := e.pub.Delete(ctx, admin, shared, "pdf", ""); err != nil {
		t.Fatal(err)
	}
	if res, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Category: "x", Name: "pdf", Files: folder("pdf", "Two.")}); err != nil || !res.Pending {
		t.Fatalf("bob's re-publish of v2 = %+v, %v", res, err)
	}
	if dirs := sharedDirs(t, e); len(dirs) != 0 {
		t.Fatalf("a deleted skill came back at %q", dirs)
	}
}

// testOneFolder: a version rolled back to in another category than the
// live copy's replaces it; a re-publish in a new category is remembered.
func testOneFolder(t *testing.T, e env) {
	ctx := t.Context()
	v1 := folder("pdf", "One.")
	r1, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Category: "a", Name: "pdf", Files: v1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Delete(ctx, admin, shared, "pdf", ""); err != nil {
		t.Fatal(err)
	}
	// The same files again, elsewhere.
	if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Category: "b", Name: "pdf", Files: v1}); err != nil {
		t.Fatal(err)
	}
	r2, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Category: "b", Name: "pdf", Files: folder("pdf", "Two.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Rollback(ctx, admin, shared, "pdf", r1.Version.ID, ""); err != nil {
		t.Fatal(err)
	}
	if dirs := sharedDirs(t, e); !slices.Equal(dirs, []string{"b/pdf"}) {
		t.Fatalf("after rollback to v1 (last published at b/) the folders are %q", dirs)
	}
	if _, err := e.pub.Delete(ctx, admin, shared, "pdf", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Category: "c", Name: "pdf", Files: v1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Rollback(ctx, admin, shared, "pdf", r2.Version.ID, ""); err != nil {
		t.Fatal(err)
	}
	if dirs := sharedDirs(t, e); !slices.Equal(dirs, []string{"b/pdf"}) {
		t.Fatalf("after rollback to v2 the folders are %q, want b/pdf alone", dirs)
	}
	if got := e.listed(t, "carol")["b/pdf@shared"]; got != r2.Version.ID {
		t.Fatalf("the shared library serves %q, want v2", got)
	}
}

func testProposalsApart(t *testing.T, e env) {
	ctx := t.Context()
	files := folder("sql", "Query.")
	// bob and mallory share a token subject, not a user.
	bobA := library.Actor{User: "bob", Author: "agent"}
	mallory := library.Actor{User: "mallory", Author: "agent"}
	pb, err := e.pub.Publish(ctx, bobA, library.PublishRequest{Library: shared, Name: "sql", Files: files, Message: "bob's secret note"})
	if err != nil || !pb.Pending {
		t.Fatal(err)
	}
	seen := func(a library.Actor) []library.Version {
		t.Helper()
		page, err := e.pub.ListVersions(ctx, a, library.ListRequest{Library: shared, Name: "sql"})
		if err != nil {
			t.Fatal(err)
		}
		return page.Versions
	}
	if n := len(seen(mallory)); n != 0 {
		t.Fatalf("mallory, sharing bob's token subject, sees %d of bob's drafts", n)
	}
	if _, err := e.pub.Pinned(ctx, mallory, "sql", "", pb.Version.ID); errkind.Of(err) != errkind.NotFound {
		t.Fatalf("mallory pins bob's draft: %v", err)
	}
	if _, err := e.pub.Review(ctx, admin, shared, "sql", pb.Version.ID, false, "bob: no, because"); err != nil {
		t.Fatal(err)
	}
	// The same files from mallory: her own proposal, revealing nothing.
	pm, err := e.pub.Publish(ctx, mallory, library.PublishRequest{Library: shared, Name: "sql", Files: files, Message: "mine"})
	if err != nil || !pm.Pending || pm.Version.ID == pb.Version.ID || pm.Version.Message != "mine" || pm.Version.ReviewComment != "" || pm.Version.Author != "agent" {
		t.Fatalf("mallory's proposal = %+v, %v", pm.Version, err)
	}
	if vs := seen(mallory); len(vs) != 1 || vs[0].ID != pm.Version.ID {
		t.Fatalf("mallory sees %+v", vs)
	}
	if vs := seen(bobA); len(vs) != 1 || vs[0].State != versions.Rejected || vs[0].ReviewComment != "bob: no, because" {
		t.Fatalf("bob's rejected proposal became %+v", vs)
	}
	if n := len(seen(admin)); n != 2 {
		t.Fatalf("admin sees %d proposals, want 2", n)
	}
	// Bulk: reject mallory's, then delete every proposal.
	res, err := e.pub.RejectProposals(ctx, admin, shared, library.ProposalFilter{Name: "sql", Comment: "expired"})
	if err != nil || res.Rejected != 1 {
		t.Fatalf("RejectProposals = %+v, %v", res, err)
	}
	res, err = e.pub.RejectProposals(ctx, admin, shared, library.ProposalFilter{Delete: true})
	if err != nil || res.Deleted != 2 || len(seen(admin)) != 0 {
		t.Fatalf("RejectProposals(delete) = %+v, %v", res, err)
	}
}

func testRecordBound(t *testing.T, e env) {
	ctx := t.Context()
	// Paths of quotes, which JSON writes as two bytes whatever the escaping.
	files := folder("big", "Big.")
	for i := len(files); i < skillmd.MaxSkillFiles; i++ {
		files = append(files, skillmd.File{Path: fmt.Sprintf("f%03d/", i) + strings.Repeat(`"`, 249) + strings.Repeat("/"+strings.Repeat(`"`, 249), 3), Data: []byte("x")})
	}
	versions := func() []string {
		return slices.DeleteFunc(keys(t, e.bucket), func(k string) bool { return !strings.HasPrefix(k, "_shared/versions/") })
	}
	before := versions()
	_, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "big", Files: files})
	wantKind(t, err, errkind.InvalidArgument)
	if !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("the refusal names no limit: %v", err)
	}
	if after := versions(); !slices.Equal(before, after) {
		t.Fatalf("a refused record wrote %q", after)
	}

	// An unreadable record (not JSON, and too large) is skipped by the
	// listing, by a bulk reject and by garbage collection, which then
	// deletes no blob.
	ok, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Name: "big", Files: folder("big", "Small.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "big", Files: folder("big", "Pending.")}); err != nil {
		t.Fatal(err)
	}
	bad := "_shared/versions/skills/big/v/" + strings.Repeat("a", 64) + ".json"
	huge := "_shared/versions/skills/big/p/" + strings.Repeat("b", 64) + ".json"
	if _, err := e.bucket.Put(ctx, bad, strings.NewReader("{not json"), 9, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte(" "), 1<<20+1)
	if _, err := e.bucket.Put(ctx, huge, bytes.NewReader(big), int64(len(big)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	page, err := e.pub.ListVersions(ctx, admin, library.ListRequest{Library: shared, Name: "big"})
	if err != nil || len(page.Versions) != 2 {
		t.Fatalf("versions beside unreadable records = %+v, %v", page.Versions, err)
	}
	rej, err := e.pub.RejectProposals(ctx, admin, shared, library.ProposalFilter{Name: "big"})
	if err != nil || rej.Rejected != 1 || !slices.Equal(rej.Unreadable, []string{huge}) {
		t.Fatalf("RejectProposals = %+v, %v", rej, err)
	}
	gc, err := e.pub.CollectGarbage(ctx, shared, false)
	if err != nil || gc.BlobsDeleted != 0 || !slices.Equal(gc.Unreadable, []string{huge, bad}) && !slices.Equal(gc.Unreadable, []string{bad, huge}) {
		t.Fatalf("GC beside unreadable records = %+v, %v", gc, err)
	}
	// An admin deletes them (not the labelled version).
	_, err = e.pub.DeleteVersions(ctx, shared, "big", []string{ok.Version.ID})
	wantKind(t, err, errkind.FailedPrecondition)
	n, err := e.pub.DeleteVersions(ctx, shared, "big", []string{"sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)})
	if err != nil || n != 2 {
		t.Fatalf("DeleteVersions = %d, %v", n, err)
	}
	if left := versions(); slices.Contains(left, bad) || slices.Contains(left, huge) {
		t.Fatalf("after the deletes: %q", left)
	}
}

func testCaps(t *testing.T, e env) {
	ctx := t.Context()
	propose := func(a library.Actor, i int) error {
		_, err := e.pub.Publish(ctx, a, library.PublishRequest{Library: shared, Name: "c", Files: folder("c", fmt.Sprint("p", i))})
		return err
	}
	carol := library.Actor{User: "carol", Author: "carol"}
	for i := range 2 {
		if err := propose(bob, i); err != nil {
			t.Fatal(err)
		}
	}
	wantKind(t, propose(bob, 2), errkind.FailedPrecondition) // per author
	if err := propose(bob, 1); err != nil {                  // the same again is no new one
		t.Fatal(err)
	}
	if err := propose(carol, 3); err != nil {
		t.Fatal(err)
	}
	wantKind(t, propose(carol, 4), errkind.FailedPrecondition) // per skill
	// The proposals fill no version slot: the admin publishes up to the cap.
	for i := range 3 {
		if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: shared, Name: "c", Files: folder("c", fmt.Sprint("a", i))}); err != nil {
			t.Fatalf("admin's publish %d beside proposals at their cap: %v", i, err)
		}
	}
}
