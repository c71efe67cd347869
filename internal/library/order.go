package library

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// A skill's versions are listed newest first from storage, a page at a
// time: beside each record <root>skills/<name>/v/<hex>.json an empty marker
// <root>skills/<name>/t/<newest-first time>-<hex> is written before it, so
// the listing of t/ is the order of ListSkillVersions and a page reads only
// its own records. A marker whose record is missing or was created at
// another time (a publish of files already stored, which keeps the first
// record) is skipped. Records from before markers get theirs the first
// time their skill is listed (Refs.Ordered says it was done).

func (s store) orderPrefix(name string) string { return layout.VersionsOf(s.root).Order(name) }

// markerKey is rec's marker: the time from the newest possible down, so
// keys sort newest first, ties by id as before.
func (s store) markerKey(rec Record) string {
	id := strings.TrimPrefix(rec.ID, "sha256:")
	if rec.proposal() {
		id = proposalMark + id // a proposal's record is under p/, not v/
	}
	return s.orderPrefix(rec.Name) + fmt.Sprintf("%019d", math.MaxInt64-rec.Created.UnixNano()) + "-" + id
}

// proposalMark starts the id of a proposal's marker.
const proposalMark = "p"

// markerOf parses a marker key of name's: the key of its record and the
// record's creation.
func (s store) markerOf(name, key string) (string, time.Time, bool) {
	t, h, ok := strings.Cut(strings.TrimPrefix(key, s.orderPrefix(name)), "-")
	n, err := strconv.ParseInt(t, 10, 64)
	proposal := strings.HasPrefix(h, proposalMark)
	h = strings.TrimPrefix(h, proposalMark)
	if !ok || err != nil || len(t) != 19 || len(h) != 64 || hexOf(h) != h {
		return "", time.Time{}, false
	}
	rk := s.recordKey(name, h)
	if proposal {
		rk = s.proposalKey(name, h)
	}
	return rk, time.Unix(0, math.MaxInt64-n).UTC(), true
}

// mark writes rec's marker; before its record, so a record is never
// stored unlisted.
func (s store) mark(ctx context.Context, rec Record) error {
	_, err := s.bucket.Put(ctx, s.markerKey(rec), strings.NewReader(""), 0, objstore.PutOptions{})
	return err
}

// order gives every record of name that has no marker one (records
// written before markers existed), then notes in the refs that all have
// one. It reads those records once, one at a time on mem (which it
// releases); a skill without records writes nothing.
func (s store) order(ctx context.Context, name string, mem *Reservation) error {
	have := map[string]bool{}
	if err := objstore.Walk(ctx, s.bucket, s.orderPrefix(name), func(o objstore.Object) error {
		if rk, _, ok := s.markerOf(name, o.Key); ok {
			have[rk] = true
		}
		return nil
	}); err != nil {
		return err
	}
	hexes, err := s.versionHexes(ctx, name, "")
	if err != nil || len(hexes) == 0 {
		return err
	}
	for _, h := range hexes {
		if have[s.recordKey(name, h)] {
			continue
		}
		rec, ok, err := s.readRecord(ctx, name, s.recordKey(name, h), mem)
		if err != nil {
			return err
		}
		if ok {
			if err := s.mark(ctx, rec); err != nil {
				return err
			}
		}
		mem.Release() // one record held at a time
	}
	_, err = s.updateRefs(ctx, name, func(r *Refs) error { r.Ordered = true; return nil })
	return err
}

// readRecord reads the record at key charged to mem; ok is false for one
// missing, or unreadable (named in the log), which listings skip.
func (s store) readRecord(ctx context.Context, name, key string, mem *Reservation) (Record, bool, error) {
	rc, a, err := s.bucket.Get(ctx, key)
	if objstore.IsNotFound(err) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	defer rc.Close()
	if a.Size > maxRecordBytes {
		s.log.Warn("library: a version record over the size limit is skipped", "key", key, "bytes", a.Size, "limit", maxRecordBytes)
		return Record{}, false, nil
	}
	if err := mem.Take(ctx, a.Size); err != nil {
		return Record{}, false, err
	}
	var rec Record
	if err := json.NewDecoder(objstore.ContextReader(ctx, rc)).Decode(&rec); err != nil {
		if ctx.Err() != nil {
			return Record{}, false, ctx.Err()
		}
		s.log.Warn("library: an unreadable version record is skipped", "key", key, "err", err)
		return Record{}, false, nil
	}
	if rec.Name != name || s.keyOf(rec) != key {
		s.log.Warn("library: a version record not matching its key is skipped", "key", key, "id", clip(rec.ID))
		return Record{}, false, nil
	}
	return rec, true, nil
}

// markers lists up to n markers of name after the marker after ("" from
// the newest), as their suffixes; more says the listing goes on.
func (s store) markers(ctx context.Context, name, after string, n int) (ms []string, more bool, err error) {
	opts := objstore.ListOptions{Prefix: s.orderPrefix(name), MaxKeys: n}
	if after != "" {
		opts.StartAfter = opts.Prefix + after
	}
	lp, err := s.bucket.List(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	for _, o := range lp.Objects {
		ms = append(ms, strings.TrimPrefix(o.Key, opts.Prefix))
	}
	return ms, lp.NextToken != "", nil
}
