package snapshots

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// Objects, under the user's versions root (Config.Keys):
//
//	pins/{thread}.json         → which snapshot, created, expires
//	snapshots/{sha256}.json    → the frozen indexes, named by their content,
//	                             so threads pinned to one state share it
//	blobs/sha256/{sha256}      → a user file's bytes (the shared library's
//	                             and a team's are in their roots' blobs/)

// Config is what the store is told of pins: the flags (skills.PinConfig)
// and the bounds of the catalog it pins for.
type Config struct {
	// Retention is how long a thread keeps the library it pinned.
	Retention time.Duration
	// MaxBytes bounds the bytes of skill files one pin copies.
	MaxBytes int64
	// GCGrace is --library.gc-grace: a pin writes an old blob it reuses
	// again first (blobs.Store.Fresh).
	GCGrace time.Duration
	// Keys renders the keys of pins and snapshots.
	Keys Keys
	// Concurrency bounds the copies in flight (--skills.concurrency).
	Concurrency int
	// MaxSnapshotBytes bounds a snapshot object read.
	MaxSnapshotBytes int64
}

// Keys renders where a user's pins and snapshots are stored, under the
// user's versions root (the bucket layout's VersionRoots).
type Keys interface {
	Pins(user string) string          // the prefix of user's pins
	Pin(user, thread string) string   // the pin of user's thread
	Snapshots(user string) string     // the prefix of user's snapshots
	Snapshot(user, sum string) string // the snapshot sum of user
}

// Store writes and reads pins and snapshots, and sweeps them.
type Store struct {
	bucket objstore.Bucket
	cfg    Config
	files  *libindex.Files // live files, read through the file cache
	log    *slog.Logger
	blobs  *blobs.Store // the spaces' blobs, for their writes

	byThread *cache.Shelf[*pinRecord] // by user \x00 thread \x00 teams
	flight   singleflight.Group

	sweptMu sync.Mutex
	swept   map[string]time.Time // user → when this replica last swept snapshots

	// Now is the clock pins expire by.
	Now func() time.Time
}

// snapshotSweepEvery is how often, at most, one replica sweeps a user's
// snapshots when a new thread of the user pins (which reads every live pin
// of the user); expired pins go on every new pin.
const snapshotSweepEvery = time.Hour

// maxSweptUsers bounds the users whose last sweep a replica remembers; past
// it the memory is cleared, which costs at most one extra sweep per user.
const maxSweptUsers = 1 << 14

// HeldPin is the kind pins hold on the budget.
const HeldPin = "pin"

// pinSlotBytes: one entry of a map from a string to a pointer, as the
// held budget counts it (skills' slotBytes).
const pinSlotBytes = 48

// Timeout bounds one pin's resolution (a copy of the library included),
// which concurrent callers of the thread share, and one shared read of a
// snapshot.
const Timeout = 5 * time.Minute

// pinCopyBytes bounds the file bytes a pin holds in memory at once while it
// copies.
const pinCopyBytes = 64 << 20

// pinRecord is the pin object of a thread.
type pinRecord struct {
	Snapshot string    `json:"snapshot"` // the snapshot's sha256
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
	// Teams the thread was pinned with (mounts.Identity.Teams): a call
	// with other teams pins anew, so no caller reads a team's snapshot it
	// is no member of.
	Teams string `json:"teams,omitempty"`
	etag  string
}

// New returns the store of pins and snapshots in b; files reads the live
// files a pin copies, held bounds the pins it keeps in process.
func New(b objstore.Bucket, cfg Config, files *libindex.Files, held *cache.Held, log *slog.Logger) *Store {
	return &Store{
		bucket: b, cfg: cfg, files: files, log: log, Now: time.Now, blobs: blobs.New(b, cfg.MaxBytes, cfg.GCGrace),
		byThread: cache.NewShelf[*pinRecord](held, HeldPin),
	}
}

// Key names the snapshot sum of user.
func (s *Store) Key(user, sum string) string { return s.cfg.Keys.Snapshot(user, sum) }

// Source is what a pin asks of the catalog whose view it freezes.
type Source interface {
	// Libraries lists the libraries of the caller's view as the catalog
	// serves them now, in a view's order (the user's, each team's in ID
	// order, the shared one): what a new pin freezes.
	Libraries(ctx context.Context, id mounts.Caller) ([]Listed, error)
	// Holds reports whether the catalog holds the snapshot at key built
	// (so it is there).
	Holds(key string) bool
}

// threadKey names the caller's thread and teams in byThread.
func threadKey(id mounts.Caller) string {
	return id.User() + "\x00" + id.Thread() + "\x00" + id.Identity().Teams
}

