package library_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// pinnedEnv is a publisher whose catalog pins every call's thread, with
// pins kept for retention.
func pinnedEnv(t *testing.T, b objstore.Bucket, retention time.Duration) env {
	pc := skills.DefaultPinConfig()
	pc.Retention = retention
	lib := skillstest.Library(t, b, nil, skills.WithPins(pc, func(context.Context) bool { return true }))
	t.Cleanup(lib.Close)
	pub := library.New(b, lib.Catalog, library.DefaultConfig(), cache.NewLRU(1<<20))
	t.Cleanup(pub.Close)
	return env{bucket: b, lib: lib, pub: pub}
}

func TestCollectGarbage(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		ctx := t.Context()
		b := newBucket(t)
		e := pinnedEnv(t, b, 7*24*time.Hour)      // alice's pins last
		brief := pinnedEnv(t, b, time.Nanosecond) // bob's expire at once
		store := blobs.New(b, 1<<20, library.DefaultConfig().GCGrace)
		cfg := library.DefaultConfig()
		aliceSpace, sharedSpace, bobSpace := cfg.BlobSpace(layout.LibraryRef{User: "alice"}), cfg.BlobSpace(layout.LibraryRef{Shared: true}), cfg.BlobSpace(layout.LibraryRef{User: "bob"})
		has := func(space, data string) bool {
			t.Helper()
			ok, err := store.Has(ctx, space, blobs.Of([]byte(data)))
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		put := func(l layout.LibraryRef, path, data string) {
			t.Helper()
			if _, err := e.lib.Catalog.PutLibraryFile(ctx, l, path, []byte(data), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		del := func(l layout.LibraryRef, path string) {
			t.Helper()
			if err := e.lib.Catalog.DeleteLibraryFile(ctx, l, path); err != nil {
				t.Fatal(err)
			}
		}
		aliceLib, bobLib, shared := layout.LibraryRef{User: "alice"}, layout.LibraryRef{User: "bob"}, layout.LibraryRef{Shared: true}

		// A published version (its blobs), then a live file and a shared
		// one that only alice's pinned snapshot keeps once deleted.
		if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "PDFs", "ref.md", "versioned")}); err != nil {
			t.Fatal(err)
		}
		put(aliceLib, "pdf/notes.txt", "pinned only")
		put(shared, "team/SKILL.md", skillstest.SkillMD("team", "Team", "shared pinned only"))
		if _, _, err := e.lib.Catalog.State(ctx, caller(t, "alice")); err != nil {
			t.Fatal(err)
		}
		del(aliceLib, "pdf/notes.txt")
		del(shared, "team/SKILL.md")
		// Bob pins (a snapshot of his own file), and his pin expires.
		put(bobLib, "mine/SKILL.md", skillstest.SkillMD("mine", "Mine", "bob's"))
		if _, _, err := brief.lib.Catalog.State(ctx, caller(t, "bob")); err != nil {
			t.Fatal(err)
		}
		del(bobLib, "mine/SKILL.md")
		for _, s := range []string{aliceSpace, bobSpace} {
			if _, err := store.Put(ctx, s, []byte("orphan")); err != nil {
				t.Fatal(err)
			}
		}
		bobBlob := skillstest.SkillMD("mine", "Mine", "bob's")
		if !has(aliceSpace, "pinned only") || !has(sharedSpace, skillstest.SkillMD("team", "Team", "shared pinned only")) || !has(bobSpace, bobBlob) {
			t.Fatal("the pins copied no blobs")
		}

		// Now: every unreferenced blob is younger than the grace.
		res, err := e.pub.CollectGarbage(ctx, aliceLib, false)
		if err != nil || res.BlobsDeleted != 0 || !has(aliceSpace, "orphan") {
			t.Fatalf("a collection within the grace = %+v, %v; deleted a young blob", res, err)
		}

		// A day later: a dry run counts, deletes nothing.
		later := func() time.Time { return time.Now().Add(25 * time.Hour) }
		for _, p := range []*library.Publisher{e.pub, brief.pub} {
			library.SetClock(p, later)
		}
		res, err = e.pub.CollectGarbage(ctx, aliceLib, true)
		if err != nil || res.BlobsDeleted != 1 || res.BytesFreed != int64(len("orphan")) || !has(aliceSpace, "orphan") {
			t.Fatalf("dry run = %+v, %v (orphan kept %v); want 1 blob counted, none deleted", res, err, has(aliceSpace, "orphan"))
		}
		res, err = e.pub.CollectGarbage(ctx, aliceLib, false)
		if err != nil || res.BlobsDeleted != 1 || has(aliceSpace, "orphan") {
			t.Fatalf("collection = %+v, %v; want the old orphan deleted", res, err)
		}
		if !has(aliceSpace, "versioned") || !has(aliceSpace, "pinned only") {
			t.Error("a blob a version or a snapshot refers to was deleted")
		}
		// The shared library's blob alice's snapshot refers to stays.
		if res, err := e.pub.CollectGarbage(ctx, shared, false); err != nil || !has(sharedSpace, skillstest.SkillMD("team", "Team", "shared pinned only")) {
			t.Errorf("shared collection = %+v, %v; deleted a blob a user's snapshot refers to", res, err)
		}

		// Bob's snapshot, which no unexpired pin refers to (his pin, expired
		// at once, went with his own pin's sweep), is swept, then its blob.
		count := func(prefix string) int {
			n := 0
			if err := objstore.Walk(ctx, b, prefix, func(objstore.Object) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		res, err = brief.pub.CollectGarbage(ctx, bobLib, true)
		if err != nil || res.SnapshotsDeleted != 1 || res.BlobsDeleted != 1 || count("bob/versions/snapshots/") != 1 || !has(bobSpace, bobBlob) {
			t.Fatalf("dry run for bob = %+v, %v; want the snapshot counted, nothing deleted", res, err)
		}
		res, err = brief.pub.CollectGarbage(ctx, bobLib, false)
		if err != nil || res.SnapshotsDeleted != 1 || count("bob/versions/snapshots/")+count("bob/versions/pins/") != 0 {
			t.Fatalf("collection for bob = %+v, %v; want the expired snapshot swept", res, err)
		}
		if res.BlobsDeleted != 2 || has(bobSpace, bobBlob) || has(bobSpace, "orphan") {
			t.Errorf("collection for bob = %+v; want the swept snapshot's blob and the orphan gone", res)
		}

		if _, err := e.pub.CollectGarbage(ctx, layout.LibraryRef{User: "../x"}, false); err == nil {
			t.Error("a bad library reference was collected")
		}
	})
}

