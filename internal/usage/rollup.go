package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/usage/userset"
)

// maxRecordBytes bounds a roll-up read back: a day's record is bounded by
// the counters, sketches and top queries one library can have.
const maxRecordBytes = 16 << 20

// Rollup writes each library's finished days from the Store into the
// bucket, one object per library per day below the library's versions root
// (layout.VersionRoots.UsageDay: outside every mount, no change to any
// library), so history outlives Redis's retention; and deletes roll-ups
// older than the bucket's retention. Any replica may run it.
//
// A roll-up is the store's day as it was read, joined with the object
// already there: each count, query count and sketch the larger of the two
// (the store's counts only grow, so normally the store's), written only if
// the object is still the one read (If-None-Match, If-Match; retried).
// Counts flushed after a day was rolled up (a replica back from a Redis
// outage, a late clock) raise the day's generation in the store, and the
// next roll-up joins them in; replicas rolling up one day at once lose no
// update, and running again writes nothing.
type Rollup struct {
	bucket objstore.Bucket
	roots  layout.VersionRoots
	store  Store
	cfg    Config
}

// NewRollup returns the roll-up of store's days into bucket.
func NewRollup(bucket objstore.Bucket, roots layout.VersionRoots, store Store, cfg Config) *Rollup {
	return &Rollup{bucket: bucket, roots: roots, store: store, cfg: cfg}
}

// grace is how long after a day ends its roll-up waits for the replicas'
// last flushes of it.
func (r *Rollup) grace() time.Duration { return 5*r.cfg.FlushInterval + time.Minute }

// over reports whether day d's grace ended by now: its roll-up may run.
func (r *Rollup) over(d Day, now time.Time) bool { return now.Sub((d + 1).Start()) >= r.grace() }

// Run rolls up every library's day the store still holds that ended a
// grace before now and changed since it was last rolled up.
func (r *Rollup) Run(ctx context.Context, now time.Time) error {
	today := DayOf(now)
	var errs []error
	for d := today - Day(r.cfg.RedisRetentionDays) + 1; d < today && r.over(d, now); d++ {
		libs, err := r.store.libraries(ctx, d)
		if err == nil {
			libs, err = r.store.unrolled(ctx, d, libs)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, lib := range libs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.one(ctx, lib, d, today); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// maxRollupTries bounds the conditional writes of one roll-up that lose
// to other replicas' writes of the same object.
const maxRollupTries = 8

// one rolls up lib's day d and notes it rolled up; a roll-up writing the
// day's first object sweeps lib's expired roll-ups.
func (r *Rollup) one(ctx context.Context, lib LibraryRef, d, today Day) error {
	rec, err := r.store.day(ctx, lib, d, true)
	if err != nil || rec == nil {
		return err
	}
	key := r.roots.UsageDay(lib.Layout(), d.String())
	for range maxRollupTries {
		old, etag, err := r.get(ctx, lib, d)
		if err != nil {
			return err
		}
		put := objstore.PutOptions{IfNoneMatch: true}
		body := rec
		if old != nil {
			put = objstore.PutOptions{IfMatch: etag}
			if body = join(old, rec, r.cfg.TopQueries, r.cfg.QueryMinUsers); body == nil {
				return r.store.rolled(ctx, lib, d, rec.Gen)
			}
		}
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		_, err = r.bucket.Put(ctx, key, bytes.NewReader(raw), int64(len(raw)), put)
		if errors.Is(err, objstore.ErrPrecondition) {
			continue // another replica wrote it since: join with theirs
		}
		if err != nil {
			return fmt.Errorf("usage: roll-up of %s %s: %w", lib, d, err)
		}
		if err := r.store.rolled(ctx, lib, d, rec.Gen); err != nil || old != nil {
			return err
		}
		return r.sweep(ctx, lib, today)
	}
	return fmt.Errorf("usage: roll-up of %s %s: %d writes lost to other replicas'; retried at the next roll-up", lib, d, maxRollupTries)
}

// join returns old joined with rec: every count, query count and sketch
// the larger of the two, each query's users their union (up to k), the
// top queries kept; nil when that is old.
func join(old, rec *dayRecord, top, k int) *dayRecord {
	out := &dayRecord{Day: old.Day, Library: old.Library, Counts: maps.Clone(old.Counts), Users: maps.Clone(old.Users),
		Threads: maps.Clone(old.Threads), Queries: maps.Clone(old.Queries)}
	changed := false
	for f, n := range rec.Counts {
		if n > out.Counts[f] {
			out.Counts = setIn(out.Counts, f, n)
			changed = true
		}
	}
	for _, sks := range []struct {
		to   *map[string]sketch
		from map[string]sketch
	}{{&out.Users, rec.Users}, {&out.Threads, rec.Threads}} {
		for skill, sk := range sks.from {
			if sk.N > (*sks.to)[skill].N {
				*sks.to = setIn(*sks.to, skill, sk)
				changed = true
			}
		}
	}
	for q, row := range rec.Queries {
		o := out.Queries[q]
		j := queryRow{N: max(o.N, row.N), Empty: max(o.Empty, row.Empty), Led: max(o.Led, row.Led), Users: userset.Union(k, o.Users, row.Users)}
		if j.N != o.N || j.Empty != o.Empty || j.Led != o.Led || len(j.Users) != len(o.Users) {
			out.Queries = setIn(out.Queries, q, j)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if len(out.Queries) > top {
		rows := make(map[string]*queryRow, len(out.Queries))
		for q, row := range out.Queries {
			rows[q] = &row
		}
		trimQueries(rows, top)
		for q := range out.Queries {
			if rows[q] == nil {
				delete(out.Queries, q)
			}
		}
	}
	return out
}

// setIn sets m[k] = v, making m when it is nil.
func setIn[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[k] = v
	return m
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
	rec, _, err := r.get(ctx, lib, d)
	return rec, err
}

// get returns lib's rolled-up day d and its ETag; nil when there is none.
func (r *Rollup) get(ctx context.Context, lib LibraryRef, d Day) (*dayRecord, string, error) {
	rc, attrs, err := r.bucket.Get(ctx, r.roots.UsageDay(lib.Layout(), d.String()))
	if objstore.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, maxRecordBytes+1))
	if err != nil {
		return nil, "", err
	}
	if len(body) > maxRecordBytes {
		return nil, "", fmt.Errorf("usage: roll-up of %s %s is over %d bytes", lib, d, maxRecordBytes)
	}
	var rec dayRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, "", fmt.Errorf("usage: roll-up of %s %s: %w", lib, d, err)
	}
	if rec.Library != lib.String() {
		return nil, "", fmt.Errorf("usage: roll-up of %s %s names %q", lib, d, rec.Library)
	}
	return &rec, attrs.ETag, nil
}
