// Package provindex keeps each library's provenance index: one object per
// library (layout's Versions.Provenance) naming, by folder, the manifest
// digest and provenance of each live version, so a listing shows every
// skill's provenance with one read per library, none per skill.
//
// Reads are kept copies (keptcopy): a call waits only for a library's
// first read on a replica. Writes are a group commit per library: one
// conditional read-modify-write at a time per index on a replica, every
// change queued while it runs merged into the next one, so a burst of
// publishes into one library contends once per replica, not once per
// publish. A change whose write fails (the store down, or races lost to
// other replicas past the retries) is kept, merged with later ones, and
// written again in the background with backoff until it lands; on Close it
// is tried once more. What cannot be kept (past maxKept libraries waiting,
// or at Close) is counted (skillsvc_library_provenance_index_dropped_total)
// and logged, and put right by Repair when a listing next meets the skill.
package provindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/keptcopy"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Provenance is where a served copy comes from.
type Provenance struct {
	Version, Publisher, Approver string
	ScanVerdict                  string // versions.Record.ScanVerdict, or "unscanned"
	Signature, SignatureKey      string // a status; the verifying key's name, else id
	OutOfBand                    bool   // no version: uploaded to the bucket directly
}

// Entry is a live version's provenance as listings show it: about the
// live copy whose manifest digest is Digest (a copy of other files was
// uploaded out of band).
type Entry struct {
	Digest string `json:"digest"`
	Provenance
}

type file struct {
	Skills map[string]Entry `json:"skills"` // by folder name
}

// A replica's copy of an index is fresh for copyFresh; past it the next
// read answers from the copy and reads the index again in the background,
// bounded by readTime. maxCopies bounds the libraries a replica keeps.
const (
	copyFresh = 10 * time.Second
	readTime  = 10 * time.Second
	maxCopies = 1 << 14
)

// Writes: each write is one read-modify-write tried up to conditionalTries
// times against other replicas' writes, within writeTime. A write that
// fails is tried again after retryBase, doubling up to retryMax, until it
// lands; at most maxKept libraries wait to be tried again (each holding
// its merged changes: at most one entry per skill of the library).
const (
	conditionalTries = 8
	conditionalBase  = 20 * time.Millisecond
	writeTime        = 30 * time.Second
	retryBase        = time.Second
	retryMax         = time.Minute
	maxKept          = 4096
)

// ErrKept is what Set returns when its change's write failed: the change
// is kept and written again in the background.
var ErrKept = errors.New("provindex: the index write failed; the change is kept and retried in the background")

// Index is the provenance indexes of a bucket's libraries, by key.
type Index struct {
	bucket objstore.Bucket
	log    *slog.Logger
	copies *keptcopy.Copies[map[string]Entry]

	writes  *prometheus.CounterVec
	dropped prometheus.Counter

	mu     sync.Mutex
	keys   map[string]*pending // indexes with changes queued, being written or kept
	kept   int                 // keys waiting for a retry
	closed bool
	wg     sync.WaitGroup
	repair repairs
}

// pending is one index's changes on this replica.
type pending struct {
	next     map[string]Entry // queued for the next write, merged
	waiters  []chan error     // Set calls whose change next holds
	writing  bool             // one writer at a time
	failures int              // writes failed in a row
	retry    *time.Timer      // the kept changes' next try
}

// Options are an Index's optional parts.
type Options struct {
	Now        func() time.Time // the copies' clock (time.Now when nil)
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// New returns the indexes of bucket.
func New(bucket objstore.Bucket, o Options) *Index {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	x := &Index{bucket: bucket, log: o.Log, keys: map[string]*pending{},
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_library_provenance_index_writes_total",
			Help: "Writes of libraries' provenance indexes (each the batch of changes queued on this replica), by result: ok, or kept (failed; retried in the background)."}, []string{"result"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "skillsvc_library_provenance_index_dropped_total",
			Help: "Changes of provenance indexes given up (past the libraries kept for a retry, at shutdown, or refused by the store as invalid): their skills show out-of-band provenance until a listing repairs them or they change."}),
	}
	for _, r := range []string{"ok", "kept"} {
		x.writes.WithLabelValues(r)
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(x.writes, x.dropped)
	}
	x.copies = keptcopy.New(copyFresh, readTime, maxCopies, x.read, o.Now, o.Log)
	x.repair.init()
	return x
}

// Get is the index at key: folder name → entry. The first read of a key
// on a replica waits for it; later ones answer from the copy, read again
// in the background once stale. The map is shared: not to be changed.
func (x *Index) Get(ctx context.Context, key string) (map[string]Entry, error) {
	return x.copies.Get(ctx, key)
}

func (x *Index) read(ctx context.Context, key string) (map[string]Entry, error) {
	var f file
	_, err := (versions.Store{Bucket: x.bucket, Log: x.log}).GetJSON(ctx, key, &f)
	if err != nil && !objstore.IsNotFound(err) {
		return nil, err
	}
	return f.Skills, nil
}

