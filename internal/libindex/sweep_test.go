package libindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// runSweep lists prefixes with one sweep of s, as the libraries queued
// within one wait are, and returns what each found.
func runSweep(s *sweeper, prefixes []string) []*sweepItem {
	items := make([]*sweepItem, len(prefixes))
	for i, p := range prefixes {
		items[i] = &sweepItem{prefix: p, done: make(chan struct{})}
	}
	s.queued = slices.Clone(items)
	s.run()
	return items
}

func newSweeper(b objstore.Bucket, pageSize, maxObjects int) *sweeper {
	return &sweeper{bucket: b, pageSize: pageSize, maxObjects: maxObjects, metrics: NewMetrics(nil), now: time.Now}
}

// walkAlone is what listing prefix alone finds: its first maxObjects
// objects, and whether there were more.
func walkAlone(t *testing.T, b objstore.Bucket, prefix string, maxObjects int) (keys []string, truncated bool) {
	t.Helper()
	err := objstore.Walk(t.Context(), b, prefix, func(o objstore.Object) error {
		if len(keys) == maxObjects {
			return errTooManyObjects
		}
		keys = append(keys, o.Key)
		return nil
	})
	if errors.Is(err, errTooManyObjects) {
		return keys, true
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys, false
}

func keysOf(objs []objstore.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// TestSweepFindsWhatListingAloneFinds: over random buckets (users'
// libraries between their workspaces, settings and keys that sort right
// next to a library's prefix), random sets of due libraries (some inside
// another, some no folder), page sizes and object bounds, a sweep gives
// every library exactly what listing it alone gives, and never makes more
// LISTs than listing each alone would, but for a page that resumes right
// after a library's end, and keys that sort between a folder and its
// name ("u/skills.bak/" between "u/skills" and "u/skills/"), read by the
// page that starts the library.
func TestSweepFindsWhatListingAloneFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 60 {
		mem := objstoretest.NewBucket(t, nil)
		users := 1 + rng.IntN(40)
		near := false
		var all []string
		for u := range users {
			user := fmt.Sprintf("u%03d", u)
			for i := range rng.IntN(12) {
				all = append(all, fmt.Sprintf("%s/skills/c%d/s%02d/SKILL.md", user, i%3, i))
			}
			for i := range rng.IntN(30) {
				all = append(all, fmt.Sprintf("%s/threads/t%d/f%03d", user, i%4, i))
			}
			if rng.IntN(3) == 0 {
				// Keys sorting just before and after the library's.
				all = append(all, user+"/skills", user+"/skills0", user+"/settings/skills.json")
			}
			if rng.IntN(8) == 0 {
				all, near = append(all, user+"/skills.bak/x"), true
			}
		}
		for _, k := range all {
			objstoretest.Put(t, mem, k, "x")
		}
		var due []string
		for u := range users {
			if rng.IntN(3) > 0 {
				due = append(due, fmt.Sprintf("u%03d/skills/", u))
			}
		}
		switch rng.IntN(4) {
		case 0:
			due = append(due, "u000/skills/c1/") // inside another one
		case 1:
			due = append(due, "u001/sk") // no folder
		}
		rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		if len(due) == 0 {
			continue
		}
		pageSize, maxObjects := 1+rng.IntN(20), 1+rng.IntN(15)
		b := objstoretest.NewFaulty(mem)
		var mu sync.Mutex
		var resumed []string // where each LIST started
		b.Before(objstore.OpList, func(_ context.Context, c objstoretest.Call) error {
			mu.Lock()
			defer mu.Unlock()
			resumed = append(resumed, c.List.StartAfter)
			return nil
		})
		items := runSweep(newSweeper(b, pageSize, maxObjects), due)

		alone := objstoretest.NewFaulty(mem)
		alone.LimitPage(pageSize)
		ends := map[string]bool{} // each library's last key
		for _, it := range items {
			keys, truncated := walkAlone(t, alone, it.prefix, maxObjects)
			if len(keys) > 0 {
				ends[keys[len(keys)-1]] = true
			}
			if truncated && strings.HasSuffix(it.prefix, "/") {
				ends[beyond(it.prefix)] = true
			}
			if it.err != nil || !slices.Equal(keysOf(it.objs), keys) || it.truncated != truncated {
				t.Fatalf("round %d (page %d, max %d): %s swept = %q truncated %v err %v; alone %q truncated %v",
					round, pageSize, maxObjects, it.prefix, keysOf(it.objs), it.truncated, it.err, keys, truncated)
			}
		}
		// A page that ends on a library's last key (or the last it takes)
		// cannot know it ended the library: the next one may find only
		// keys of no library waiting, a LIST the library's own listing
		// would not have made.
		atEnds := 0
		for _, k := range resumed {
			if ends[k] {
				atEnds++
			}
		}
		if swept, each := b.Calls(objstore.OpList), alone.Calls(objstore.OpList); swept > each+int64(atEnds) && !near {
			t.Fatalf("round %d: the sweep made %d LISTs, %d of them after a library's last key; listing each alone %d", round, swept, atEnds, each)
		}
	}
}

// TestSweepSharesPages: libraries whose keys lie together share pages (a
// LIST per page of their objects, not per library); libraries far apart
// cost a LIST each, as alone, the keys between them never read.
func TestSweepSharesPages(t *testing.T) {
	mem := objstoretest.NewBucket(t, nil)
	var due []string
	for u := range 200 {
		user := fmt.Sprintf("u%03d", u)
		for i := range 3 {
			objstoretest.Put(t, mem, fmt.Sprintf("%s/skills/s%d/SKILL.md", user, i), "x")
		}
		due = append(due, user+"/skills/")
	}
	b := objstoretest.NewFaulty(mem)
	for _, it := range runSweep(newSweeper(b, 100, 1000), due) {
		if len(it.objs) != 3 || it.err != nil {
			t.Fatalf("%s: %d objects, %v", it.prefix, len(it.objs), it.err)
		}
	}
	// 600 objects in pages of 100, in 4 chunks of at most 64 libraries
	// (each chunk's last page may end early).
	if n := b.Calls(objstore.OpList); n > 10 {
		t.Errorf("200 adjacent libraries of 3 objects took %d LISTs of 100 keys, want at most 10", n)
	}

	// The same libraries with a workspace of 500 files between each two.
	for u := range 200 {
		for i := range 500 {
			objstoretest.Put(t, mem, fmt.Sprintf("u%03d/threads/t/f%03d", u, i), "x")
		}
	}
	b = objstoretest.NewFaulty(mem)
	for _, it := range runSweep(newSweeper(b, 100, 1000), due) {
		if len(it.objs) != 3 || it.err != nil {
			t.Fatalf("%s: %d objects, %v", it.prefix, len(it.objs), it.err)
		}
	}
	if n := b.Calls(objstore.OpList); n > 200 {
		t.Errorf("200 libraries far apart took %d LISTs, want at most one each", n)
	}
}

// TestSweepFailure: a LIST that fails fails the libraries it had not
// finished, and no other; none is left waiting.
func TestSweepFailure(t *testing.T) {
	mem := objstoretest.NewBucket(t, nil)
	var due []string
	for u := range 10 {
		for i := range 5 {
			objstoretest.Put(t, mem, fmt.Sprintf("u%d/skills/s%d/SKILL.md", u, i), "x")
		}
		due = append(due, fmt.Sprintf("u%d/skills/", u))
	}
	b := objstoretest.NewFaulty(mem)
	boom := errors.New("storage down")
	lists := 0
	b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
		if lists++; lists == 3 {
			return boom
		}
		return nil
	})
	failed := 0
	for _, it := range runSweep(newSweeper(b, 8, 1000), due) {
		switch {
		case errors.Is(it.err, boom):
			failed++
		case it.err != nil || len(it.objs) != 5:
			t.Errorf("%s: %d objects, %v; want 5 or the LIST's error", it.prefix, len(it.objs), it.err)
		}
	}
	// Pages of 8 keys: the first two hold u0, u1 and u2 whole, u3 in part.
	if failed != 7 {
		t.Errorf("%d libraries failed, want the 7 the failed LIST had not finished", failed)
	}
}

