package libindex

import (
	"context"
	"io"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// keeps reports whether a load of l that began at since may keep what it
// read.
func (ix *Store) keeps(l Layer, since uint64) bool { return ix.loads.Keeps(l.Prefix, since) }

// forgetHeld counts a drop of l (running says how many Drops of its stripe
// began, +1, or ended, -1) and forgets the index held of it, in one step
// against hold.
func (ix *Store) forgetHeld(l Layer, running int) {
	ix.loads.Dropped(l.Prefix, running, func() { ix.mem.Remove(l.Prefix) })
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
// and in the bucket. Other replicas notice the missing stamp and persisted
// index within a refresh interval and list before answering (at once after
// Forget). A load here that read the shared or persisted copy before it
// was deleted keeps nothing: the drop is counted before and after the
// deletes.
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
func (ix *Store) ForgetAll() { ix.loads.DroppedAll(ix.mem.Purge) }

// stampMissing tells why l's stamp is missing from the shared cache while
// this replica holds x: a Drop deleted it, or the cache evicted it (full,
// under many libraries' heads and files) or let it expire. Only a drop may
// cost a listing from scratch. A Drop deletes the persisted index too, and
// only a listing that finds content changed writes it, each generation
// once, so its head tells them apart in one ranged read: none (or one that
// cannot be read) is a drop; x's generation, or one listed before x, is
// not, and x is served as if the stamp were x's; a newer one (a change
// listed elsewhere) is read whole, as a newer index from the shared cache
// would be. A read between a Drop's deletes of the stamp and of the
// persisted index counts as a check before the drop: the next, a refresh
// interval later, finds it.
func (ix *Store) stampMissing(ctx context.Context, l Layer, x *Index) (newer *Index, dropped bool) {
	n := headerBytes(l)
	rc, _, err := ix.bucket.GetRange(ctx, l.Object, 0, n)
	if err != nil {
		if !objstore.IsNotFound(err) {
			ix.log.WarnContext(ctx, "skills: persisted library index not read", "prefix", l.Prefix, "err", err)
		}
		return nil, true
	}
	b, err := io.ReadAll(io.LimitReader(rc, n))
	rc.Close()
	if err != nil {
		return nil, true
	}
	st, err := decodeHeader(b, l)
	if err != nil {
		return nil, true // another version's, or library's: listed afresh
	}
	if st.Gen == x.Gen || !ix.clamp(st.Listed).After(x.Listed) {
		ix.log.DebugContext(ctx, "skills: library index stamp missing, not dropped", "prefix", l.Prefix)
		return nil, false
	}
	y := ix.fromBucket(ctx, l)
	return y, y == nil
}
