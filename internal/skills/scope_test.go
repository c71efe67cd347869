package skills_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// scoped is alice viewing scope (with harness).
func scoped(t *testing.T, scope, harness string) mounts.Caller {
	t.Helper()
	return mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Scope: scope, Harness: harness})
}

// testScopes: a scope of the shared library narrows alice's listing, the
// prompt block and search; her own scope of the name takes precedence;
// the digest differs per scope; a warm scoped call makes no storage
// request; an unknown scope is NOT_FOUND naming it.
func testScopes(t *testing.T, newBucket newBucketFunc) {
	f := objstoretest.NewFaulty(newBucket(t))
	fixtureSkills.Put(t, f)
	lib := skillstest.Library(t, f, skillstest.Indexed(time.Hour))
	ctx := t.Context()
	if _, err := lib.Catalog.SetScope(ctx, layout.LibraryRef{Shared: true}, settings.ScopeDef{Name: "docs", Include: settings.ScopeRule{Categories: []string{"docs", "data"}}, Exclude: settings.ScopeRule{Names: []string{"x*"}}}); err != nil {
		t.Fatal(err)
	}
	docs := scoped(t, "docs", "")
	list, err := lib.Catalog.Skills(ctx, docs, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, list, "data/csv@shared", "docs/docx@user", "docs/pdf@user")
	b, err := lib.Catalog.Prompt(ctx, docs, skillview.ListOptions{}, skillmd.FormatOptions{})
	if err != nil || strings.Contains(b.Text, "lint") || !strings.Contains(b.Text, "<name>csv</name>") {
		t.Errorf("Prompt under scope docs = %q, %v", b.Text, err)
	}
	res, err := lib.Catalog.Search(ctx, docs, skillview.SearchOptions{Query: "lint code spreadsheets csv"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Name != "csv" {
		t.Errorf("Search under scope docs = %+v, %v; want csv only", res.Hits, err)
	}
	if res.LibraryDigest == libraryDigest(t, lib, aliceID) {
		t.Error("the scoped library digest is the unscoped one")
	}

	// Warm: the scope is compiled with the layer, and alice's settings are
	// held: no storage request.
	before := f.Calls("")
	for range 3 {
		if _, err := lib.Catalog.Skills(ctx, docs, skillview.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := lib.Catalog.Search(ctx, docs, skillview.SearchOptions{Query: "csv"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.Calls("") - before; n != 0 {
		t.Errorf("warm scoped calls made %d storage requests, want 0", n)
	}

	// Alice's own scope of the name comes first.
	if _, err := lib.Catalog.SetScope(ctx, layout.LibraryRef{User: "alice"}, settings.ScopeDef{Name: "docs", Include: settings.ScopeRule{Names: []string{"lint"}}}); err != nil {
		t.Fatal(err)
	}
	list, err = lib.Catalog.Skills(ctx, docs, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, list, "lint@shared")
	// Bob has none of his own: the shared library's applies.
	bobDocs := mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1", Scope: "docs"})
	list, err = lib.Catalog.Skills(ctx, bobDocs, skillview.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, list, "data/csv@shared", "docs/pdf@shared") // docs/xlsx excluded by x*

	_, err = lib.Catalog.Skills(ctx, scoped(t, "nope", ""), skillview.ListOptions{})
	if !errors.Is(err, errkind.NotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown scope: %v, want NotFound naming it", err)
	}
}

// TestScopeDefinitions: definitions over the bounds or malformed are
// refused with INVALID_ARGUMENT (past MaxScopes too) and
// store nothing.
func TestScopeDefinitions(t *testing.T) {
	b := objstoretest.NewBucket(t, nil)
	lib := skillstest.Library(t, b, nil)
	ctx := t.Context()
	many := make([]string, settings.MaxScopeEntries+1)
	for i := range many {
		many[i] = "n"
	}
	for name, d := range map[string]settings.ScopeDef{
		"no name":        {},
		"bad name":       {Name: "a/b"},
		"bad glob":       {Name: "s", Include: settings.ScopeRule{Names: []string{"a["}}},
		"too many":       {Name: "s", Exclude: settings.ScopeRule{Tags: many}},
		"empty entry":    {Name: "s", Include: settings.ScopeRule{Categories: []string{""}}},
		"spaced entry":   {Name: "s", Include: settings.ScopeRule{Categories: []string{"a "}}},
		"long entry":     {Name: "s", Include: settings.ScopeRule{Tags: []string{strings.Repeat("t", 129)}}},
		"unknown compat": {Name: "s", Compatibility: "sometimes"},
	} {
		if _, err := lib.Catalog.SetScope(ctx, layout.LibraryRef{Shared: true}, d); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("%s: SetScope = %v, want InvalidArgument", name, err)
		}
	}
	for _, l := range []layout.LibraryRef{{Shared: true}, {User: "alice"}} {
		for i := range settings.MaxScopes {
			if _, err := lib.Catalog.SetScope(ctx, l, settings.ScopeDef{Name: "s" + strings.Repeat("x", i)}); err != nil {
				t.Fatalf("scope %d of %v: %v", i, l, err)
			}
		}
		if _, err := lib.Catalog.SetScope(ctx, l, settings.ScopeDef{Name: "one-more"}); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("scope %d of %v: %v, want InvalidArgument", settings.MaxScopes+1, l, err)
		}
		// Redefining one is no new scope.
		if _, err := lib.Catalog.SetScope(ctx, l, settings.ScopeDef{Name: "s", Include: settings.ScopeRule{Tags: []string{"t"}}}); err != nil {
			t.Errorf("redefining a scope of a full library: %v", err)
		}
		got, err := lib.Catalog.Scopes(ctx, l)
		if err != nil || len(got) != settings.MaxScopes || got[0].Name != "s" || got[0].Include.Tags[0] != "t" {
			t.Errorf("Scopes(%v) = %d scopes, %v", l, len(got), err)
		}
	}
	// Protecting a name keeps the scopes, and the scopes the names.
	if _, err := lib.Catalog.SetProtected(ctx, layout.LibraryRef{Shared: true}, "pdf", true); err != nil {
		t.Fatal(err)
	}
	if got, _ := lib.Catalog.Scopes(ctx, layout.LibraryRef{Shared: true}); len(got) != settings.MaxScopes {
		t.Errorf("after SetProtected the shared library holds %d scopes, want %d", len(got), settings.MaxScopes)
	}
	if _, err := lib.Catalog.DeleteScope(ctx, layout.LibraryRef{Shared: true}, "s"); err != nil {
		t.Fatal(err)
	}
	if names, _ := lib.Catalog.Protected(ctx, layout.LibraryRef{Shared: true}); len(names) != 1 || names[0] != "pdf" {
		t.Errorf("after DeleteScope the protected names are %q, want [pdf]", names)
	}
}

// BenchmarkScopedView lists and searches the 1,000-skill library warm,
// unscoped and through a scope of the user's (two categories of 20, a glob
// excluded): what a scope adds to a call is a predicate per skill.
func BenchmarkScopedView(b *testing.B) {
	bucket, id := benchBucket(b)
	ctx := b.Context()
	lib := skillstest.Library(b, bucket, skillstest.Indexed(time.Hour))
	if _, err := lib.Catalog.SetScope(ctx, layout.LibraryRef{User: id.User()}, settings.ScopeDef{Name: "two",
		Include: settings.ScopeRule{Categories: []string{"cat-00", "cat-01"}}, Exclude: settings.ScopeRule{Names: []string{"skill-00[0-4]*"}}}); err != nil {
		b.Fatal(err)
	}
	scopedID, err := id.WithScope("two")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   mounts.Caller
		want int
	}{{"unscoped", id, benchSkills}, {"scoped", scopedID, 94}} {
		b.Run("list/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				list, err := lib.Catalog.Skills(ctx, tc.id, skillview.ListOptions{})
				if err != nil || len(list) != tc.want {
					b.Fatalf("listed %d skills, err %v; want %d", len(list), err, tc.want)
				}
			}
		})
		b.Run("search/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := lib.Catalog.Search(ctx, tc.id, skillview.SearchOptions{Query: "summarizes documents"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