// Set records e as folder's entry in the index at key and waits for the
// write that carries it (with every change queued beside it). It returns
// nil once written; ErrKept (wrapping the store's error) when the write
// failed and the change is kept for a background retry; ctx's error when
// the caller stops waiting (the change is written all the same).
func (x *Index) Set(ctx context.Context, key, folder string, e Entry) error {
	done := make(chan error, 1)
	x.mu.Lock()
	p := x.keys[key]
	if p == nil {
		p = &pending{next: map[string]Entry{}}
		x.keys[key] = p
	}
	p.next[folder] = e // a later change of a folder replaces an earlier one
	p.waiters = append(p.waiters, done)
	x.start(key, p)
	x.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start runs key's writer unless one runs (x.mu held); a retry waiting
// runs now, with the new change.
func (x *Index) start(key string, p *pending) {
	if p.writing {
		return
	}
	if p.retry != nil {
		p.retry.Stop()
		p.retry = nil
		x.kept--
	}
	p.writing = true
	x.wg.Go(func() { x.run(key, p) })
}

// run writes key's queued changes, batch after batch, until none are
// queued or a write fails.
func (x *Index) run(key string, p *pending) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for len(p.next) > 0 {
		batch, waiters := p.next, p.waiters
		p.next, p.waiters = map[string]Entry{}, nil
		x.mu.Unlock()
		idx, err := x.write(key, batch)
		x.mu.Lock()
		if err == nil {
			x.writes.WithLabelValues("ok").Inc()
			p.failures = 0
			x.copies.Set(key, idx)
			tell(waiters, nil)
			continue
		}
		x.writes.WithLabelValues("kept").Inc()
		for f, e := range batch { // under the changes queued since: newer
			if _, ok := p.next[f]; !ok {
				p.next[f] = e
			}
		}
		p.failures++
		if len(p.waiters) > 0 {
			// Changes queued during the failed write: their callers wait
			// for a write that carries them, now.
			tell(waiters, fmt.Errorf("%w: %w", ErrKept, err))
			continue
		}
		if !x.keep(key, p, err) {
			tell(waiters, err)
			return
		}
		tell(waiters, fmt.Errorf("%w: %w", ErrKept, err))
		p.writing = false
		return
	}
	p.writing = false
	if p.retry == nil {
		delete(x.keys, key)
	}
}

// keep schedules p's changes to be written again after a backoff (x.mu
// held), or gives them up: past maxKept, once closed, or when the store
// refused them as invalid (too large), which no retry mends.
func (x *Index) keep(key string, p *pending, err error) bool {
	if x.closed || x.kept >= maxKept || errkind.Of(err) == errkind.InvalidArgument {
		x.dropped.Add(float64(len(p.next)))
		x.log.Error("library: provenance index changes given up; their skills show out-of-band provenance until a listing repairs them or they change",
			"key", key, "skills", len(p.next), "closed", x.closed, "kept", x.kept, "err", err)
		delete(x.keys, key)
		return false
	}
	delay := min(retryBase<<min(p.failures-1, 16), retryMax)
	x.log.Warn("library: provenance index not written; the changes are kept and written again", "key", key, "skills", len(p.next), "failures", p.failures, "in", delay, "err", err)
	x.kept++
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		if p.retry == t && !x.closed {
			x.start(key, p)
		}
	})
	p.retry = t
	return true
}

func tell(waiters []chan error, err error) {
	for _, w := range waiters {
		w <- err
	}
}

// write applies batch to the index at key by a conditional
// read-modify-write, and returns the index written.
func (x *Index) write(key string, batch map[string]Entry) (map[string]Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTime)
	defer cancel()
	s := versions.Store{Bucket: x.bucket, Log: x.log}
	var out map[string]Entry
	err := objstore.RetryConditional(ctx, conditionalTries, conditionalBase, func() error {
		var f file
		etag, err := s.GetJSON(ctx, key, &f)
		if err != nil && !objstore.IsNotFound(err) {
			return err
		}
		if f.Skills == nil {
			f.Skills = make(map[string]Entry, len(batch))
		}
		maps.Copy(f.Skills, batch)
		if err := s.PutJSON(ctx, key, f, objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""}); err != nil {
			return err
		}
		out = f.Skills
		return nil
	})
	return out, err
}

// Close tries every kept change once more, waits for the writes under way
// and stops the repairs; what still fails is given up, counted and
// logged. A Set after Close writes, and is given up if that fails.
func (x *Index) Close() {
	x.mu.Lock()
	x.closed = true
	for key, p := range x.keys {
		if p.retry != nil {
			x.start(key, p)
		}
	}
	x.mu.Unlock()
	x.repair.close()
	x.wg.Wait()
	x.copies.Wait()
}

// Wait waits for the background work under way: writes, repairs and
// reads of copies (tests).
func (x *Index) Wait() {
	x.wg.Wait()
	x.copies.Wait()
}
