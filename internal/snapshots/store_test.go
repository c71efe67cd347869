package snapshots

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

const retention = 7 * 24 * time.Hour

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// newStore is one replica's store over b, with the flags' defaults and
// the layout's default roots ({user}/versions/).
func newStore(b objstore.Bucket, clk *clock) *Store {
	m := libindex.NewMetrics(prometheus.NewRegistry())
	files := libindex.NewFiles(b, cache.NewLRU(1<<20), libindex.Config{HeadTTL: time.Hour, MaxCachedFileBytes: 1 << 20}, libindex.NewCacheLog(slog.New(slog.DiscardHandler)), m)
	s := New(b, Config{
		Retention: retention, MaxBytes: 1 << 30, GCGrace: 24 * time.Hour,
		Keys:        keysOf{},
		Concurrency: 4, MaxSnapshotBytes: 1 << 20,
	}, files, cache.NewHeld(64<<20, m.HeldMetrics), slog.New(slog.DiscardHandler))
	s.Now = clk.Now
	return s
}

// keysOf renders keys as the layout does with its default roots
// ({user}/versions/).
type keysOf struct{}

func (keysOf) Pins(user string) string          { return user + "/versions/pins/" }
func (keysOf) Pin(user, thread string) string   { return user + "/versions/pins/" + thread + ".json" }
func (keysOf) Snapshots(user string) string     { return user + "/versions/snapshots/" }
func (keysOf) Snapshot(user, sum string) string { return user + "/versions/snapshots/" + sum + ".json" }

// source lists alice's library (alice/skills/) and the shared one
// (_shared/skills/) as they are in the bucket, counting its listings.
type source struct {
	b     objstore.Bucket
	lists int
}

