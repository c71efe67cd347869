package libindex

import (
	"context"
	"hash/fnv"
)

// dropState is one stripe's drops: how many began or were forgotten, and
// how many Drops are deleting copies now.
type dropState struct {
	count   uint64
	running int
}

// keeps reports whether a load that began at count since may keep what it
// read: no drop began since, and none is deleting (a load during one may
// have read a copy just before it was deleted).
func (d dropState) keeps(since uint64) bool { return d.running == 0 && d.count == since }

// dropStripes spreads the drop counts, so dropping one library rarely
// keeps another's concurrent load from being held.
const dropStripes = 64

func stripe(l Layer) int {
	h := fnv.New32a()
	h.Write([]byte(l.Prefix))
	return int(h.Sum32() % dropStripes)
}

// dropCount is where a load of l begins: its stripe's count of drops.
func (ix *Store) dropCount(l Layer) uint64 {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	return ix.drops[stripe(l)].count
}

// keeps reports whether a load of l that began at since may keep what it
// read.
func (ix *Store) keeps(l Layer, since uint64) bool {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	return ix.drops[stripe(l)].keeps(since)
}

// forgetHeld counts a drop of l (running says how many Drops of its stripe
// began, +1, or ended, -1) and forgets the index held of it, in one step
// against hold.
func (ix *Store) forgetHeld(l Layer, running int) {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	d := &ix.drops[stripe(l)]
	d.count++
	d.running += running
	ix.mem.Remove(l.Prefix)
}

// unpublishIfDropped takes back what a load of l that began at since just
// published, when a drop began meanwhile: it may have published a copy
// the drop had already deleted. At worst that costs another listing.
func (ix *Store) unpublishIfDropped(ctx context.Context, l Layer, since uint64) {
	if ix.keeps(l, since) {
		return
	}
	if err := ix.shared.Delete(ctx, StampKey(l), IndexKey(l)); err != nil {
		ix.cacheLog.Failed(ctx, "taking back a library index", err)
	}
	if err := ix.bucket.Delete(ctx, l.Object); err != nil {
		ix.log.WarnContext(ctx, "skills: persisted library index not taken back", "object", l.Object, "err", err)
	}
}

// Drop forgets every copy of l's index: in process, in the shared cache
// and in the bucket. Other replicas notice the missing stamp within a
// refresh interval and list before answering (at once after Forget). A
// load here that read the shared or persisted copy before it was deleted
// keeps nothing: the drop is counted before and after the deletes.
func (ix *Store) Drop(ctx context.Context, l Layer) error {
	ix.forgetHeld(l, +1)
	defer ix.forgetHeld(l, -1)
	if err := ix.shared.Delete(ctx, StampKey(l), IndexKey(l)); err != nil {
		return err
	}
	return ix.bucket.Delete(ctx, l.Object)
}

// Forget drops this process's copy of l's index only: another replica
// dropped the shared and persisted copies (an event told it of a change),
// so the next call here reads the newer index it published, or lists.
// A load under way here keeps nothing it read before.
func (ix *Store) Forget(l Layer) { ix.forgetHeld(l, 0) }

// ForgetAll drops every index this process holds, for a replica that may
// have missed a Forget (its subscription to them was interrupted): each is
// read again from the shared cache, without a listing unless it changed.
func (ix *Store) ForgetAll() {
	ix.dropMu.Lock()
	defer ix.dropMu.Unlock()
	for i := range ix.drops {
		ix.drops[i].count++
	}
	ix.mem.Purge()
}
