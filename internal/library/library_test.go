package library_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/versions"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

var (
	alice = library.Actor{User: "alice", Author: "alice"}
	bob   = library.Actor{User: "bob", Author: "bob"}
	admin = library.Actor{User: "root", Author: "root", Admin: true}
)

func folder(name, desc string, extra ...string) []skillmd.File {
	files := []skillmd.File{{Path: "SKILL.md", Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nDo it.\n")}}
	for i := 0; i+1 < len(extra); i += 2 {
		files = append(files, skillmd.File{Path: extra[i], Data: []byte(extra[i+1])})
	}
	return files
}

type env struct {
	bucket objstore.Bucket
	lib    *skills.Library
	pub    *library.Publisher
}

func newEnv(t *testing.T, b objstore.Bucket, tune func(*library.Config)) env {
	// An index kept for an hour: what a publish shows, it shows by
	// dropping the index, not by the index expiring.
	lib := skillstest.Library(t, b, skillstest.Indexed(time.Hour))
	t.Cleanup(lib.Close)
	cfg := library.DefaultConfig()
	if tune != nil {
		tune(&cfg)
	}
	if err := cfg.Validate(mounts.Default(), skills.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	pub := library.New(b, lib.Catalog, cfg, cache.NewLRU(1<<20))
	t.Cleanup(pub.Close) // before the bucket's: its kept writes tried once more
	return env{bucket: b, lib: lib, pub: pub}
}

func caller(t *testing.T, user string) mounts.Caller {
	t.Helper()
	c, err := mounts.Default().Identify(mounts.Identity{User: user, Thread: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listed is the catalog's view of user's skills: dir → manifest digest.
func (e env) listed(t *testing.T, user string) map[string]string {
	t.Helper()
	list, _, err := e.lib.Catalog.State(t.Context(), caller(t, user))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list {
		out[s.Dir+"@"+s.Layer] = s.Manifest.Digest
	}
	return out
}

func keys(t *testing.T, b objstore.Bucket) []string {
	t.Helper()
	var out []string
	if err := objstore.Walk(t.Context(), b, "", func(o objstore.Object) error { out = append(out, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantKind(t *testing.T, err error, k errkind.Kind) {
	t.Helper()
	if errkind.Of(err) != k {
		t.Fatalf("err = %v, want %v", err, k)
	}
}

func TestLibrary(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		t.Run("PublishVersionsRollback", func(t *testing.T) { testPublish(t, newEnv(t, newBucket(t), nil)) })
		t.Run("Invalid", func(t *testing.T) { testInvalid(t, newEnv(t, newBucket(t), nil)) })
		t.Run("Labels", func(t *testing.T) { testLabels(t, newEnv(t, newBucket(t), nil)) })
		t.Run("Roles", func(t *testing.T) { testRoles(t, newEnv(t, newBucket(t), nil)) })
		t.Run("ConcurrentPublishes", func(t *testing.T) { testConcurrent(t, newEnv(t, newBucket(t), nil)) })
		t.Run("MaxVersions", func(t *testing.T) {
			e := newEnv(t, newBucket(t), func(c *library.Config) { c.MaxVersions = 2 })
			for i := range 2 {
				if _, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "m", Files: folder("m", fmt.Sprint(i))}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "m", Files: folder("m", "2")})
			wantKind(t, err, errkind.FailedPrecondition)
			// The same files as a kept version are no new version.
			if _, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "m", Files: folder("m", "0")}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("Review", func(t *testing.T) {
			testReview(t, newEnv(t, newBucket(t), func(c *library.Config) { c.Review = true }))
		})
		t.Run("Teams", func(t *testing.T) { testTeams(t, newEnv(t, newBucket(t), nil)) })
		t.Run("TeamReview", func(t *testing.T) {
			testTeamReview(t, newEnv(t, newBucket(t), func(c *library.Config) { c.Review = true }))
		})
	})
}

func testPublish(t *testing.T, e env) {
	ctx := t.Context()
	v1files := folder("pdf", "Read PDFs.", "scripts/run.py", "print(1)", "old.md", "gone soon")
	r1, err := e.pub.Publish(ctx, alice, library.PublishRequest{Category: "docs", Name: "pdf", Files: v1files, Message: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.listed(t, "alice")["docs/pdf@user"]; got != r1.Version.ID || r1.Version.ID == "" {
		t.Fatalf("catalog lists digest %q, version id %q", got, r1.Version.ID)
	}
	if !slices.Equal(r1.Version.Labels, []string{"latest"}) || r1.Version.Author != "alice" || r1.Version.State != versions.Published {
		t.Fatalf("version = %+v", r1.Version)
	}
	// Same files again: the same version, latest unchanged.
	again, err := e.pub.Publish(ctx, alice, library.PublishRequest{Category: "docs", Name: "pdf", Files: v1files})
	if err != nil || again.Version.ID != r1.Version.ID || !again.Version.Created.Equal(r1.Version.Created) {
		t.Fatalf("republish = %+v, %v", again.Version, err)
	}

	v2files := folder("pdf", "Read PDFs, v2.", "scripts/run.py", "print(2)")
	r2, err := e.pub.Publish(ctx, alice, library.PublishRequest{Category: "docs", Name: "pdf", Files: v2files, IfLatest: r1.Version.ID[:19]})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r2.Removed, []string{"old.md"}) {
		t.Fatalf("removed = %q", r2.Removed)
	}
	if _, err := e.bucket.Stat(ctx, "alice/skills/docs/pdf/old.md"); !objstore.IsNotFound(err) {
		t.Fatalf("dropped file still live: %v", err)
	}
	if got := e.listed(t, "alice")["docs/pdf@user"]; got != r2.Version.ID {
		t.Fatalf("catalog lists %q after v2 %q", got, r2.Version.ID)
	}
	// if_latest guards: v1 is no longer latest; "none" means no skill.
	_, err = e.pub.Publish(ctx, alice, library.PublishRequest{Category: "docs", Name: "pdf", Files: v1files, IfLatest: r1.Version.ID})
	wantKind(t, err, errkind.FailedPrecondition)
	_, err = e.pub.Publish(ctx, alice, library.PublishRequest{Category: "docs", Name: "pdf", Files: v1files, IfLatest: "none"})
	wantKind(t, err, errkind.FailedPrecondition)

	page, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Versions) != 2 || page.Versions[0].ID != r2.Version.ID || page.Versions[1].ID != r1.Version.ID || page.Labels["latest"] != r2.Version.ID {
		t.Fatalf("versions = %+v labels %v", page.Versions, page.Labels)
	}
	// Paging: one a page, the token continues.
	p1, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "pdf", PageSize: 1})
	if err != nil || len(p1.Versions) != 1 || p1.Next == "" {
		t.Fatalf("page 1 = %+v, %v", p1, err)
	}
	p2, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "pdf", PageSize: 1, PageToken: p1.Next})
	if err != nil || len(p2.Versions) != 1 || p2.Next != "" || p2.Versions[0].ID != r1.Version.ID {
		t.Fatalf("page 2 = %+v, %v", p2, err)
	}

	// The old version is read whole from its blobs, by a 12-digit prefix.
	v, raw, err := e.pub.GetVersion(ctx, alice, layout.LibraryRef{}, "pdf", r1.Version.ID[7:19])
	if err != nil || v.ID != r1.Version.ID || string(raw) != string(v1files[0].Data) {
		t.Fatalf("GetVersion = %+v %q, %v", v.ID, raw, err)
	}
	old, err := e.pub.ReadFile(ctx, v, "old.md")
	if err != nil || string(old) != "gone soon" {
		t.Fatalf("old.md of v1 = %q, %v", old, err)
	}
	_, _, err = e.pub.GetVersion(ctx, alice, layout.LibraryRef{}, "pdf", "sha256:abc")
	wantKind(t, err, errkind.InvalidArgument)

	// Roll back to v1: the live copy is v1's files again.
	rb, err := e.pub.Rollback(ctx, alice, layout.LibraryRef{}, "pdf", r1.Version.ID, "")
	if err != nil || rb.Version.ID != r1.Version.ID {
		t.Fatalf("rollback = %+v, %v", rb.Version, err)
	}
	if got := e.listed(t, "alice")["docs/pdf@user"]; got != r1.Version.ID {
		t.Fatalf("after rollback the catalog lists %q, want v1 %q", got, r1.Version.ID)
	}

	// A second skill may not take the name in another category.
	_, err = e.pub.Publish(ctx, alice, library.PublishRequest{Category: "other", Name: "pdf", Files: v2files})
	var pe *library.ProblemsError
	if !errors.As(err, &pe) || pe.Problems[0].Rule != library.RuleNameUnique {
		t.Fatalf("collision: %v", err)
	}

	// Delete removes every live file, keeps the versions.
	n, err := e.pub.Delete(ctx, alice, layout.LibraryRef{}, "pdf", "")
	if err != nil || n != 3 {
		t.Fatalf("delete = %d, %v", n, err)
	}
	if _, ok := e.listed(t, "alice")["docs/pdf@user"]; ok {
		t.Fatal("deleted skill still listed")
	}
	for _, k := range keys(t, e.bucket) {
		if len(k) > len("alice/skills/") && k[:len("alice/skills/")] == "alice/skills/" {
			t.Fatalf("live file %s left after delete", k)
		}
	}
	if _, err := e.pub.Rollback(ctx, alice, layout.LibraryRef{}, "pdf", r2.Version.ID, "none"); err != nil {
		t.Fatal(err)
	}
	if got := e.listed(t, "alice")["docs/pdf@user"]; got != r2.Version.ID {
		t.Fatalf("rolled back after delete: %q", got)
	}
}

func testInvalid(t *testing.T, e env) {
	ctx := t.Context()
	e.listed(t, "alice") // the catalog's index of the library is persisted
	before := keys(t, e.bucket)
	files := []skillmd.File{
		{Path: "SKILL.md", Data: []byte("---\nname: other\n---\n")},
		{Path: "../escape", Data: []byte("x")},
	}
	_, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: files})
	var pe *library.ProblemsError
	if !errors.As(err, &pe) || errkind.Of(err) != errkind.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, p := range pe.Problems {
		got = append(got, p.Rule)
	}
	slices.Sort(got)
	want := []string{skillmd.RuleDescriptionRequired, skillmd.RuleNameMatchesFolder, skillmd.RulePathCanonical}
	if !slices.Equal(got, want) {
		t.Fatalf("rules = %q, want %q", got, want)
	}
	if after := keys(t, e.bucket); !slices.Equal(before, after) {
		t.Fatalf("an invalid publish wrote %q", after)
	}
	// validate_only answers the same problems without an error.
	res, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: files, ValidateOnly: true})
	if err != nil || res.Valid || len(res.Problems) != 3 {
		t.Fatalf("validate_only = %+v, %v", res, err)
	}
	res, err = e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "d"), ValidateOnly: true})
	if err != nil || !res.Valid || res.Version.ID == "" {
		t.Fatalf("validate_only of a valid folder = %+v, %v", res, err)
	}
	if after := keys(t, e.bucket); !slices.Equal(before, after) {
		t.Fatalf("validate_only wrote %q", after)
	}
}

