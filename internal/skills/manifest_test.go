package skills_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// wantManifest is the manifest of the fixture's folder at keyPrefix (say
// "alice/skills/docs/pdf/"), served at mountDir ("/skills/docs/pdf"): every
// file under it, each with the sha256 of the bytes uploaded.
func wantManifest(files map[string]string, keyPrefix, mountDir string) skillview.Manifest {
	m := skillview.Manifest{Files: []skillview.ManifestFile{}}
	var digests []skillmd.FileDigest
	var keys []string
	for k := range files {
		if strings.HasPrefix(k, keyPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		sum := sha256.Sum256([]byte(files[k]))
		m.Files = append(m.Files, skillview.ManifestFile{
			Path: mountDir + "/" + strings.TrimPrefix(k, keyPrefix), Size: int32(len(files[k])), SHA256: hex.EncodeToString(sum[:]),
			Mode: filemode.Of(0, []byte(files[k])), // uploaded without a mode: by the shebang rule
		})
		m.FileCount++
		m.TotalBytes += int64(len(files[k]))
		digests = append(digests, skillmd.FileDigest{Rel: strings.TrimPrefix(k, keyPrefix), Size: int64(len(files[k])), SHA256: hex.EncodeToString(sum[:]), Mode: filemode.Of(0, []byte(files[k]))})
	}
	// The id a published version of the same files has.
	m.Digest = skillmd.ManifestDigest(digests)
	return m
}

// testManifest: GetSkill and the listing describe each skill's files by
// the sha256 of the bytes uploaded, SKILL.md included, in path order.
func testManifest(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	listed := listedBy(t, lib, skillview.ListOptions{}, func(s skillview.Skill) *skillview.Manifest { return s.Manifest })
	for _, tc := range []struct {
		ref, keyPrefix, dir string
	}{
		{"pdf", "alice/skills/docs/pdf/", "/skills/docs/pdf"},
		{"csv", "_shared/skills/data/csv/", "/skills/data/csv"},
		// A SKILL.md inside a flat skill is one of its files.
		{"git-helper", "alice/skills/git-helper/", "/skills/git-helper"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			d, err := lib.Catalog.Get(t.Context(), aliceID, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			want := wantManifest(fixture, tc.keyPrefix, tc.dir)
			if d.Manifest == nil || !reflect.DeepEqual(*d.Manifest, want) {
				t.Errorf("GetSkill manifest = %+v\nwant %+v", d.Manifest, want)
			}
			if m := listed[d.Dir]; m == nil || !reflect.DeepEqual(*m, want) {
				t.Errorf("listed manifest = %+v\nwant %+v", m, want)
			}
		})
	}
}

// LibraryDigest is the library digest of id's listing.
func libraryDigest(t *testing.T, lib *skills.Library, id mounts.Caller) string {
	t.Helper()
	p, err := lib.Catalog.Page(t.Context(), id, skillview.ListOptions{}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.LibraryDigest, "sha256:") || len(p.LibraryDigest) != len("sha256:")+64 {
		t.Fatalf("library digest %q is not sha256:<hex>", p.LibraryDigest)
	}
	return p.LibraryDigest
}

// testLibraryDigest: one library digest names the caller's library as
// served: the same on every page, in every call that lists it (whatever
// its filters) and on another replica; another when a file's content
// changes or the user disables a skill, and the first again when both are
// undone; the same for two users whose libraries add nothing to the
// shared one.
func testLibraryDigest(t *testing.T, newBucket newBucketFunc) {
	lib, b := fixtureLibrary(t, newBucket, nil)
	ctx := t.Context()
	first := libraryDigest(t, lib, aliceID)

	t.Run("pages and calls", func(t *testing.T) {
		token, pages := "", 0
		for {
			p, err := lib.Catalog.Page(ctx, aliceID, skillview.ListOptions{IncludeInvalid: true}, 2, token)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if p.LibraryDigest != first {
				t.Errorf("page %d: digest %s, want %s", pages, p.LibraryDigest, first)
			}
			if p = p.Truncate(1); p.LibraryDigest != first {
				t.Errorf("page %d ended early: digest %s", pages, p.LibraryDigest)
			}
			if token = p.NextPageToken; token == "" {
				break
			}
		}
		if pages < 3 {
			t.Fatalf("listed %d pages, want several", pages)
		}
		block, err := lib.Catalog.Prompt(ctx, aliceID, skillview.ListOptions{Category: "docs", FilterCategory: true}, skillmd.FormatOptions{})
		if err != nil || block.LibraryDigest != first {
			t.Errorf("Prompt digest %s, %v; want %s", block.LibraryDigest, err, first)
		}
		res, err := lib.Catalog.Search(ctx, aliceID, skillview.SearchOptions{Query: "pdf"})
		if err != nil || res.LibraryDigest != first {
			t.Errorf("Search digest %s, %v; want %s", res.LibraryDigest, err, first)
		}
		if other := libraryDigest(t, skillstest.Library(t, b, nil), aliceID); other != first {
			t.Errorf("another replica: digest %s, want %s", other, first)
		}
	})

	t.Run("file content", func(t *testing.T) {
		const key = "alice/skills/docs/pdf/scripts/run.sh"
		objstoretest.Put(t, b, key, "#!/bin/sh\necho changed\n")
		if got := libraryDigest(t, lib, aliceID); got == first {
			t.Error("the digest did not change with a file's content")
		}
		// Restored as the fixture put it: with its mode.
		if _, err := b.Put(ctx, key, strings.NewReader(fixture[key]), int64(len(fixture[key])), objstore.PutOptions{Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
		if got := libraryDigest(t, lib, aliceID); got != first {
			t.Errorf("the content restored: digest %s, want %s", got, first)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		if _, err := lib.Catalog.SetEnabled(ctx, aliceID, "lint", false); err != nil {
			t.Fatal(err)
		}
		disabled := libraryDigest(t, lib, aliceID)
		if disabled == first {
			t.Error("the digest did not change when a skill was disabled")
		}
		p, err := lib.Catalog.Page(ctx, aliceID, skillview.ListOptions{IncludeDisabled: true}, 0, "")
		if err != nil || p.LibraryDigest != disabled {
			t.Errorf("listing disabled skills too: digest %s, %v; want %s", p.LibraryDigest, err, disabled)
		}
		if _, err := lib.Catalog.SetEnabled(ctx, aliceID, "lint", true); err != nil {
			t.Fatal(err)
		}
		if got := libraryDigest(t, lib, aliceID); got != first {
			t.Errorf("re-enabled: digest %s, want %s", got, first)
		}
	})

	t.Run("users sharing the shared library", func(t *testing.T) {
		carol := mounts.Default().MustIdentify(mounts.Identity{User: "carol", Thread: "t9"})
		bob, carolDigest := libraryDigest(t, lib, bobID), libraryDigest(t, lib, carol)
		if bob != carolDigest {
			t.Errorf("bob (a file in no skill) and carol (no library) differ: %s, %s", bob, carolDigest)
		}
		if bob == first {
			t.Error("bob's digest is alice's")
		}
	})
}

// TestManifestOverLimits: a skill over the MCP extension's limits has a
// manifest without files (none was hashed) but with its counts; it is
// still listed and loaded.
func TestManifestOverLimits(t *testing.T) {
	f := skillstest.New()
	l := f.User("alice").Skill("many", "", "A skill of many files.", "# Many\n")
	var total int64 = int64(len(f.Files()["alice/skills/many/SKILL.md"]))
	for i := range skillmd.MaxSkillFiles {
		l.File(fmt.Sprintf("many/data/%03d.txt", i), "x")
		total++
	}
	lib := skillstest.Library(t, f.Bucket(t), nil)
	d, err := lib.Catalog.Get(t.Context(), aliceID, "many")
	if err != nil {
		t.Fatal(err)
	}
	want := skillview.Manifest{FileCount: skillmd.MaxSkillFiles + 1, TotalBytes: total, OverLimits: true}
	if d.Manifest == nil || !reflect.DeepEqual(*d.Manifest, want) {
		t.Errorf("manifest = %+v, want %+v", d.Manifest, want)
	}
}

// TestSkillManifestDigest: a skill's manifest digest is the digest of its
// files relative to its folder, so the same files have the same digest in
// the user's library and the shared one, under any category; a skill over
// the limits has none.
func TestSkillManifestDigest(t *testing.T) {
	b := skillstest.New()
	b.User("alice").Skill("docs/pdf", "pdf", "Read PDFs.", "Use pdftotext.\n").File("docs/pdf/scripts/run.py", "print(1)\n")
	b.User("bob").Skill("misc/pdf", "pdf", "Read PDFs.", "Use pdftotext.\n").File("misc/pdf/scripts/run.py", "print(1)\n")
	files := b.Files()
	lib := skillstest.Library(t, objstoretest.NewBucket(t, files), nil)
	digestOf := func(user string) string {
		list, err := lib.Catalog.Skills(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t1"}), skillview.ListOptions{})
		if err != nil || len(list) != 1 {
			t.Fatalf("%s's skills: %v, %v", user, list, err)
		}
		return list[0].ManifestDigest()
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	md := files["alice/skills/docs/pdf/SKILL.md"]
	want := skillmd.ManifestDigest([]skillmd.FileDigest{
		{Rel: "SKILL.md", Size: int64(len(md)), SHA256: sum(md)},
		{Rel: "scripts/run.py", Size: 9, SHA256: sum("print(1)\n")},
	})
	if got := digestOf("alice"); got != want {
		t.Errorf("alice's pdf: manifest digest %q, want %q", got, want)
	}
	// The same files in another library and category.
	if got := digestOf("bob"); got != want {
		t.Errorf("bob's pdf (the same files in misc/): manifest digest %q, want %q", got, want)
	}
	if got := (skillview.Skill{Path: "/skills/big", Manifest: &skillview.Manifest{OverLimits: true}}).ManifestDigest(); got != "" {
		t.Errorf("over the limits: %q, want none", got)
	}
	if got := (skillview.Skill{}).ManifestDigest(); got != "" {
		t.Errorf("no manifest: %q, want none", got)
	}
}
