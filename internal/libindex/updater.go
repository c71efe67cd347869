package libindex

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// revalidateInBackground revalidates x on one of the store's background
// workers unless this process already is, or another replica holds the
// lock; the caller goes on serving x. Its spans
// join the trace of the load that asked for it (ctx's). since is where the
// load of x began: a drop after it keeps x from being held again.
func (ix *Store) revalidateInBackground(ctx context.Context, l Layer, x *Index, since uint64) {
	if _, running := ix.bg.LoadOrStore(l.Prefix, true); running {
		return
	}
	queued := ix.work.Try(func() {
		defer ix.bg.Delete(l.Prefix)
		_ = panics.Guard(func() error {
			ctx, span := startSpan(tracing.Detached(ctx), "libindex.revalidate_background", l)
			defer span.End()
			ctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			unlock, ok, err := ix.shared.TryLock(ctx, LockKey(l), ix.cfg.IndexMaxStale)
			switch {
			case err != nil:
				// The lock is an optimization: without the shared cache each
				// replica revalidates on its own.
				ix.cacheLog.Failed(ctx, "locking a library index", err)
			case !ok:
				// Another replica is on it; ask the shared cache again after
				// a refresh interval.
				ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultLocked).Inc()
				ix.hold(l, x, ix.now(), false, since)
				return nil
			default:
				defer unlock()
			}
			if y := ix.revalidatedElsewhere(ctx, l, x, since); y != nil {
				ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultElsewhere).Inc()
				return nil
			}
			_, err = ix.revalidate(ctx, l, x, since)
			ix.metrics.Revalidations.WithLabelValues(ModeBackground, result(err)).Inc()
			if err != nil {
				ix.log.WarnContext(ctx, "skills: serving the last library index; revalidating it failed", "prefix", l.Prefix, "age", ix.now().Sub(x.Listed).Round(time.Second), "background", true, "err", err)
				ix.hold(l, x, ix.now(), true, since)
			}
			return nil
		})()
	})
	if !queued {
		// Every worker busy and the queue full: x is served as it is and
		// tried again a refresh interval later.
		ix.bg.Delete(l.Prefix)
		ix.metrics.Revalidations.WithLabelValues(ModeBackground, ResultDeferred).Inc()
	}
}

// syncLockWait bounds how long a caller that must have a fresh index waits
// for another replica's revalidation of it before listing itself (the
// other replica may have died holding the lock).
const syncLockWait = 5 * time.Second

// revalidateOnce is revalidate for a caller that waits for the result:
// under l's lock, waiting up to syncLockWait for another replica holding
// it, so that replicas asked for one stale library at once list it once.
// recheck: the shared cache may hold another replica's index (it held no
// other library's, nor was it dropped).
func (ix *Store) revalidateOnce(ctx context.Context, l Layer, x *Index, recheck bool, since uint64) (*Index, error) {
	if unlock, ok := ix.waitLock(ctx, l); ok {
		defer unlock()
	}
	if recheck {
		if y := ix.revalidatedElsewhere(ctx, l, x, since); y != nil {
			ix.metrics.Revalidations.WithLabelValues(ModeSync, ResultElsewhere).Inc()
			return y, nil
		}
	}
	fresh, err := ix.revalidate(ctx, l, x, since)
	ix.metrics.Revalidations.WithLabelValues(ModeSync, result(err)).Inc()
	return fresh, err
}