func testLabels(t *testing.T, e env) {
	ctx := t.Context()
	r1, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "csv", Files: folder("csv", "one")})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "csv", Files: folder("csv", "two"), Labels: []string{"beta"}})
	if err != nil {
		t.Fatal(err)
	}
	// Concurrent label moves: none is lost.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.pub.SetLabel(ctx, alice, layout.LibraryRef{}, "csv", fmt.Sprintf("l%d", i), r1.Version.ID)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	page, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Labels) != 10 || page.Labels["beta"] != r2.Version.ID || page.Labels["latest"] != r2.Version.ID || page.Labels["l7"] != r1.Version.ID {
		t.Fatalf("labels = %v", page.Labels)
	}
	v, err := e.pub.Pinned(ctx, alice, "csv", skillview.LayerUser, "l3")
	if err != nil || v.ID != r1.Version.ID {
		t.Fatalf("pinned by label = %v, %v", v.ID, err)
	}
	_, err = e.pub.SetLabel(ctx, alice, layout.LibraryRef{}, "csv", "latest", r1.Version.ID)
	wantKind(t, err, errkind.InvalidArgument)
	if _, err := e.pub.SetLabel(ctx, alice, layout.LibraryRef{}, "csv", "beta", ""); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.Pinned(ctx, alice, "csv", skillview.LayerUser, "beta")
	wantKind(t, err, errkind.NotFound)
}