// Pinned returns the sha256 of the snapshot the caller's thread is pinned
// to, pinning the library src lists on the thread's first pinned call or
// after its pin expired.
func (s *Store) Pinned(ctx context.Context, id mounts.Caller, src Source) (string, error) {
	k := threadKey(id)
	rec, ok := s.byThread.Get(k)
	if !ok || !s.Now().Before(rec.Expires) {
		ch := s.flight.DoChan("pin\x00"+k, panics.GuardValue(func() (any, error) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
			defer cancel()
			return s.resolve(rctx, id, src)
		}))
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case res := <-ch:
			if res.Err != nil {
				return "", res.Err
			}
			rec = res.Val.(*pinRecord)
		}
		s.byThread.Add(k, rec, int64(pinSlotBytes+len(k)+len(rec.Snapshot)+len(rec.etag)+64))
	}
	return rec.Snapshot, nil
}

// Forget drops this replica's copy of the caller's pin: its snapshot is
// gone (ErrGone), and resolving again pins the library anew.
func (s *Store) Forget(id mounts.Caller) { s.byThread.Remove(threadKey(id)) }

// resolve reads the thread's pin, or pins the library now when there is
// none or it expired. Of two replicas pinning one thread at once, one
// writes the pin and the other reads it.
func (s *Store) resolve(ctx context.Context, id mounts.Caller, src Source) (*pinRecord, error) {
	key := s.cfg.Keys.Pin(id.User(), id.Thread())
	for attempt := 0; ; attempt++ {
		old, err := s.readPin(ctx, key)
		switch {
		case err != nil:
			return nil, err
		case old != nil && s.Now().Before(old.Expires) && old.Teams == id.Identity().Teams && s.snapshotExists(ctx, id.User(), old.Snapshot, src):
			return old, nil
		case attempt == 2:
			return nil, fmt.Errorf("%w: the thread's pin changed while it was written; try again", errkind.Aborted)
		}
		sum, err := s.freeze(ctx, id, src)
		if err != nil {
			return nil, err
		}
		now := s.Now().UTC()
		rec := &pinRecord{Snapshot: sum, Created: now, Expires: now.Add(s.cfg.Retention), Teams: id.Identity().Teams}
		data, _ := json.Marshal(rec)
		opts := objstore.PutOptions{IfNoneMatch: true}
		if old != nil {
			opts = objstore.PutOptions{IfMatch: old.etag} // replace the expired pin
		}
		a, err := s.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), opts)
		switch {
		case errors.Is(err, objstore.ErrPrecondition), errors.Is(err, objstore.ErrConflict):
			continue // another call pinned the thread first: read its pin
		case err != nil:
			return nil, err
		}
		rec.etag = a.ETag
		if old == nil {
			// A new thread: the user's expired pins go now, so threads that
			// never come back leave nothing behind.
			// The snapshots no pin refers to go too, at most once per
			// snapshotSweepEvery per user on this replica.
			if _, err := s.sweep(ctx, id.User(), s.sweepSnapshotsNow(id.User()), false); err != nil && ctx.Err() == nil {
				s.log.Warn("skills: sweeping expired pins failed", "user", id.User(), "err", err)
			}
		}
		return rec, nil
	}
}

// sweepSnapshotsNow reports whether a new pin of user sweeps the user's
// snapshots too, and if so notes that it does.
func (s *Store) sweepSnapshotsNow(user string) bool {
	s.sweptMu.Lock()
	defer s.sweptMu.Unlock()
	now := s.Now()
	if last, ok := s.swept[user]; ok && now.Sub(last) < snapshotSweepEvery {
		return false
	}
	if s.swept == nil || len(s.swept) >= maxSweptUsers {
		s.swept = map[string]time.Time{}
	}
	s.swept[user] = now
	return true
}

// snapshotExists reports whether the snapshot a pin names is there: a pin
// whose snapshot was swept is replaced as an expired one is.
func (s *Store) snapshotExists(ctx context.Context, user, sum string, src Source) bool {
	if src.Holds(s.Key(user, sum)) {
		return true
	}
	_, err := s.bucket.Stat(ctx, s.Key(user, sum))
	return !objstore.IsNotFound(err)
}

// maxPinBytes bounds a pin object.
const maxPinBytes = 4 << 10