// TestCollectTeamGarbage: a team library's collection deletes its old
// unreferenced blobs and keeps its versions', without touching another
// library's space.
func TestCollectTeamGarbage(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		ctx := t.Context()
		b := newBucket(t)
		e := pinnedEnv(t, b, 7*24*time.Hour)
		store := blobs.New(b, 1<<20, library.DefaultConfig().GCGrace)
		cfg := library.DefaultConfig()
		legal := layout.LibraryRef{Team: "legal"}
		space, eng := cfg.BlobSpace(legal), cfg.BlobSpace(layout.LibraryRef{Team: "eng"})
		has := func(space, data string) bool {
			t.Helper()
			ok, err := store.Has(ctx, space, blobs.Of([]byte(data)))
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if _, err := e.pub.Publish(ctx, admin, library.PublishRequest{Library: legal, Name: "nda", Files: folder("nda", "NDAs", "v.md", "team versioned")}); err != nil {
			t.Fatal(err)
		}
		if !has(space, "team versioned") {
			t.Fatalf("the team's version kept no blob in %s", space)
		}
		for _, s := range []string{space, eng} {
			if _, err := store.Put(ctx, s, []byte("orphan")); err != nil {
				t.Fatal(err)
			}
		}
		library.SetClock(e.pub, func() time.Time { return time.Now().Add(25 * time.Hour) })
		res, err := e.pub.CollectGarbage(ctx, legal, false)
		if err != nil || res.BlobsDeleted != 1 || has(space, "orphan") {
			t.Fatalf("team collection = %+v, %v; want the orphan deleted", res, err)
		}
		if !has(space, "team versioned") || !has(eng, "orphan") {
			t.Error("a team collection deleted a version's blob or another team's")
		}
	})
}