func testRoles(t *testing.T, e env) {
	ctx := t.Context()
	_, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: layout.LibraryRef{User: "alice"}, Name: "x", Files: folder("x", "d")})
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.Publish(ctx, bob, library.PublishRequest{Library: layout.LibraryRef{Shared: true}, Name: "x", Files: folder("x", "d")})
	wantKind(t, err, errkind.PermissionDenied)
	// An admin publishes to anyone's library and the shared one.
	if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: layout.LibraryRef{User: "alice"}, Name: "x", Files: folder("x", "d")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: layout.LibraryRef{Shared: true}, Name: "y", Files: folder("y", "d")}); err != nil {
		t.Fatal(err)
	}
	if got := e.listed(t, "bob"); got["y@shared"] == "" || got["x@user"] != "" {
		t.Fatalf("bob sees %v", got)
	}
	_, err = e.pub.Delete(ctx, bob, layout.LibraryRef{Shared: true}, "y", "")
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.Review(ctx, bob, layout.LibraryRef{Shared: true}, "y", "latest", true, "")
	wantKind(t, err, errkind.PermissionDenied)
	// Everyone reads the shared library's versions.
	if page, err := e.pub.ListVersions(ctx, bob, library.ListRequest{Library: layout.LibraryRef{Shared: true}, Name: "y"}); err != nil || len(page.Versions) != 1 {
		t.Fatalf("bob lists shared versions: %+v, %v", page, err)
	}
}