// waitLock takes l's revalidation lock, retrying while another replica
// holds it, for up to syncLockWait. ok is false when the lock could not be
// had (the shared cache failing, the wait over): the caller revalidates
// without it.
func (ix *Store) waitLock(ctx context.Context, l Layer) (unlock func(), ok bool) {
	wctx, cancel := context.WithTimeout(ctx, syncLockWait)
	defer cancel()
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		unlock, ok, err := ix.shared.TryLock(wctx, LockKey(l), ix.cfg.IndexMaxStale)
		if err != nil {
			if wctx.Err() == nil {
				ix.cacheLog.Failed(ctx, "locking a library index", err)
			}
			return nil, false
		}
		if ok {
			return unlock, true
		}
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

// revalidatedElsewhere returns l's index from the shared cache when another
// replica listed it less than a refresh interval ago (after x, which may be
// nil), holding it: the caller, holding l's lock, then lists nothing. A
// replica that decided to revalidate may have lost the race for the lock to
// one that has just done it.
func (ix *Store) revalidatedElsewhere(ctx context.Context, l Layer, x *Index, since uint64) *Index {
	y, _ := ix.fromShared(ctx, l, x, false)
	if y == nil {
		return nil
	}
	now := ix.now()
	if now.Sub(y.Listed) >= ix.FreshFor(y) {
		return nil
	}
	ix.hold(l, y, now, false, since)
	return y
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// revalidate lists l, reads the heads of the SKILL.md files and hashes the
// skill files that prev does not hold at their listed ETag, and publishes
// the new index: in process, in the shared cache, and in the bucket when
// its content changed.
func (ix *Store) revalidate(ctx context.Context, l Layer, prev *Index, since uint64) (x *Index, err error) {
	ctx, span := startSpan(ctx, "libindex.revalidate", l)
	defer func() { endSpan(span, x, err) }()
	listed := ix.now()
	var objs []objstore.Object
	err = objstore.Walk(ctx, ix.bucket, l.Prefix, func(o objstore.Object) error {
		if len(objs) == ix.cfg.MaxObjects {
			return errTooManyObjects
		}
		objs = append(objs, o)
		return nil
	})
	if errors.Is(err, errTooManyObjects) {
		// Serve what fits rather than fail every call for this library.
		ix.log.WarnContext(ctx, "skill library truncated", "prefix", l.Prefix, "max_objects", ix.cfg.MaxObjects)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if l.Side != "" {
		a, err := ix.bucket.Stat(ctx, l.Side)
		switch {
		case err == nil:
			o := objstore.Object{Key: l.Side, Attributes: a}
			i, _ := slices.BinarySearchFunc(objs, l.Side, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
			objs = slices.Insert(objs, i, o)
		case !errors.Is(err, objstore.ErrNotFound):
			return nil, err
		}
	}
	if cap(objs) > len(objs) {
		objs = slices.Clone(objs) // held as it is: without the listing's spare room
	}
	skills := skillsOf(objs, l.Prefix, ix.cfg.MaxSkills)
	files := 0
	for _, s := range skills {
		files += len(s.Files)
	}
	// Sized for what there is: an index is held as it is made.
	x = &Index{Listed: listed, Objs: objs, Heads: make([]Head, 0, len(skills)), Digests: make([]KeyDigest, 0, files)}
	var missing, unhashed []objstore.Object
	carried := 0
	for _, s := range skills {
		o := s.SkillMD
		if h, ok := prev.head(o); ok {
			x.Heads = append(x.Heads, Head{Key: o.Key, Head: h})
		} else {
			missing = append(missing, o)
		}
		if !hashed(s.Files) {
			continue
		}
		for _, f := range s.Files {
			if dg, ok := prev.digest(f); ok {
				x.Digests = append(x.Digests, KeyDigest{Key: f.Key, Digest: dg})
				carried++
			} else {
				unhashed = append(unhashed, f)
			}
		}
	}
	read, moved, err := ix.reader.fetch(ctx, l.Tag, missing)
	if err != nil {
		return nil, err
	}
	for key, a := range moved {
		// The head read is of a version written since the listing: the
		// index names that version (the next listing finds it unchanged).
		if i, ok := slices.BinarySearchFunc(objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) }); ok {
			objs[i].Attributes = a
		}
	}
	for _, o := range missing {
		if h, ok := read[o.Key]; ok {
			x.Heads = append(x.Heads, Head{Key: o.Key, Head: h})
		}
	}
	hashed, err := ix.digests.fetch(ctx, l.Tag, unhashed)
	if err != nil {
		return nil, err
	}
	for _, o := range unhashed {
		if dg, ok := hashed[o.Key]; ok {
			x.Digests = append(x.Digests, KeyDigest{Key: o.Key, Digest: dg})
		}
	}
	slices.SortFunc(x.Heads, func(a, b Head) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(x.Digests, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	x.Digests = slices.CompactFunc(x.Digests, func(a, b KeyDigest) bool { return a.Key == b.Key }) // a file of two skills
	ix.metrics.Digests.WithLabelValues(DigestCarried).Add(float64(carried))
	noteRevalidation(ctx, len(missing), len(unhashed), carried)
	x.Gen, x.Changed = rand.Uint64(), listed
	changed := prev == nil || !prev.same(x)
	if !changed {
		x.Gen, x.Changed = prev.Gen, prev.Changed
	}
	x.Took = ix.now().Sub(listed)
	ix.metrics.Loads.WithLabelValues(SourceListing).Inc()
	// Held even uncached: the next revalidation reuses its heads. A
	// listing that began before a drop may predate the change that caused
	// it: it answers the callers that came before the drop (Get loads
	// again for those after) but is neither kept nor published.
	ix.hold(l, x, ix.now(), false, since)
	if ix.cached() && ix.keeps(l, since) {
		ix.publish(ctx, l, x, changed)
		ix.unpublishIfDropped(ctx, l, since)
	}
	return x, nil
}

// publish stores x in the shared cache (only its stamp when its content is
// the one already there) and persists it when it changed. Both are best
// effort: a failure costs another replica a listing, never a call.
func (ix *Store) publish(ctx context.Context, l Layer, x *Index, changed bool) {
	b := ix.share(ctx, l, x, changed)
	if b == nil {
		return
	}
	if _, err := ix.bucket.Put(ctx, l.Object, bytes.NewReader(b), int64(len(b)), objstore.PutOptions{}); err != nil {
		ix.log.WarnContext(ctx, "skills: library index not persisted", "object", l.Object, "err", err)
	}
}

// share stores x's stamp in the shared cache, and x itself first when
// withIndex, returning its encoding (nil when not encoded).
func (ix *Store) share(ctx context.Context, l Layer, x *Index, withIndex bool) []byte {
	var b []byte
	if withIndex {
		var err error
		if b, err = encodeIndex(x, l); err != nil {
			ix.log.WarnContext(ctx, "skills: library index not published", "prefix", l.Prefix, "err", err)
			return nil
		}
		// Stored before the stamp that names it: a replica that sees the
		// stamp finds the index.
		if err := ix.shared.Store(ctx, map[string][]byte{IndexKey(l): b}, ix.cfg.HeadTTL); err != nil {
			ix.cacheLog.Failed(ctx, "storing a library index", err)
		}
	}
	st := encodeStamp(Stamp{Gen: x.Gen, Listed: x.Listed}, l)
	if err := ix.shared.Store(ctx, map[string][]byte{StampKey(l): st}, ix.cfg.HeadTTL); err != nil {
		ix.cacheLog.Failed(ctx, "storing a library index stamp", err)
	}
	return b
}