func (s *source) Libraries(ctx context.Context, id mounts.Caller) ([]Listed, error) {
	s.lists++
	var out []Listed
	for _, l := range []struct{ name, prefix, space string }{
		{layerUser, id.User() + "/skills/", id.User() + "/versions/blobs/"},
		{layerShared, "_shared/skills/", "_shared/versions/blobs/"},
	} {
		fl := Layer{Name: l.name, Prefix: l.prefix, Space: l.space}
		err := objstore.Walk(ctx, s.b, l.prefix, func(o objstore.Object) error {
			fl.Files = append(fl.Files, File{Rel: strings.TrimPrefix(o.Key, l.prefix), Size: o.Size, ETag: o.ETag, ModTime: o.ModTime.UTC()})
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, Listed{Layer: fl, Index: &libindex.Index{}})
	}
	return out, nil
}

func (s *source) Holds(string) bool { return false }

func keys(t *testing.T, b objstore.Bucket, prefix string) []string {
	t.Helper()
	var out []string
	if err := objstore.Walk(t.Context(), b, prefix, func(o objstore.Object) error { out = append(out, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPins(t *testing.T) {
	objstoretest.ForEachBackend(t, testPins)
}

// testPins: a thread's first pinned call freezes the library into a
// snapshot named by its content and writes the thread's pin; later calls
// (on any replica) read the pin and freeze nothing until it expires; a new
// thread sweeps the expired pins and the snapshots no pin refers to; the
// blobs the snapshots refer to are listed per space, for collection.
func testPins(t *testing.T, newBucket func(*testing.T) objstore.Bucket) {
	b := newBucket(t)
	ctx := t.Context()
	objstoretest.Put(t, b, "alice/skills/one/SKILL.md", "---\nname: one\ndescription: d\n---\nFirst.\n")
	objstoretest.Put(t, b, "_shared/skills/two/SKILL.md", "---\nname: two\ndescription: d\n---\nShared.\n")
	clk := &clock{now: time.Now()}
	st, src := newStore(b, clk), &source{b: b}
	t1 := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	first, err := st.Pinned(ctx, t1, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(t, b, "alice/versions/pins/"); !slices.Equal(got, []string{"alice/versions/pins/t1.json"}) {
		t.Errorf("pins = %q", got)
	}
	doc, err := st.Read(ctx, "alice", first)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Layers) != 2 || len(doc.Layers[0].Files) != 1 || doc.Layers[0].Files[0].Rel != "one/SKILL.md" {
		t.Fatalf("snapshot = %+v", doc)
	}
	f := doc.Layers[0].Files[0]
	if got := objstoretest.Get(t, b, blobs.Key("alice/versions/blobs/", blobs.Digest(f.Blob))); !strings.HasSuffix(got, "First.\n") {
		t.Errorf("alice's blob holds %q", got)
	}
	if got := keys(t, b, "_shared/versions/blobs/"); len(got) != 1 {
		t.Errorf("shared blobs = %q, want the shared skill's", got)
	}

	objstoretest.Put(t, b, "alice/skills/one/SKILL.md", "---\nname: one\ndescription: d\n---\nSecond.\n")
	other := newStore(b, clk)
	for name, s := range map[string]*Store{"this replica": st, "another replica": other} {
		if got, err := s.Pinned(ctx, t1, src); err != nil || got != first {
			t.Errorf("%s: t1 pinned to %s, %v; want %s", name, got, err, first)
		}
	}
	if src.lists != 1 {
		t.Errorf("the library was listed to freeze %d times, want once", src.lists)
	}

	// Past the retention t1 pins the library as it is then; a new thread's
	// pin sweeps the expired pin and the first snapshot.
	clk.Advance(retention + time.Minute)
	second, err := st.Pinned(ctx, t1, src)
	if err != nil || second == first {
		t.Fatalf("t1 after its pin expired: %s, %v; want a new snapshot", second, err)
	}
	clk.Advance(retention + time.Minute)
	t2 := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t2"})
	if got, err := st.Pinned(ctx, t2, src); err != nil || got != second {
		t.Fatalf("t2 pinned to %s, %v; want %s (the library unchanged)", got, err, second)
	}
	if got := keys(t, b, "alice/versions/pins/"); !slices.Equal(got, []string{"alice/versions/pins/t2.json"}) {
		t.Errorf("pins after t2's sweep = %q", got)
	}
	if got := keys(t, b, "alice/versions/snapshots/"); !slices.Equal(got, []string{st.Key("alice", second)}) {
		t.Errorf("snapshots after t2's sweep = %q, want only t2's", got)
	}
	if _, err := st.Read(ctx, "alice", first); !errors.Is(err, ErrGone) {
		t.Errorf("reading a swept snapshot: %v, want ErrGone", err)
	}
	if n, err := st.Sweep(ctx, "alice", false); err != nil || n != (Sweep{}) {
		t.Errorf("Sweep = %+v, %v; want nothing left", n, err)
	}

	doc, err = st.Read(ctx, "alice", second)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, user, space string
		want              []string
	}{
		{"alice's space", "alice", "alice/versions/blobs/", []string{doc.Layers[0].Files[0].Blob}},
		{"the shared space, every user's", "", "_shared/versions/blobs/", []string{doc.Layers[1].Files[0].Blob}},
		{"another user's", "bob", "alice/versions/blobs/", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := st.Blobs(ctx, tc.user, tc.space, func(d blobs.Digest) error { got = append(got, string(d)); return nil })
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Blobs = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestReadChecksContent: a snapshot whose bytes are not what names it is
// corrupt, never served.
func TestReadChecksContent(t *testing.T) {
	b := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": "---\nname: one\ndescription: d\n---\n"})
	st := newStore(b, &clock{now: time.Now()})
	sum, err := st.Pinned(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"}), &source{b: b})
	if err != nil {
		t.Fatal(err)
	}
	key := st.Key("alice", sum)
	objstoretest.Put(t, b, key, strings.Replace(objstoretest.Get(t, b, key), `"user"`, `"user" `, 1))
	if _, err := st.Read(t.Context(), "alice", sum); !errors.Is(err, blobs.ErrCorrupt) {
		t.Errorf("reading a changed snapshot: %v, want blobs.ErrCorrupt", err)
	}
}