// TestSweepRevalidatesDueLibrariesTogether: on MinIO, 30 users' libraries
// falling due within one sweep wait are revalidated by one LIST (they fit
// one page), each index as a listing of its own would have made it: the
// one library changed meanwhile gets its new skill and a new generation,
// the others keep theirs.
func TestSweepRevalidatesDueLibrariesTogether(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	mb := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	layers := make([]Layer, 30)
	for u := range layers {
		user := fmt.Sprintf("user%02d", u)
		layers[u] = Layer{Tag: user, Prefix: user + "/skills/", Object: user + "/settings/skills.index"}
		for _, s := range []string{"a", "b"} {
			objstoretest.Put(t, mb, layers[u].Prefix+s+"/SKILL.md", skillMD(s))
		}
		objstoretest.Put(t, mb, user+"/threads/t1/notes.md", "scratch")
	}
	b := objstoretest.NewFaulty(mb)
	cfg := testConfig(5 * time.Second)
	cfg.IndexMaxStale = 30 * time.Second
	// Any wait gathers calls made at once; a short one keeps the test short.
	cfg.SweepWait = 50 * time.Millisecond
	log := slog.New(slog.DiscardHandler)
	m := NewMetrics(nil)
	ix := New(b, cache.NewLRU(32<<20), cfg, folderSkills, log, NewCacheLog(log), m)
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	ix.SetNow(clk.Now)
	t.Cleanup(ix.Close)

	first := make([]*Index, len(layers))
	for u, l := range layers {
		x, err := ix.Get(t.Context(), l)
		if err != nil {
			t.Fatal(err)
		}
		first[u] = x
	}
	listsBefore := b.Calls(objstore.OpList)
	objstoretest.Put(t, mb, layers[7].Prefix+"c/SKILL.md", skillMD("c"))
	clk.Advance(6 * time.Second) // past the refresh interval: due in the background
	for _, l := range layers {
		if _, err := ix.Get(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close() // the background revalidations, and so the sweep, ended
	if n := b.Calls(objstore.OpList) - listsBefore; n != 1 {
		t.Errorf("30 libraries due together took %d LISTs, want 1", n)
	}
	if n := testutil.ToFloat64(m.Revalidations.WithLabelValues(ModeBackground, "ok")); n != 30 {
		t.Errorf("%v background revalidations ok, want 30", n)
	}
	for u, l := range layers {
		x, ok := ix.Servable(l)
		if !ok {
			t.Fatalf("%s: no servable index after its revalidation", l.Tag)
		}
		heads := len(x.Heads)
		switch {
		case u == 7 && (heads != 3 || x.Gen == first[u].Gen):
			t.Errorf("%s changed: %d heads, generation kept %v; want 3 and a new one", l.Tag, heads, x.Gen == first[u].Gen)
		case u != 7 && (heads != 2 || x.Gen != first[u].Gen || x == first[u]):
			t.Errorf("%s unchanged: %d heads, same generation %v, relisted %v; want 2, same, relisted", l.Tag, heads, x.Gen == first[u].Gen, x != first[u])
		}
		if !x.Listed.After(first[u].Listed) {
			t.Errorf("%s: listed at %v, not after its first listing", l.Tag, x.Listed)
		}
		for _, o := range x.Objs {
			if !strings.HasPrefix(o.Key, l.Prefix) {
				t.Errorf("%s's index holds %s", l.Tag, o.Key)
			}
		}
	}
}