// TestCollectGarbageKeepsReusedBlobs: a publish or a pin that refers anew
// to an old blob no one referred to, while a collection that found it
// unreferenced is sweeping, keeps it: the writer writes an old blob again
// before referring to it, and the sweep stats each blob again just before
// deleting it. The writer runs between the sweep's listing of the blobs
// and its deletes, where the collection has already marked.
func TestCollectGarbageKeepsReusedBlobs(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		cfg := library.DefaultConfig()
		aliceLib := layout.LibraryRef{User: "alice"}
		space := cfg.BlobSpace(aliceLib)
		for _, tc := range []struct {
			name  string
			bytes string
			setup func(t *testing.T, e env)                      // before the collection
			reuse func(ctx context.Context, t *testing.T, e env) // during its sweep
		}{
			{"publish", "reused by a version", nil, func(ctx context.Context, t *testing.T, e env) {
				if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "PDFs", "ref.md", "reused by a version")}); err != nil {
					t.Error(err)
				}
			}},
			{"pin", "reused by a pin", func(t *testing.T, e env) {
				for path, data := range map[string]string{"notes/SKILL.md": skillstest.SkillMD("notes", "Notes", "body"), "notes/ref.md": "reused by a pin"} {
					if _, err := e.lib.Catalog.PutLibraryFile(t.Context(), aliceLib, path, []byte(data), objstore.PutOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}, func(ctx context.Context, t *testing.T, e env) {
				// alice's first call on a thread pins it: a snapshot of
				// her library, its files' blobs in her space.
				if _, _, err := e.lib.Catalog.State(ctx, caller(t, "alice")); err != nil {
					t.Error(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := t.Context()
				b := objstoretest.NewAging(newBucket(t))
				e := pinnedEnv(t, b, 7*24*time.Hour)
				if tc.setup != nil {
					tc.setup(t, e)
				}
				// The blob, as a deleted version or an expired snapshot
				// left it: referred to by nothing, two days old.
				store := blobs.New(b, 1<<20, cfg.GCGrace)
				st, err := store.Put(ctx, space, []byte(tc.bytes))
				if err != nil {
					t.Fatal(err)
				}
				b.Age(blobs.Key(space, st.Digest), 2*cfg.GCGrace)
				var reused atomic.Bool // once: the writer lists the space too
				b.Hook(func(op, prefix string) {
					if op == "list" && prefix == space+"sha256/" && reused.CompareAndSwap(false, true) {
						tc.reuse(ctx, t, e)
					}
				})
				res, err := e.pub.CollectGarbage(ctx, aliceLib, false)
				b.Hook(nil)
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := store.Has(ctx, space, st.Digest); err != nil || !ok {
					t.Fatalf("collection = %+v; the blob %s just referred to again is gone (%v)", res, tc.name, err)
				}
				// Referred to now: a later collection keeps it too.
				if res, err := e.pub.CollectGarbage(ctx, aliceLib, false); err != nil || res.BlobsDeleted != 0 {
					t.Errorf("second collection = %+v, %v; want nothing deleted", res, err)
				}
				if data, err := store.Get(ctx, space, st.Digest); err != nil || string(data) != tc.bytes {
					t.Errorf("blob = %q, %v", data, err)
				}
			})
		}
	})
}

// TestWritersPutBackCollectedBlobs: a collection that stat'ed an old blob
// just before a publish or a pin wrote it again may delete it after; the
// writer, its record written, finds it gone and puts it back (a publish,
// which has the bytes) or fails with ABORTED before any pin names the
// snapshot (a pin; the next call pins afresh). Here the delete lands while
// the writer writes its record.
func TestWritersPutBackCollectedBlobs(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		cfg := library.DefaultConfig()
		aliceLib := layout.LibraryRef{User: "alice"}
		space := cfg.BlobSpace(aliceLib)
		ctx := t.Context()
		b := objstoretest.NewAging(newBucket(t))
		e := pinnedEnv(t, b, 7*24*time.Hour)
		store := blobs.New(b, 1<<20, cfg.GCGrace)
		old := func(data string) blobs.Digest {
			t.Helper()
			st, err := store.Put(ctx, space, []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			b.Age(blobs.Key(space, st.Digest), 2*cfg.GCGrace)
			return st.Digest
		}
		// deleteOnPut deletes the blob d when the writer puts a key
		// under recordPrefix, once.
		deleteOnPut := func(recordPrefix string, d blobs.Digest) {
			var done atomic.Bool
			b.Hook(func(op, key string) {
				if op == "put" && strings.HasPrefix(key, recordPrefix) && done.CompareAndSwap(false, true) {
					if err := store.Delete(ctx, space, d); err != nil {
						t.Error(err)
					}
				}
			})
			t.Cleanup(func() { b.Hook(nil) })
		}

		d := old("reused by a version")
		deleteOnPut("alice/versions/skills/pdf/v/", d)
		if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "PDFs", "ref.md", "reused by a version")}); err != nil {
			t.Fatal(err)
		}
		if ok, err := store.Has(ctx, space, d); err != nil || !ok {
			t.Fatalf("the version's blob, deleted while its record was written, is gone (%v)", err)
		}

		for path, data := range map[string]string{"notes/SKILL.md": skillstest.SkillMD("notes", "Notes", "body"), "notes/ref.md": "reused by a pin"} {
			if _, err := e.lib.Catalog.PutLibraryFile(ctx, aliceLib, path, []byte(data), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		d = old("reused by a pin")
		deleteOnPut("alice/versions/snapshots/", d)
		_, _, err := e.lib.Catalog.State(ctx, caller(t, "alice"))
		if !errors.Is(err, errkind.Aborted) {
			t.Fatalf("pinning while the blob was collected: %v, want ABORTED", err)
		}
		if _, _, err := e.lib.Catalog.State(ctx, caller(t, "alice")); err != nil {
			t.Fatalf("pinning again: %v", err)
		}
		if ok, err := store.Has(ctx, space, d); err != nil || !ok {
			t.Fatalf("the pin's blob is gone after pinning again (%v)", err)
		}
	})
}