// Members of team legal.
var (
	carol = library.Actor{User: "carol", Author: "carol", Teams: []string{"eng", "legal"}}
	dave  = library.Actor{User: "dave", Author: "dave", Teams: []string{"legal"}}
)

// teamListed is the catalog's view of a's skills with a's teams.
func (e env) teamListed(t *testing.T, a library.Actor) map[string]string {
	t.Helper()
	c, err := mounts.Default().Identify(mounts.Identity{User: a.User, Thread: "t1", Teams: strings.Join(a.Teams, ",")})
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := e.lib.Catalog.State(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list {
		out[s.Dir+"@"+s.Layer] = s.Manifest.Digest
	}
	return out
}

// testTeams: a team library keeps versions under its own root; admins
// change it, members read its versions, others see none of it.
func testTeams(t *testing.T, e env) {
	ctx := t.Context()
	legal := layout.LibraryRef{Team: "legal"}
	r1, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: legal, Category: "law", Name: "nda", Files: folder("nda", "Review NDAs.", "clauses.md", "v1")})
	if err != nil || r1.Pending || r1.Version.Library != legal {
		t.Fatalf("admin's team publish = %+v, %v", r1, err)
	}
	var teamKeys int
	for _, k := range keys(t, e.bucket) {
		switch {
		case strings.HasPrefix(k, "_teams/legal/versions/"):
			teamKeys++
		case strings.Contains(k, "/versions/"):
			t.Errorf("a team version wrote %s, outside the team's root", k)
		}
	}
	if teamKeys == 0 {
		t.Fatal("nothing under _teams/legal/versions/")
	}
	if got := e.teamListed(t, carol)["law/nda@team:legal"]; got != r1.Version.ID {
		t.Fatalf("carol lists the team's nda as %q, want %s", got, r1.Version.ID)
	}
	r2, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: legal, Category: "law", Name: "nda", Files: folder("nda", "Review NDAs.", "clauses.md", "v2")})
	if err != nil {
		t.Fatal(err)
	}

	// A member reads the versions and pins an old one, by the layer
	// serving the name and by the caller's teams when none does.
	page, err := e.pub.ListVersions(ctx, carol, library.ListRequest{Library: legal, Name: "nda"})
	if err != nil || len(page.Versions) != 2 {
		t.Fatalf("carol lists %+v, %v", page, err)
	}
	for _, layer := range []string{"team:legal", ""} {
		v, err := e.pub.Pinned(ctx, carol, "nda", layer, r1.Version.ID)
		if err != nil || v.Library != legal || v.ID != r1.Version.ID {
			t.Fatalf("carol's pinned read (layer %q) = %+v, %v", layer, v, err)
		}
		b, err := e.pub.ReadFile(ctx, v, "clauses.md")
		if err != nil || string(b) != "v1" {
			t.Fatalf("carol reads the pinned clauses: %q, %v", b, err)
		}
	}
	// Another team's member and a user of none see none of it.
	eve := library.Actor{User: "eve", Author: "eve", Teams: []string{"eng"}}
	for _, a := range []library.Actor{bob, eve} {
		_, err = e.pub.ListVersions(ctx, a, library.ListRequest{Library: legal, Name: "nda"})
		wantKind(t, err, errkind.PermissionDenied)
		_, err = e.pub.Pinned(ctx, a, "nda", "", r1.Version.ID)
		wantKind(t, err, errkind.NotFound)
		_, err = e.pub.Pinned(ctx, a, "nda", "team:legal", r1.Version.ID)
		wantKind(t, err, errkind.PermissionDenied)
		_, err = e.pub.Publish(ctx, a, library.PublishRequest{Library: legal, Name: "x", Files: folder("x", "d")})
		wantKind(t, err, errkind.PermissionDenied)
	}
	// Members change nothing without review: publish, delete, label,
	// rollback and review are refused.
	_, err = e.pub.Publish(ctx, carol, library.PublishRequest{Library: legal, Name: "x", Files: folder("x", "d")})
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.Delete(ctx, carol, legal, "nda", "")
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.SetLabel(ctx, carol, legal, "nda", "stable", r1.Version.ID)
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.Rollback(ctx, carol, legal, "nda", r1.Version.ID, "")
	wantKind(t, err, errkind.PermissionDenied)
	// The admin rolls back: the member lists the old bytes again.
	if _, err := e.pub.Rollback(ctx, admin, legal, "nda", r1.Version.ID, r2.Version.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.teamListed(t, dave)["law/nda@team:legal"]; got != r1.Version.ID {
		t.Fatalf("after the rollback dave lists %q, want %s", got, r1.Version.ID)
	}
	if _, err := e.pub.Delete(ctx, admin, legal, "nda", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.teamListed(t, dave)["law/nda@team:legal"]; ok {
		t.Fatal("a deleted team skill is listed")
	}
}

// testTeamReview: with review, a member's publish to its team is pending
// until an admin approves it; the shared library's rule, per team.
func testTeamReview(t *testing.T, e env) {
	ctx := t.Context()
	legal := layout.LibraryRef{Team: "legal"}
	res, err := e.pub.Publish(ctx, carol, library.PublishRequest{Library: legal, Name: "nda", Files: folder("nda", "NDAs.")})
	if err != nil || !res.Pending || res.Version.State != versions.Pending {
		t.Fatalf("member's publish = %+v, %v", res, err)
	}
	if _, ok := e.teamListed(t, dave)["nda@team:legal"]; ok {
		t.Fatal("a pending team version is live")
	}
	_, err = e.pub.Publish(ctx, bob, library.PublishRequest{Library: legal, Name: "nda", Files: folder("nda", "Bob's.")})
	wantKind(t, err, errkind.PermissionDenied)
	_, err = e.pub.Review(ctx, dave, legal, "nda", res.Version.ID, true, "")
	wantKind(t, err, errkind.PermissionDenied)
	if _, err := e.pub.Review(ctx, admin, legal, "nda", res.Version.ID, true, "ok"); err != nil {
		t.Fatal(err)
	}
	if got := e.teamListed(t, dave)["nda@team:legal"]; got != res.Version.Content {
		t.Fatalf("after approval dave lists %q, want %s", got, res.Version.Content)
	}
	// Other members still change nothing but by review.
	_, err = e.pub.Delete(ctx, carol, legal, "nda", "")
	wantKind(t, err, errkind.PermissionDenied)
}

func testReview(t *testing.T, e env) {
	ctx := t.Context()
	shared := layout.LibraryRef{Shared: true}
	res, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "sql", Files: folder("sql", "Query.")})
	if err != nil || !res.Pending || res.Version.State != versions.Pending {
		t.Fatalf("publish = %+v, %v", res, err)
	}
	if _, ok := e.listed(t, "carol")["sql@shared"]; ok {
		t.Fatal("a pending version is live")
	}
	count := func(a library.Actor) int {
		page, err := e.pub.ListVersions(ctx, a, library.ListRequest{Library: shared, Name: "sql"})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Versions)
	}
	carol := library.Actor{User: "carol", Author: "carol"}
	if count(bob) != 1 || count(admin) != 1 || count(carol) != 0 {
		t.Fatalf("pending seen by bob %d, admin %d, carol %d", count(bob), count(admin), count(carol))
	}
	_, err = e.pub.Pinned(ctx, carol, "sql", "", res.Version.ID)
	wantKind(t, err, errkind.NotFound)
	if v, err := e.pub.Pinned(ctx, bob, "sql", "", res.Version.ID); err != nil || v.State != versions.Pending {
		t.Fatalf("the author pins its pending version: %+v, %v", v, err)
	}
	ok, err := e.pub.Review(ctx, admin, shared, "sql", res.Version.ID, true, "looks good")
	if err != nil || ok.Version.State != versions.Published || ok.Version.Reviewer != "root" || ok.Version.ReviewComment != "looks good" {
		t.Fatalf("approve = %+v, %v", ok.Version, err)
	}
	// The approved proposal is the version of its files.
	if got := e.listed(t, "carol")["sql@shared"]; got != res.Version.Content || ok.Version.ID != res.Version.Content {
		t.Fatalf("approved version listed as %q, approved as %s, proposed %s", got, ok.Version.ID, res.Version.Content)
	}
	// A rejected version is kept, never served.
	bad, err := e.pub.Publish(ctx, bob, library.PublishRequest{Library: shared, Name: "sql", Files: folder("sql", "Drop tables.")})
	if err != nil || !bad.Pending {
		t.Fatal(err)
	}
	rej, err := e.pub.Review(ctx, admin, shared, "sql", bad.Version.ID, false, "no")
	if err != nil || rej.Version.State != versions.Rejected {
		t.Fatalf("reject = %+v, %v", rej.Version, err)
	}
	_, err = e.pub.Pinned(ctx, admin, "sql", "", bad.Version.ID)
	wantKind(t, err, errkind.FailedPrecondition)
	_, err = e.pub.Review(ctx, admin, shared, "sql", bad.Version.ID, true, "")
	wantKind(t, err, errkind.FailedPrecondition)
	if got := e.listed(t, "carol")["sql@shared"]; got != res.Version.Content {
		t.Fatalf("after a rejection the catalog lists %q", got)
	}
}

