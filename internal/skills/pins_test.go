package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/snapshots"
)

// pinAsked is how the tests' calls ask for their thread's pinned library
// (the server's ask is the principal's, from a header or a token claim).
type pinAskedKey struct{}

func pinned(ctx context.Context) context.Context { return context.WithValue(ctx, pinAskedKey{}, true) }

func askedInTest(ctx context.Context) bool { return ctx.Value(pinAskedKey{}) != nil }

// pinnedLibrary is a library that lists every call afresh (so an unpinned
// call sees each change at once) with pins on the clock clk.
func pinnedLibrary(t *testing.T, b objstore.Bucket, clk *clock) *Library {
	t.Helper()
	cfg := DefaultConfig()
	cfg.IndexRefresh = 0
	lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler), WithPins(DefaultPinConfig(), askedInTest))
	if err != nil {
		t.Fatal(err)
	}
	lib.Catalog.views.Pins.Store.Now = clk.Now
	t.Cleanup(lib.Close)
	return lib
}

func TestPinnedThreads(t *testing.T) {
	objstoretest.ForEachBackend(t, testPinnedThreads)
}

// what a caller sees of the library, by every way it reads it.
type seen struct {
	list, block, raw, notes, vfsNotes, digest, render, export, search string
}

func look(t *testing.T, lib *Library, ctx context.Context, id mounts.Caller) seen {
	t.Helper()
	var s seen
	page, err := lib.Catalog.Page(ctx, id, skillview.ListOptions{}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range page.Skills {
		s.list += sk.Name + ":" + sk.Description + ";"
	}
	s.digest = page.LibraryDigest
	b, err := lib.Catalog.Prompt(ctx, id, skillview.ListOptions{}, skillmd.FormatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.block = b.Text
	d, err := lib.Catalog.Get(ctx, id, "one")
	if err != nil {
		t.Fatal(err)
	}
	s.raw = d.Raw
	if s.notes, _, err = lib.Catalog.ReadFile(ctx, id, "one", "notes.md", skillview.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := lib.Tree.Stat(ctx, id, "one/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := lib.Tree.Open(ctx, o, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	s.vfsNotes = string(data)
	if s.render, _, err = lib.Catalog.Render(ctx, id, "one", skillview.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	var tgz bytes.Buffer
	if _, err := lib.Exporter.Export(ctx, id, "one", &tgz); err != nil {
		t.Fatal(err)
	}
	s.export = fmt.Sprintf("%x", sha256.Sum256(tgz.Bytes()))
	hits, err := lib.Catalog.Search(ctx, id, skillview.SearchOptions{Query: "does"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		s.search += h.Name + ";"
	}
	return s
}

func put(t *testing.T, b objstore.Bucket, key, body string) {
	t.Helper()
	if _, err := b.Put(t.Context(), key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

func keys(t *testing.T, b objstore.Bucket, prefix string) []string {
	t.Helper()
	var out []string
	if err := objstore.Walk(t.Context(), b, prefix, func(o objstore.Object) error { out = append(out, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func testPinnedThreads(t *testing.T, newBucket func(*testing.T) objstore.Bucket) {
	raw := newBucket(t)
	b := objstoretest.NewFaulty(raw)
	put(t, b, "alice/skills/one/SKILL.md", skillMD("one")+"First version.\n")
	put(t, b, "alice/skills/one/notes.md", "old notes\n")
	put(t, b, "_shared/skills/two/SKILL.md", skillMD("two"))
	clk := &clock{now: time.Now()}
	lib := pinnedLibrary(t, b, clk)
	ctx := t.Context()
	tid := func(thread string) mounts.Caller {
		return mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: thread})
	}

	before := look(t, lib, ctx, tid("t2"))
	t1 := look(t, lib, pinned(ctx), tid("t1"))
	if t1 != before {
		t.Fatalf("a new pin differs from the library it pins:\n%+v\n%+v", t1, before)
	}
	if got := keys(t, b, "alice/versions/pins/"); strings.Join(got, ",") != "alice/versions/pins/t1.json" {
		t.Fatalf("pins = %q, want t1's alone (an unpinned call pins nothing)", got)
	}
	if n := len(keys(t, b, "_shared/versions/blobs/sha256/")); n != 1 {
		t.Errorf("shared blobs = %d, want 1", n)
	}

	// The library changes under the thread: a SKILL.md and a file
	// rewritten, a shared skill added and one deleted.
	put(t, b, "alice/skills/one/SKILL.md", "---\nname: one\ndescription: Changed.\n---\nSecond version.\n")
	put(t, b, "alice/skills/one/notes.md", "new notes\n")
	put(t, b, "_shared/skills/three/SKILL.md", skillMD("three"))
	if err := b.Delete(ctx, "_shared/skills/two/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	if again := look(t, lib, pinned(ctx), tid("t1")); again != t1 {
		t.Errorf("the pinned thread saw the change:\n got %+v\nwant %+v", again, t1)
	}
	now := look(t, lib, ctx, tid("t2"))
	if !strings.Contains(now.list, "one:Changed.") || !strings.Contains(now.list, "three:") || strings.Contains(now.list, "two:") ||
		now.notes != "new notes\n" || now.vfsNotes != "new notes\n" || !strings.Contains(now.raw, "Second") || now.digest == t1.digest {
		t.Errorf("the unpinned thread does not see the change: %+v", now)
	}
	// A fresh replica (another process) reads the same pin.
	other := pinnedLibrary(t, b, clk)
	if got := look(t, other, pinned(ctx), tid("t1")); got != t1 {
		t.Errorf("another replica's view of the pin:\n got %+v\nwant %+v", got, t1)
	}

	// A new pinned thread pins the library as it is now; a second one
	// pinning the same state copies nothing.
	if t3 := look(t, lib, pinned(ctx), tid("t3")); t3 != now {
		t.Errorf("a new pinned thread:\n got %+v\nwant %+v", t3, now)
	}
	blobsBefore := keys(t, b, "alice/versions/blobs/")
	gets, puts := b.Calls(objstore.OpGet), b.Calls(objstore.OpPut)
	if t4 := look(t, lib, pinned(ctx), tid("t4")); t4 != now {
		t.Errorf("a second thread pinning the same state:\n got %+v\nwant %+v", t4, now)
	}
	if got := keys(t, b, "alice/versions/blobs/"); strings.Join(got, ",") != strings.Join(blobsBefore, ",") {
		t.Errorf("a second pin of the same state stored blobs: %q, before %q", got, blobsBefore)
	}
	// The pin, and a conditional create of the snapshot that is there.
	if n := b.Calls(objstore.OpPut) - puts; n != 2 {
		t.Errorf("a second pin of the same state made %d Puts, want 2 (the pin and the snapshot's conditional create)", n)
	}
	// The pin read and the five reads of look (lists every call): no
	// file is copied again.
	if n := b.Calls(objstore.OpGet) - gets; n > 8 {
		t.Errorf("a second pin of the same state made %d Gets", n)
	}

	// After the retention t1 moves on, and its expired pin is replaced.
	clk.Advance(DefaultPinConfig().Retention + time.Minute)
	if got := look(t, lib, pinned(ctx), tid("t1")); got != now {
		t.Errorf("an expired pin:\n got %+v\nwant %+v", got, now)
	}
	// A new thread's pin sweeps the pins that expired (t3's, t4's).
	look(t, lib, pinned(ctx), tid("t5"))
	if got := keys(t, b, "alice/versions/pins/"); strings.Join(got, ",") != "alice/versions/pins/t1.json,alice/versions/pins/t5.json" {
		t.Errorf("pins after the sweep = %q", got)
	}
	// t5's pin also swept the first state's snapshot, which no pin
	// refers to any more (the last sweep of alice's snapshots was over an
	// hour ago); t1 and t5 keep reading theirs.
	if snaps := keys(t, b, "alice/versions/snapshots/"); len(snaps) != 1 {
		t.Errorf("snapshots after a new thread's pin = %q, want only the one t1 and t5 refer to", snaps)
	}
	if n, err := lib.Catalog.SweepPins(ctx, "alice", false); err != nil || n != (snapshots.Sweep{}) {
		t.Errorf("SweepPins = %+v, %v; want nothing left to sweep", n, err)
	}
	fresh := pinnedLibrary(t, b, clk)
	for _, th := range []string{"t1", "t5"} {
		if got := look(t, fresh, pinned(ctx), tid(th)); got != now {
			t.Errorf("%s after the sweep:\n got %+v\nwant %+v", th, got, now)
		}
	}
	// A snapshot gone from under a replica that read the pin (swept,
	// deleted by hand) is pinned anew rather than failing every call.
	for _, k := range keys(t, b, "alice/versions/snapshots/") {
		if err := b.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	fresh.Catalog.views.Pins.Frozen.Purge()
	put(t, b, "alice/skills/one/notes.md", "newest notes\n")
	if got := look(t, fresh, pinned(ctx), tid("t1")); got.notes != "newest notes\n" {
		t.Errorf("a pin whose snapshot is gone reads %+v", got)
	}
}

// TestPinRace: concurrent first calls of one thread on two replicas make
// one pin, and both read the library it froze.
func TestPinRace(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{
		"alice/skills/one/SKILL.md": skillMD("one"),
		"alice/skills/one/notes.md": "notes\n",
	})
	clk := &clock{now: time.Now()}
	libs := []*Library{pinnedLibrary(t, b, clk), pinnedLibrary(t, b, clk)}
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	digests := make(chan string, 8)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			p, err := libs[i%2].Catalog.Page(pinned(t.Context()), id, skillview.ListOptions{}, 0, "")
			errs <- err
			digests <- p.LibraryDigest
		}()
		if i == 3 {
			// Halfway, the library changes: whichever pin won, every
			// caller reads the one pin written.
			put(t, b, "alice/skills/two/SKILL.md", skillMD("two"))
		}
	}
	var first string
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	pin := objstoretest.Get(t, b, "alice/versions/pins/t1.json")
	for i := range 8 {
		d := <-digests
		if i == 0 {
			first = d
		}
		if d != first {
			t.Errorf("callers of one thread read different libraries: %s, %s (pin %s)", first, d, pin)
		}
	}
}

// TestPinnedFileIsTheBlob: a pinned read never reads the live key, even
// where the bytes are the same: each file resolves to its blob.
func TestPinnedFileIsTheBlob(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{
		"alice/skills/one/SKILL.md": skillMD("one"),
		"alice/skills/one/notes.md": "notes\n",
	})
	lib := pinnedLibrary(t, b, &clock{now: time.Now()})
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	o, err := lib.Tree.Stat(pinned(t.Context()), id, "one/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(o.Key, "alice/versions/blobs/sha256/") {
		t.Fatalf("pinned file resolves to %q, want a blob of alice's space", o.Key)
	}
	if got := objstoretest.Get(t, b, o.Key); !bytes.Equal([]byte(got), []byte("notes\n")) {
		t.Errorf("blob holds %q", got)
	}
}

func TestPinConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*PinConfig)
		ok   bool
	}{
		{"defaults", func(*PinConfig) {}, true},
		{"user root in a mount", func(c *PinConfig) { c.Roots.User = "{user}/skills/versions/" }, false},
		{"user root without {user}", func(c *PinConfig) { c.Roots.User = "versions/" }, false},
		{"shared root a user's", func(c *PinConfig) { c.Roots.Shared = "alice/versions/" }, false},
		{"shared root in the shared library", func(c *PinConfig) { c.Roots.Shared = "_shared/skills/versions/" }, false},
		{"no retention", func(c *PinConfig) { c.Retention = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultPinConfig()
			tc.edit(&cfg)
			_, err := New(objstoretest.NewBucket(t, nil), mounts.Default(), DefaultConfig(), slog.New(slog.DiscardHandler), WithPins(cfg, askedInTest))
			if (err == nil) != tc.ok {
				t.Errorf("New = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestPinnedWithTeams: a snapshot freezes every layer of the caller's
// view, its teams' too, and the protected names: a pinned member keeps
// its team's old bytes after the team library changes (through the
// catalog and straight in the bucket) and protection as it was at pin
// time; the teams are part of the snapshot's identity, so a thread with
// other teams never reads a snapshot of a team it is no member of.
func TestPinnedWithTeams(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(*testing.T) objstore.Bucket) {
		b := newBucket(t)
		md := func(name, desc string) string {
			return "---\nname: " + name + "\ndescription: " + desc + "\n---\nbody of " + desc + "\n"
		}
		put(t, b, "_teams/legal/skills/nda/SKILL.md", md("nda", "NDA one"))
		put(t, b, "_teams/legal/skills/nda/clauses.md", "old clauses\n")
		put(t, b, "_teams/eng/skills/deploy/SKILL.md", md("deploy", "Deploys"))
		put(t, b, "_shared/skills/contracts/SKILL.md", md("contracts", "Org contracts"))
		put(t, b, "alice/skills/contracts/SKILL.md", md("contracts", "Alice contracts"))
		lib := pinnedLibrary(t, b, &clock{now: time.Now()})
		ctx := t.Context()
		shared, legal := layout.LibraryRef{Shared: true}, layout.LibraryRef{Team: "legal"}
		if _, err := lib.Catalog.SetProtected(ctx, shared, "contracts", true); err != nil {
			t.Fatal(err)
		}
		as := func(thread, teams string) mounts.Caller {
			return mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: thread, Teams: teams})
		}
		// state is what c reads: the skills listed (name@layer), nda's
		// SKILL.md and clauses, and whose contracts the name refers to.
		state := func(ctx context.Context, c mounts.Caller) string {
			t.Helper()
			list, err := lib.Catalog.Skills(ctx, c, skillview.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range list {
				out = append(out, s.Name+"@"+s.Layer)
			}
			if d, err := lib.Catalog.Get(ctx, c, "nda"); err == nil {
				clauses, _, err := lib.Catalog.ReadFile(ctx, c, "nda", "clauses.md", skillview.ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, strings.TrimSpace(d.Description)+"+"+strings.TrimSpace(clauses))
			} else if errkind.Of(err) != errkind.NotFound {
				t.Fatal(err)
			}
			d, err := lib.Catalog.Get(ctx, c, "contracts")
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(append(out, "contracts="+d.Description), " ")
		}
		member := as("t1", "legal")
		const before = "contracts@shared nda@team:legal NDA one+old clauses contracts=Org contracts"
		if got := state(pinned(ctx), member); got != before {
			t.Fatalf("pinned member = %q, want %q", got, before)
		}
		if got := state(pinned(ctx), as("t2", "eng")); got != "contracts@shared deploy@team:eng contracts=Org contracts" {
			t.Fatalf("pinned eng thread = %q", got)
		}

		// The team library changes through the catalog and in the bucket,
		// and the shared library no longer protects contracts.
		if _, err := lib.Catalog.PutLibraryFile(ctx, legal, "nda/SKILL.md", []byte(md("nda", "NDA two")), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		put(t, b, "_teams/legal/skills/nda/clauses.md", "new clauses\n")
		put(t, b, "_teams/legal/skills/handbook/SKILL.md", md("handbook", "Handbook"))
		if _, err := lib.Catalog.SetProtected(ctx, shared, "contracts", false); err != nil {
			t.Fatal(err)
		}
		if err := lib.Catalog.DropLibraryIndex(ctx, legal); err != nil {
			t.Fatal(err)
		}
		const after = "contracts@user handbook@team:legal nda@team:legal NDA two+new clauses contracts=Alice contracts"
		if got := state(ctx, member); got != after {
			t.Fatalf("unpinned member = %q, want %q", got, after)
		}
		if got := state(pinned(ctx), member); got != before {
			t.Fatalf("pinned member after the changes = %q, want as pinned %q", got, before)
		}
		// A thread pinned now pins the library as it is now.
		if got := state(pinned(ctx), as("t3", "legal")); got != after {
			t.Fatalf("new pinned thread = %q, want %q", got, after)
		}
		// The same thread with other teams pins anew: never legal's.
		if got := state(pinned(ctx), as("t1", "eng")); strings.Contains(got, "nda") || !strings.Contains(got, "deploy@team:eng") {
			t.Fatalf("thread t1 with teams eng = %q; want eng's view, no nda", got)
		}
		// The team's bytes went to its blob space; the snapshots to alice's.
		if len(keys(t, b, "_teams/legal/versions/blobs/")) == 0 || len(keys(t, b, "_teams/eng/versions/blobs/")) == 0 {
			t.Errorf("no team blobs: %v", keys(t, b, "_teams/"))
		}
		if n := len(keys(t, b, "alice/versions/snapshots/")); n < 3 {
			t.Errorf("alice has %d snapshots, want one per state and set of teams (at least 3)", n)
		}
		// The team's blob space counts the snapshots referring to it.
		var refs int
		if err := lib.Catalog.PinnedBlobs(ctx, legal, func(blobs.Digest) error { refs++; return nil }); err != nil || refs == 0 {
			t.Errorf("PinnedBlobs(team legal) = %d, %v", refs, err)
		}
	})
}
