package libindex

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestEvictedStampNotADrop: a library whose stamp a full in-process cache
// evicted (other libraries' heads and indexes stored after it) is served,
// once its index falls due, with one ranged read of the persisted index's
// head on the call, and revalidated in the background from the index held
// (a listing, no head or file read again), not listed from scratch before
// answering as after a drop. A newer persisted index (a change listed by
// another replica) is read whole instead of listing; a real drop by another
// replica (stamp and persisted index deleted) is still listed afresh.
func TestEvictedStampNotADrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer time.Sleep(time.Minute) // the bubble's clock: background workers idle out
		const refresh = 5 * time.Second
		files := map[string]string{}
		library := func(user string, n int) Layer {
			for i := range n {
				files[fmt.Sprintf("%s/skills/s%03d/SKILL.md", user, i)] = skillMD(fmt.Sprintf("s%03d", i))
				files[fmt.Sprintf("%s/skills/s%03d/guide.md", user, i)] = "guide"
			}
			return Layer{Tag: user, Prefix: user + "/skills/", Object: user + "/settings/skills.index"}
		}
		alice, bob := library("alice", 20), library("bob", 400)
		b := objstoretest.NewFaulty(objstoretest.NewBucket(t, files))
		c := cache.NewLRU(64 << 10) // a fraction of bob's heads and index
		ix, _ := newStore(t, objstore.WrapWithRequestCounting(b), c, refresh)
		other, _ := newStore(t, b, c, refresh) // another replica, sharing the cache
		get := func(ix *Store, l Layer) (*Index, objstore.RequestCounts) {
			t.Helper()
			ctx, reqs := objstore.CountRequests(t.Context())
			x, err := ix.Get(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			return x, reqs.Counts()
		}
		stamped := func() bool {
			hits, err := c.Fetch(t.Context(), []string{StampKey(alice)})
			return err == nil && len(hits) == 1
		}
		reads := func() int64 { return b.Calls(objstore.OpGet) + b.Calls(objstore.OpGetRange) }

		x, first := get(ix, alice)
		get(ix, bob) // many tenants: alice's stamp evicted
		if stamped() {
			t.Fatal("alice's stamp still cached: the test proves nothing")
		}
		time.Sleep(longest(ix, refresh)) // alice's index due: its stamp is asked for
		lists, read := b.Calls(objstore.OpList), reads()
		y, call := get(ix, alice)
		t.Logf("first load: %+v; the call after the stamp was evicted: %+v", first, call)
		if y.Gen != x.Gen || len(y.Heads) != 20 {
			t.Errorf("served gen %x with %d skills, want the index held (gen %x, 20)", y.Gen, len(y.Heads), x.Gen)
		}
		if call.Lists != 0 || call.Reads > 1 || call.Writes != 0 {
			t.Errorf("the call after the stamp was evicted made %+v storage requests, want at most 1 read (the persisted index's head)", call)
		}
		ix.Close()
		if n := reads() - read - call.Reads; n != 0 {
			t.Errorf("the background revalidation read %d objects again, want none (every head and digest carried)", n)
		}
		if n := b.Calls(objstore.OpList) - lists; n != 1 {
			t.Errorf("%d listings after the stamp was evicted, want 1 (the due index's revalidation, in the background)", n)
		}
		if !stamped() {
			t.Error("the background revalidation did not publish the stamp again")
		}

		// Another replica lists a change (its index persisted, the stamp
		// published), and the stamp is evicted again: the newer persisted
		// index is read whole, nothing listed before answering.
		objstoretest.Put(t, b, "alice/skills/new/SKILL.md", skillMD("new"))
		time.Sleep(longest(ix, refresh))
		z, err := other.revalidate(t.Context(), alice, nil, other.loads.Since(alice.Prefix))
		if err != nil || len(z.Heads) != 21 {
			t.Fatalf("the other replica lists %v, %v; want 21 skills", z, err)
		}
		if err := c.Delete(t.Context(), StampKey(alice), IndexKey(alice)); err != nil { // evicted
			t.Fatal(err)
		}
		y, call = get(ix, alice)
		if y.Gen != z.Gen || call.Lists != 0 || call.Reads > 2 {
			t.Errorf("after a change listed elsewhere and the stamp evicted: gen %x with %+v requests, want gen %x from the persisted index (2 reads, no listing)", y.Gen, call, z.Gen)
		}
		ix.Close()

		// A real drop: another replica's write deletes a skill and drops the
		// index. The next call here lists the change before answering.
		if err := b.Delete(t.Context(), "alice/skills/new/SKILL.md"); err != nil {
			t.Fatal(err)
		}
		if err := other.Drop(t.Context(), alice); err != nil {
			t.Fatal(err)
		}
		time.Sleep(longest(ix, refresh))
		y, call = get(ix, alice)
		if len(y.Heads) != 20 || call.Lists == 0 {
			t.Errorf("after a drop elsewhere: %d skills with %+v requests, want 20 listed afresh", len(y.Heads), call)
		}
		ix.Close()
		other.Close()
	})
}