// readPin returns the pin at key, nil when there is none.
func (s *Store) readPin(ctx context.Context, key string) (*pinRecord, error) {
	data, a, err := s.readBounded(ctx, key, maxPinBytes)
	if objstore.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec pinRecord
	if err := json.Unmarshal(data, &rec); err != nil || !blobs.Digest(rec.Snapshot).Valid() {
		// A damaged pin is replaced as an expired one is.
		s.log.Warn("skills: a thread's pin is malformed; pinning again", "key", key)
		return &pinRecord{etag: a.ETag}, nil
	}
	rec.etag = a.ETag
	return &rec, nil
}

// Sweep counts what a sweep deleted (or, dry, would delete).
type Sweep struct {
	Pins, Snapshots int
}

// Sweep deletes user's expired pins and the snapshots no pin refers to
// (older than the retention), or with dry only counts them. A new pinned
// thread of the user does so too (the snapshots at most once an hour per
// replica), and so does library garbage collection.
func (s *Store) Sweep(ctx context.Context, user string, dry bool) (Sweep, error) {
	return s.sweep(ctx, user, true, dry)
}

// sweep deletes user's pins that expired (a pin expires the retention
// after it was written, so the listing says which to read), and with
// snapshots the snapshots no live pin refers to that are older than the
// retention (which reads each live pin). A dry sweep only counts. Blobs
// stay: skill versions share the blob spaces, and collecting them needs
// both (library.Publisher.CollectGarbage).
func (s *Store) sweep(ctx context.Context, user string, snapshots, dry bool) (Sweep, error) {
	now := s.Now()
	live := map[string]bool{}
	var n Sweep
	del := func(key string) error {
		if dry {
			return nil
		}
		return s.bucket.Delete(ctx, key)
	}
	err := objstore.Walk(ctx, s.bucket, s.cfg.Keys.Pins(user), func(o objstore.Object) error {
		old := now.Sub(o.ModTime) >= s.cfg.Retention
		if !old && !snapshots {
			return nil
		}
		rec, err := s.readPin(ctx, o.Key)
		if err != nil || rec == nil {
			return err
		}
		if old && !now.Before(rec.Expires) {
			n.Pins++
			return del(o.Key)
		}
		live[rec.Snapshot] = true
		return nil
	})
	if err != nil || !snapshots {
		return n, err
	}
	prefix := s.cfg.Keys.Snapshots(user)
	err = objstore.Walk(ctx, s.bucket, prefix, func(o objstore.Object) error {
		sum := strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), ".json")
		if live[sum] || now.Sub(o.ModTime) < s.cfg.Retention {
			return nil
		}
		n.Snapshots++
		return del(o.Key)
	})
	return n, err
}

// Blobs calls fn with every blob of space a snapshot refers to: user's
// snapshots, or with user "" every user's (the shared library's and a
// team's space: a snapshot freezes the caller's teams and the shared
// library too, and the users are found by listing the bucket's first
// level). A snapshot that cannot be read is an error, never skipped: its
// blobs would be lost. Pins are not consulted: a snapshot no pin refers to
// keeps its blobs until it is swept.
func (s *Store) Blobs(ctx context.Context, user, space string, fn func(blobs.Digest) error) error {
	if user != "" {
		return s.snapshotBlobs(ctx, user, space, fn)
	}
	opts := objstore.ListOptions{Delimiter: "/"}
	for {
		page, err := s.bucket.List(ctx, opts)
		if err != nil {
			return err
		}
		for _, cp := range page.CommonPrefixes {
			if u := strings.TrimSuffix(cp, "/"); mounts.ValidateID("user", u) == nil {
				if err := s.snapshotBlobs(ctx, u, space, fn); err != nil {
					return err
				}
			}
		}
		if page.NextToken == "" {
			return nil
		}
		opts.Token = page.NextToken
	}
}

// snapshotBlobs calls fn with the blobs of space user's snapshots refer to.
func (s *Store) snapshotBlobs(ctx context.Context, user, space string, fn func(blobs.Digest) error) error {
	return objstore.Walk(ctx, s.bucket, s.cfg.Keys.Snapshots(user), func(o objstore.Object) error {
		data, _, err := s.readBounded(ctx, o.Key, s.cfg.MaxSnapshotBytes)
		if objstore.IsNotFound(err) {
			return nil // swept since listed
		}
		if err != nil {
			return err
		}
		var doc Snapshot
		if err := json.Unmarshal(data, &doc); err != nil || !doc.valid(user) {
			return fmt.Errorf("%w: %s", blobs.ErrCorrupt, o.Key)
		}
		for _, fl := range doc.Layers {
			if fl.Space != space {
				continue
			}
			for _, f := range fl.Files {
				if err := fn(blobs.Digest(f.Blob)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
