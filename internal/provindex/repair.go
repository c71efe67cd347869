package provindex

import (
	"context"
	"sync"
)

// Repairs: a listing that meets a live copy its library's index does not
// name (its change given up, or overwritten by a stale retry) asks for the
// entry to be looked up and written, off the call. The call itself only
// notes the ask in memory; the lookups run one at a time in the
// background, each (index, folder, digest) once per replica while
// remembered, at most maxRepairQueue waiting, the asks of one index
// waiting made with one read of it.
const (
	maxRepairQueue = 1024
	maxRepairSeen  = 1 << 16
)

// Look finds the entry of a live copy: ok false when no version holds it
// (uploaded out of band: nothing to write).
type Look func(ctx context.Context) (e Entry, ok bool, err error)

type repairID struct{ key, folder, digest string }

type repairJob struct {
	repairID
	look Look
}

type repairs struct {
	mu      sync.Mutex
	seen    map[repairID]struct{}
	queue   []repairJob
	running bool
	closed  bool
}

func (r *repairs) init() { r.seen = map[repairID]struct{}{} }

func (r *repairs) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.queue = nil
}

// Repair asks for the entry of folder's live copy of digest in the index
// at key to be looked up with look and written, unless the index names it
// by then. No storage request on the call: the ask is noted in memory and
// made in the background, once per (key, folder, digest) while this
// replica remembers it (a lookup that failed or found a version is asked
// again by the next listing that meets the copy unnamed).
func (x *Index) Repair(key, folder, digest string, look Look) {
	r := &x.repair
	id := repairID{key: key, folder: folder, digest: digest}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[id]; ok || r.closed || len(r.queue) >= maxRepairQueue {
		return
	}
	if len(r.seen) >= maxRepairSeen {
		clear(r.seen)
	}
	r.seen[id] = struct{}{}
	r.queue = append(r.queue, repairJob{id, look})
	if !r.running {
		r.running = true
		x.wg.Go(x.repairAll)
	}
}

// repairAll runs the repairs asked for until none wait, every ask of one
// index waiting with one read of it: a library whose skills were all
// copied into the bucket has them met, and asked for, together.
func (x *Index) repairAll() {
	r := &x.repair
	for {
		r.mu.Lock()
		if len(r.queue) == 0 || r.closed {
			r.running = false
			r.mu.Unlock()
			return
		}
		key := r.queue[0].key
		var jobs []repairJob
		rest := r.queue[:0]
		for _, j := range r.queue {
			if j.key == key {
				jobs = append(jobs, j)
			} else {
				rest = append(rest, j)
			}
		}
		clear(r.queue[len(rest):])
		r.queue = rest
		r.mu.Unlock()
		again := x.repairIndex(key, jobs)
		r.mu.Lock()
		for _, id := range again {
			delete(r.seen, id)
		}
		r.mu.Unlock()
	}
}

// repairIndex reads the index at key once and, for each job whose copy it
// still does not name, looks the entry up and writes it. It returns the
// jobs that may be asked for again (a read or lookup that failed, or an
// entry named or written: should it go missing again, a listing asks
// again).
func (x *Index) repairIndex(key string, jobs []repairJob) (again []repairID) {
	rctx, cancel := context.WithTimeout(context.Background(), writeTime)
	idx, err := x.read(rctx, key)
	cancel()
	if err != nil {
		x.log.Warn("library: provenance index not read for a repair", "key", key, "err", err)
		for _, j := range jobs {
			again = append(again, j.repairID)
		}
		return again
	}
	x.copies.Set(key, idx) // what a background read would have found
	for _, j := range jobs {
		if !x.repairOne(j, idx) {
			again = append(again, j.repairID)
		}
	}
	return again
}

// repairOne looks up and writes the entry of j's copy when idx, the index
// as just read, does not name it; false when the copy may be asked for
// again.
func (x *Index) repairOne(j repairJob, idx map[string]Entry) bool {
	if e, ok := idx[j.folder]; ok && e.Digest == j.digest {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTime)
	defer cancel()
	e, ok, err := j.look(ctx)
	if err != nil {
		x.log.Warn("library: provenance not looked up for a repair", "key", j.key, "skill", j.folder, "err", err)
		return false
	}
	if !ok {
		return true // out of band: nothing to write, nothing to ask again
	}
	x.log.Info("library: provenance index repaired: it did not name a live version", "key", j.key, "skill", j.folder, "digest", j.digest)
	_ = x.Set(ctx, j.key, j.folder, e) // kept and retried when it fails
	return false
}
