package versions

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

func (s Store) OrderPrefix(name string) string { return layout.VersionsOf(s.Root).Order(name) }

// MarkerKey is rec's marker: the time from the newest possible down, so
// keys sort newest first, ties by id as before.
func (s Store) MarkerKey(rec Record) string {
	id := strings.TrimPrefix(rec.ID, "sha256:")
	if rec.Proposal() {
		id = proposalMark + id // a proposal's record is under p/, not v/
	}
	return s.OrderPrefix(rec.Name) + fmt.Sprintf("%019d", math.MaxInt64-rec.Created.UnixNano()) + "-" + id
}

// proposalMark starts the id of a proposal's marker.
const proposalMark = "p"

// MarkerOf parses a marker key of name's: the key of its record and the
// record's creation.
func (s Store) MarkerOf(name, key string) (string, time.Time, bool) {
	t, h, ok := strings.Cut(strings.TrimPrefix(key, s.OrderPrefix(name)), "-")
	n, err := strconv.ParseInt(t, 10, 64)
	proposal := strings.HasPrefix(h, proposalMark)
	h = strings.TrimPrefix(h, proposalMark)
	if !ok || err != nil || len(t) != 19 || len(h) != 64 || HexOf(h) != h {
		return "", time.Time{}, false
	}
	rk := s.RecordKey(name, h)
	if proposal {
		rk = s.ProposalKey(name, h)
	}
	return rk, time.Unix(0, math.MaxInt64-n).UTC(), true
}

// Mark writes rec's marker; before its record, so a record is never
// stored unlisted.
func (s Store) Mark(ctx context.Context, rec Record) error {
	_, err := s.Bucket.Put(ctx, s.MarkerKey(rec), strings.NewReader(""), 0, objstore.PutOptions{})
	return err
}

// Order gives every record of name that has no marker one (records
// written before markers existed), then notes in the refs that all have
// one. It reads those records once, one at a time on mem (which it
// releases); a skill without records writes nothing.
func (s Store) Order(ctx context.Context, name string, mem *Reservation) error {
	have := map[string]bool{}
	if err := objstore.Walk(ctx, s.Bucket, s.OrderPrefix(name), func(o objstore.Object) error {
		if rk, _, ok := s.MarkerOf(name, o.Key); ok {
			have[rk] = true
		}
		return nil
	}); err != nil {
		return err
	}
	hexes, err := s.VersionHexes(ctx, name, "")
	if err != nil || len(hexes) == 0 {
		return err
	}
	for _, h := range hexes {
		if have[s.RecordKey(name, h)] {
			continue
		}
		rec, ok, err := s.ReadRecord(ctx, name, s.RecordKey(name, h), mem)
		if err != nil {
			return err
		}
		if ok {
			if err := s.Mark(ctx, rec); err != nil {
				return err
			}
		}
		mem.Release() // one record held at a time
	}
	_, err = s.UpdateRefs(ctx, name, func(r *Refs) error { r.Ordered = true; return nil })
	return err
}

// ReadRecord reads the record at key charged to mem; ok is false for one
// missing, or unreadable (named in the log), which listings skip.
func (s Store) ReadRecord(ctx context.Context, name, key string, mem *Reservation) (Record, bool, error) {
	rc, a, err := s.Bucket.Get(ctx, key)
	if objstore.IsNotFound(err) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	defer rc.Close()
	if a.Size > maxRecordBytes {
		s.Log.Warn("library: a version record over the size limit is skipped", "key", key, "bytes", a.Size, "limit", maxRecordBytes)
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
		s.Log.Warn("library: an unreadable version record is skipped", "key", key, "err", err)
		return Record{}, false, nil
	}
	if rec.Name != name || s.KeyOf(rec) != key {
		s.Log.Warn("library: a version record not matching its key is skipped", "key", key, "id", Clip(rec.ID))
		return Record{}, false, nil
	}
	return rec, true, nil
}

// Markers lists up to n markers of name after the marker after ("" from
// the newest), as their suffixes; more says the listing goes on.
func (s Store) Markers(ctx context.Context, name, after string, n int) (ms []string, more bool, err error) {
	opts := objstore.ListOptions{Prefix: s.OrderPrefix(name), MaxKeys: n}
	if after != "" {
		opts.StartAfter = opts.Prefix + after
	}
	lp, err := s.Bucket.List(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	for _, o := range lp.Objects {
		ms = append(ms, strings.TrimPrefix(o.Key, opts.Prefix))
	}
	return ms, lp.NextToken != "", nil
}
