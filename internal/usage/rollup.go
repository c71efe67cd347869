package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// maxRecordBytes bounds a roll-up read back: a day's record is bounded by
// the counters, sketches and top queries one library can have.
const maxRecordBytes = 16 << 20

// Rollup writes each library's finished days from the Store into the
// bucket, one object per library per day below the library's versions root
// (layout.VersionRoots.UsageDay: outside every mount, no change to any
// library), so history outlives Redis's retention; and deletes roll-ups
// older than the bucket's retention. Any replica may run it: a day's
// object is written only if absent (a conditional write), so the replicas'
// roll-ups of one day write it once, and running again writes nothing.
type Rollup struct {
	bucket objstore.Bucket
	roots  layout.VersionRoots
	store  Store
	cfg    Config

	mu   sync.Mutex
	done map[Day]bool // days this replica has rolled up completely
}

// NewRollup returns the roll-up of store's days into bucket.
func NewRollup(bucket objstore.Bucket, roots layout.VersionRoots, store Store, cfg Config) *Rollup {
	return &Rollup{bucket: bucket, roots: roots, store: store, cfg: cfg, done: make(map[Day]bool)}
}

// grace is how long after a day ends its roll-up waits for the replicas'
// last flushes of it.
func (r *Rollup) grace() time.Duration { return 5*r.cfg.FlushInterval + time.Minute }

// Run rolls up every day the store still holds that ended a grace before
// now.
func (r *Rollup) Run(ctx context.Context, now time.Time) error {
	today := DayOf(now)
	oldest := today - Day(r.cfg.RedisRetentionDays) + 1
	r.mu.Lock()
	for d := range r.done {
		if d < oldest {
			delete(r.done, d)
		}
	}
	r.mu.Unlock()
	var errs []error
	for d := oldest; d < today; d++ {
		r.mu.Lock()
		done := r.done[d]
		r.mu.Unlock()
		if done || now.Sub((d+1).Start()) < r.grace() {
			continue
		}
		libs, err := r.store.libraries(ctx, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ok := true
		for _, lib := range libs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.one(ctx, lib, d, today); err != nil {
				errs = append(errs, err)
				ok = false
			}
		}
		if ok {
			r.mu.Lock()
			r.done[d] = true
			r.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// one rolls up lib's day d, unless it is already, and sweeps lib's
// expired roll-ups.
func (r *Rollup) one(ctx context.Context, lib LibraryRef, d, today Day) error {
	key := r.roots.UsageDay(lib.Layout(), d.String())
	if _, err := r.bucket.Stat(ctx, key); err == nil {
		return nil
	} else if !objstore.IsNotFound(err) {
		return fmt.Errorf("usage: roll-up of %s %s: %w", lib, d, err)
	}
	rec, err := r.store.day(ctx, lib, d, true)
	if err != nil || rec == nil {
		return err
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := r.bucket.Put(ctx, key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{IfNoneMatch: true}); err != nil && !errors.Is(err, objstore.ErrPrecondition) {
		return fmt.Errorf("usage: roll-up of %s %s: %w", lib, d, err)
	}
	return r.sweep(ctx, lib, today)
}

// sweep deletes lib's roll-ups past the bucket's retention.
func (r *Rollup) sweep(ctx context.Context, lib LibraryRef, today Day) error {
	l := lib.Layout()
	oldest := today - Day(r.cfg.BucketRetentionDays)
	var old []string
	err := objstore.Walk(ctx, r.bucket, r.roots.Usage(l), func(o objstore.Object) error {
		s, ok := r.roots.UsageDayOf(l, o.Key)
		if !ok {
			return nil
		}
		if d, err := ParseDay(s); err == nil && d < oldest {
			old = append(old, o.Key)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("usage: sweeping %s: %w", lib, err)
	}
	for _, k := range old {
		if err := r.bucket.Delete(ctx, k); err != nil {
			return fmt.Errorf("usage: sweeping %s: %w", lib, err)
		}
	}
	return nil
}

// read returns lib's rolled-up day d; nil when there is none.
func (r *Rollup) read(ctx context.Context, lib LibraryRef, d Day) (*dayRecord, error) {
	rc, _, err := r.bucket.Get(ctx, r.roots.UsageDay(lib.Layout(), d.String()))
	if objstore.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, maxRecordBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxRecordBytes {
		return nil, fmt.Errorf("usage: roll-up of %s %s is over %d bytes", lib, d, maxRecordBytes)
	}
	var rec dayRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, fmt.Errorf("usage: roll-up of %s %s: %w", lib, d, err)
	}
	if rec.Library != lib.String() {
		return nil, fmt.Errorf("usage: roll-up of %s %s names %q", lib, d, rec.Library)
	}
	return &rec, nil
}