// testConcurrent: publishes of one skill racing each other never mix their
// live writes: the live copy ends as exactly one version's files, the one
// latest names.
func testConcurrent(t *testing.T, e env) {
	ctx := t.Context()
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			extra := []string{}
			for j := 0; j <= i; j++ { // version i has files f0..fi, each saying i
				extra = append(extra, fmt.Sprintf("f%d.md", j), fmt.Sprint(i))
			}
			_, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "race", Files: folder("race", fmt.Sprintf("v%d", i), extra...)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	page, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "race"})
	if err != nil || len(page.Versions) != n {
		t.Fatalf("versions = %d, %v", len(page.Versions), err)
	}
	latest, err := e.pub.Pinned(ctx, alice, "race", skillview.LayerUser, "latest")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, k := range keys(t, e.bucket) {
		if rel, ok := strings.CutPrefix(k, "alice/skills/race/"); ok {
			live = append(live, rel)
			got := blobs.Of([]byte(objstoretest.Get(t, e.bucket, k)))
			for _, f := range latest.Files {
				if f.Rel == rel && string(got) != f.SHA256 {
					t.Fatalf("live %s is not latest's", rel)
				}
			}
		}
	}
	var want []string
	for _, f := range latest.Files {
		want = append(want, f.Rel)
	}
	if !slices.Equal(live, want) {
		t.Fatalf("live files %q, latest %s has %q", live, latest.ID, want)
	}
	if got := e.listed(t, "alice")["race@user"]; got != latest.ID {
		t.Fatalf("catalog lists %q, latest is %q", got, latest.ID)
	}
}
