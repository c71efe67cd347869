package skills

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// A pinned thread keeps the library it started with. Its first pinned call
// freezes every library index of the caller's view (the user's, each of
// the caller's teams', the shared one, as the catalog serves them, with
// the team and shared libraries' protected names) into a snapshot, copying
// every file into its library's blob space, and records a pin for the
// thread (and the teams it was pinned with); every later
// pinned call of the thread is served by a view built from the snapshot
// with the catalog's own layer and overlay code, each file resolving to its
// blob instead of the live key. Changes to the library, through the API or
// straight in the bucket, do not reach it until the pin expires.
//
// Objects, under the user's versions root (VersionRoots):
//
//	pins/{thread}.json         → which snapshot, created, expires
//	snapshots/{sha256}.json    → the frozen indexes, named by their content,
//	                             so threads pinned to one state share it
//	blobs/sha256/{sha256}      → a user file's bytes (the shared library's
//	                             and a team's are in their roots' blobs/)
//
// Only calls that ask for it (pinAsked) consult a pin: an unpinned call
// costs nothing more than before.
type pins struct {
	bucket objstore.Bucket
	views  *views
	cfg    PinConfig
	asked  func(context.Context) bool
	log    *slog.Logger
	now    func() time.Time
	blobs  *blobs.Store // the spaces' blobs, for their writes

	byThread *cache.Shelf[*pinRecord]  // by user \x00 thread \x00 teams
	frozen   *cache.Shelf[*frozenView] // by snapshot key
	flight   singleflight.Group

	sweptMu sync.Mutex
	swept   map[string]time.Time // user → when this replica last swept snapshots
}

// snapshotSweepEvery is how often, at most, one replica sweeps a user's
// snapshots when a new thread of the user pins (which reads every live pin
// of the user); expired pins go on every new pin.
const snapshotSweepEvery = time.Hour

// maxSweptUsers bounds the users whose last sweep a replica remembers; past
// it the memory is cleared, which costs at most one extra sweep per user.
const maxSweptUsers = 1 << 14

// Kinds pins hold on the budget.
const (
	heldPin    = "pin"
	heldFrozen = "pinned_view"
)

// pinTimeout bounds one pin's resolution (a copy of the library included),
// which concurrent callers of the thread share.
const pinTimeout = 5 * time.Minute

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

// snapshotDoc is a snapshot object: the frozen indexes of every layer of
// the caller's view. Its content names it, so the teams, being in it, are
// part of its identity.
type snapshotDoc struct {
	Version int      `json:"version"`
	User    string   `json:"user"`
	Teams   []string `json:"teams,omitempty"`
	// Layers: the user's, each team's in ID order, the shared one. A
	// version 1 snapshot has the user's and the shared one, unnamed.
	Layers []frozenLayer `json:"layers"`
}

const snapshotVersion = 2

type frozenLayer struct {
	Name   string       `json:"name,omitempty"` // LayerUser, LayerTeam+ID or LayerShared
	Prefix string       `json:"prefix"`         // the library's, as listed
	Space  string       `json:"space"`          // its blob space
	Files  []frozenFile `json:"files"`          // by path
	// Protected are the names the library protected when pinned;
	// ProtectAll says its list was no list (readSide): every skill.
	Protected  []string `json:"protected,omitempty"`
	ProtectAll bool     `json:"protect_all,omitempty"`
	// Scopes are the scopes the library defined when pinned (scope.go).
	Scopes []ScopeDef `json:"scopes,omitempty"`
}

// frozenFile is one addressable object of a library as listed, and the
// blob holding its bytes.
type frozenFile struct {
	Rel      string    `json:"rel"`
	Size     int64     `json:"size"`
	ETag     string    `json:"etag"`
	ModTime  time.Time `json:"mod_time"`
	Blob     string    `json:"blob"`      // sha256 of the bytes
	BlobETag string    `json:"blob_etag"` // the blob object's
	// Hashed: the index held the file's digest (a skill within the MCP
	// extension's limits), so its manifest lists it.
	Hashed  bool   `json:"hashed,omitempty"`
	Head    []byte `json:"head,omitempty"` // a SKILL.md's frontmatter head
	gone    bool   // deleted since listed: left out
	rewrote bool   // its blob was old and written again (blobs.Store.Fresh)
}

// valid reports whether doc is a snapshot of user's library this version
// reads, its layers in a view's order: every file names a blob. A version
// 1 snapshot gets its layers' names.
func (doc *snapshotDoc) valid(user string) bool {
	if doc.User != user {
		return false
	}
	switch doc.Version {
	case 1:
		if len(doc.Layers) != 2 || len(doc.Teams) != 0 {
			return false
		}
		doc.Layers[0].Name, doc.Layers[1].Name = LayerUser, LayerShared
	case snapshotVersion:
		if len(doc.Layers) != len(doc.Teams)+2 || len(doc.Teams) > mounts.MaxTeams {
			return false
		}
		for i, fl := range doc.Layers[1 : len(doc.Layers)-1] {
			if fl.Name != LayerTeam+doc.Teams[i] {
				return false
			}
		}
		if doc.Layers[0].Name != LayerUser || doc.Layers[len(doc.Layers)-1].Name != LayerShared {
			return false
		}
	default:
		return false
	}
	for _, fl := range doc.Layers {
		for _, f := range fl.Files {
			if !blobs.Digest(f.Blob).Valid() {
				return false
			}
		}
	}
	return true
}

// pinBase starts the userBase of a pinned thread's view.
const pinBase = "pin\x00"

// frozenView is a snapshot built into the view's parts once per replica.
type frozenView struct {
	o     *overlay
	sl    *layer
	lower []*layer // the teams' and the shared one, as in view
	teams string   // the caller's teams the snapshot froze
	base  string   // what replies are keyed by, instead of the user's prefix
	bytes int64
}

func (f *frozenView) view() *view {
	return &view{overlay: f.o, shared: f.sl, userBase: f.base, lower: f.lower}
}

func newPins(b objstore.Bucket, vs *views, cfg PinConfig, asked func(context.Context) bool, log *slog.Logger) *pins {
	return &pins{
		bucket: b, views: vs, cfg: cfg, asked: asked, log: log, now: time.Now, blobs: blobs.New(b, cfg.MaxBytes, cfg.GCGrace),
		byThread: cache.NewShelf[*pinRecord](vs.indexes.Held(), heldPin),
		frozen:   cache.NewShelf[*frozenView](vs.indexes.Held(), heldFrozen),
	}
}

// pinKey and snapshotKey name the pin of a thread and a snapshot.
func (p *pins) pinKey(id mounts.Caller) string {
	return p.cfg.Roots.Pin(id.User(), id.Thread())
}

func (p *pins) snapshotKey(user, sum string) string {
	return p.cfg.Roots.Snapshot(user, sum)
}

// view returns the pinned view of the caller's thread, pinning the library
// as it is on the thread's first pinned call or after its pin expired.
func (p *pins) view(ctx context.Context, id mounts.Caller) (*view, error) {
	v, err := p.pinnedView(ctx, id)
	if errors.Is(err, errSnapshotGone) {
		// Swept since this replica read the pin: resolving again pins the
		// library anew, as for an expired pin.
		p.byThread.Remove(threadKey(id))
		v, err = p.pinnedView(ctx, id)
	}
	return v, err
}

// errSnapshotGone: the snapshot a pin names is not in the bucket.
var errSnapshotGone = errkind.New(errkind.FailedPrecondition, "the thread's pinned library snapshot is gone")

// threadKey names the caller's thread and teams in byThread.
func threadKey(id mounts.Caller) string {
	return id.User() + "\x00" + id.Thread() + "\x00" + id.Identity().Teams
}

func (p *pins) pinnedView(ctx context.Context, id mounts.Caller) (*view, error) {
	k := threadKey(id)
	rec, ok := p.byThread.Get(k)
	if !ok || !p.now().Before(rec.Expires) {
		ch := p.flight.DoChan("pin\x00"+k, panics.GuardValue(func() (any, error) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pinTimeout)
			defer cancel()
			return p.resolve(rctx, id)
		}))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case res := <-ch:
			if res.Err != nil {
				return nil, res.Err
			}
			rec = res.Val.(*pinRecord)
		}
		p.byThread.Add(k, rec, int64(slotBytes+len(k)+len(rec.Snapshot)+len(rec.etag)+64))
	}
	f, err := p.load(ctx, id.User(), rec.Snapshot)
	if err != nil {
		return nil, err
	}
	if f.teams != id.Identity().Teams {
		// Not the teams the pin names (a damaged pin): never served.
		return nil, fmt.Errorf("%w: the thread's snapshot froze other teams", blobs.ErrCorrupt)
	}
	return f.view(), nil
}

// resolve reads the thread's pin, or pins the library now when there is
// none or it expired. Of two replicas pinning one thread at once, one
// writes the pin and the other reads it.
func (p *pins) resolve(ctx context.Context, id mounts.Caller) (*pinRecord, error) {
	key := p.pinKey(id)
	for attempt := 0; ; attempt++ {
		old, err := p.readPin(ctx, key)
		switch {
		case err != nil:
			return nil, err
		case old != nil && p.now().Before(old.Expires) && old.Teams == id.Identity().Teams && p.snapshotExists(ctx, id.User(), old.Snapshot):
			return old, nil
		case attempt == 2:
			return nil, fmt.Errorf("%w: the thread's pin changed while it was written; try again", errkind.Aborted)
		}
		sum, err := p.freeze(ctx, id)
		if err != nil {
			return nil, err
		}
		now := p.now().UTC()
		rec := &pinRecord{Snapshot: sum, Created: now, Expires: now.Add(p.cfg.Retention), Teams: id.Identity().Teams}
		data, _ := json.Marshal(rec)
		opts := objstore.PutOptions{IfNoneMatch: true}
		if old != nil {
			opts = objstore.PutOptions{IfMatch: old.etag} // replace the expired pin
		}
		a, err := p.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), opts)
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
			if _, err := p.sweep(ctx, id.User(), p.sweepSnapshotsNow(id.User()), false); err != nil && ctx.Err() == nil {
				p.log.Warn("skills: sweeping expired pins failed", "user", id.User(), "err", err)
			}
		}
		return rec, nil
	}
}

// sweepSnapshotsNow reports whether a new pin of user sweeps the user's
// snapshots too, and if so notes that it does.
func (p *pins) sweepSnapshotsNow(user string) bool {
	p.sweptMu.Lock()
	defer p.sweptMu.Unlock()
	now := p.now()
	if last, ok := p.swept[user]; ok && now.Sub(last) < snapshotSweepEvery {
		return false
	}
	if p.swept == nil || len(p.swept) >= maxSweptUsers {
		p.swept = map[string]time.Time{}
	}
	p.swept[user] = now
	return true
}

// snapshotExists reports whether the snapshot a pin names is there: a pin
// whose snapshot was swept is replaced as an expired one is.
func (p *pins) snapshotExists(ctx context.Context, user, sum string) bool {
	if _, ok := p.frozen.Get(p.snapshotKey(user, sum)); ok {
		return true
	}
	_, err := p.bucket.Stat(ctx, p.snapshotKey(user, sum))
	return !objstore.IsNotFound(err)
}

// maxPinBytes bounds a pin object.
const maxPinBytes = 4 << 10

// readPin returns the pin at key, nil when there is none.
func (p *pins) readPin(ctx context.Context, key string) (*pinRecord, error) {
	data, a, err := p.readBounded(ctx, key, maxPinBytes)
	if objstore.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec pinRecord
	if err := json.Unmarshal(data, &rec); err != nil || !blobs.Digest(rec.Snapshot).Valid() {
		// A damaged pin is replaced as an expired one is.
		p.log.Warn("skills: a thread's pin is malformed; pinning again", "key", key)
		return &pinRecord{etag: a.ETag}, nil
	}
	rec.etag = a.ETag
	return &rec, nil
}

func (p *pins) readBounded(ctx context.Context, key string, max int64) ([]byte, objstore.Attributes, error) {
	rc, a, err := p.bucket.Get(ctx, key)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	if a.Size > max {
		return nil, a, fmt.Errorf("%w: %s is %d bytes, over the %d-byte bound", errkind.ResourceExhausted, key, a.Size, max)
	}
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%w: %s is over the %d-byte bound", errkind.ResourceExhausted, key, max)
	}
	return data, a, err
}

// readFile reads a live file through the file cache (hashing it for the
// index filled it), within the pin's byte bound.
func (p *pins) readFile(ctx context.Context, o objstore.Object) ([]byte, objstore.Attributes, error) {
	rc, a, err := p.views.indexes.Files().Open(ctx, o, 0, -1)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), p.cfg.MaxBytes+1))
	if err == nil && int64(len(data)) > p.cfg.MaxBytes {
		err = fmt.Errorf("%w: a skill file is over --library.pin-max-bytes (%d)", errkind.ResourceExhausted, p.cfg.MaxBytes)
	}
	return data, a, err
}

// freeze snapshots every library of the caller's view as its index lists
// it now (the user's, each team's, the shared one, with their protected
// names): every file is copied into its library's blob space (a blob
// already there is not copied again) and the snapshot object written. It
// returns the snapshot's sha256.
func (p *pins) freeze(ctx context.Context, id mounts.Caller) (string, error) {
	own, shared, err := p.views.layers(id)
	if err != nil {
		return "", err
	}
	teams := id.Teams()
	ls := []libindex.Layer{own}
	refs := []LibraryRef{{User: id.User()}}
	names := []string{LayerUser}
	for _, t := range teams {
		ls = append(ls, p.views.teamLayer(t))
		refs = append(refs, LibraryRef{Team: t})
		names = append(names, LayerTeam+t)
	}
	ls = append(ls, shared)
	refs = append(refs, LibraryRef{Shared: true})
	names = append(names, LayerShared)
	xs := make([]*libindex.Index, len(ls))
	g, gctx := errgroup.WithContext(ctx)
	for i, l := range ls {
		g.Go(func() (err error) { xs[i], err = p.views.indexes.Get(gctx, l); return err })
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	doc := snapshotDoc{Version: snapshotVersion, User: id.User(), Teams: teams, Layers: make([]frozenLayer, len(ls))}
	var total int64
	for i, l := range ls {
		fl := frozenLayer{Name: names[i], Prefix: l.Prefix, Space: p.cfg.Roots.BlobSpace(refs[i])}
		if l.Side != "" {
			side, all, err := p.views.readSide(ctx, xs[i], l.Side)
			if err != nil {
				return "", err
			}
			fl.Protected, fl.ProtectAll, fl.Scopes = side.Names, all, side.Scopes
		}
		for _, e := range addressable(xs[i].Objs, l.Prefix) {
			total += e.obj.Size
			head, _ := xs[i].HeadOf(e.obj.Key)
			fl.Files = append(fl.Files, frozenFile{Rel: e.rel, Size: e.obj.Size, ETag: e.obj.ETag, ModTime: e.obj.ModTime.UTC(), Head: head})
		}
		doc.Layers[i] = fl
	}
	if total > p.cfg.MaxBytes {
		return "", fmt.Errorf("%w: pinning this library copies %d bytes of skill files, over --library.pin-max-bytes (%d)", errkind.ResourceExhausted, total, p.cfg.MaxBytes)
	}
	for i := range doc.Layers {
		if err := p.copyLayer(ctx, &doc.Layers[i], xs[i]); err != nil {
			return "", err
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	_, err = p.bucket.Put(ctx, p.snapshotKey(id.User(), hexSum), bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfNoneMatch: true})
	if err != nil && !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, objstore.ErrConflict) {
		return "", err // (a lost create means the same content is there)
	}
	// An old blob written again for this snapshot may have been deleted by
	// a collection that had stat'ed it just before; with the snapshot
	// stored, every later collection keeps its blobs. No pin names a
	// snapshot missing one: the caller tries again, which copies it anew.
	for _, fl := range doc.Layers {
		for _, f := range fl.Files {
			if !f.rewrote {
				continue
			}
			if ok, err := p.blobs.Has(ctx, fl.Space, blobs.Digest(f.Blob)); err != nil || !ok {
				return "", cmp.Or(err, fmt.Errorf("%w: a file's copy was collected while the thread was pinned; try again", errkind.Aborted))
			}
		}
	}
	return hexSum, nil
}

// copyLayer fills in the blob of each file of fl, copying the files whose
// blob its space lacks. A file the index hashed whose blob is there costs
// nothing: a second thread pinning the same library copies nothing.
func (p *pins) copyLayer(ctx context.Context, fl *frozenLayer, x *libindex.Index) error {
	present, complete, err := p.listSpace(ctx, fl.Space, 4*len(fl.Files)+1024)
	if err != nil {
		return err
	}
	var mu sync.Mutex // present is read and filled by the copies
	// reusable is the ETag of the blob d when the space holds it and it
	// is Fresh; an old one is written again from the file's bytes.
	reusable := func(d string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := present[d]
		return a.ETag, ok && p.blobs.Fresh(a.ModTime)
	}
	sem := semaphore.NewWeighted(pinCopyBytes)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.views.cfg.Concurrency)
	for i := range fl.Files {
		f := &fl.Files[i]
		key := fl.Prefix + f.Rel
		dg, hashed := x.DigestOf(key)
		g.Go(func() error {
			if hashed && dg.Size == f.Size {
				d := hex.EncodeToString(dg.Sum[:])
				etag, ok := reusable(d)
				if !ok && !complete {
					a, err := p.bucket.Stat(gctx, blobs.Key(fl.Space, blobs.Digest(d)))
					if err != nil && !objstore.IsNotFound(err) {
						return err
					}
					etag, ok = a.ETag, err == nil && p.blobs.Fresh(a.ModTime)
				}
				if ok {
					f.Blob, f.BlobETag, f.Hashed = d, etag, true
					return nil
				}
			}
			w := min(max(f.Size, 1), pinCopyBytes)
			if err := sem.Acquire(gctx, w); err != nil {
				return err
			}
			defer sem.Release(w)
			data, a, err := p.readFile(gctx, objstore.Object{Key: key, Attributes: objstore.Attributes{Size: f.Size, ETag: f.ETag}})
			if objstore.IsNotFound(err) {
				f.gone = true
				return nil
			}
			if err != nil {
				return err
			}
			// Frozen as read: a file replaced since the listing is frozen
			// with the bytes copied, so the snapshot agrees with itself.
			d := string(blobs.Of(data))
			f.Size, f.ETag, f.Blob, f.Hashed = int64(len(data)), a.ETag, d, hashed
			etag, ok := reusable(d)
			if !ok {
				st, err := p.blobs.Put(gctx, fl.Space, data)
				if err != nil {
					return err
				}
				etag, f.rewrote = st.ETag, st.Rewrote
				mu.Lock()
				present[d] = objstore.Attributes{ETag: etag, ModTime: p.now()}
				mu.Unlock()
			}
			f.BlobETag = etag
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	kept := fl.Files[:0]
	for _, f := range fl.Files {
		if !f.gone {
			kept = append(kept, f)
		}
	}
	fl.Files = kept
	return nil
}

// listSpace returns the blobs of space and their attributes, at most limit of
// them; complete is false when there were more (the rest are then asked
// one by one).
func (p *pins) listSpace(ctx context.Context, space string, limit int) (map[string]objstore.Attributes, bool, error) {
	out := map[string]objstore.Attributes{}
	errFull := errors.New("full")
	err := objstore.Walk(ctx, p.bucket, space+"sha256/", func(o objstore.Object) error {
		if len(out) == limit {
			return errFull
		}
		if d := strings.TrimPrefix(o.Key, space+"sha256/"); blobs.Digest(d).Valid() {
			out[d] = o.Attributes
		}
		return nil
	})
	if errors.Is(err, errFull) {
		return out, false, nil
	}
	return out, err == nil, err
}

// maxSnapshotBytes bounds a snapshot object: per object of its libraries
// (the user's, the shared one, at most mounts.MaxTeams teams'), its key
// and ETag, a frontmatter head (base64) and its numbers.
func (p *pins) maxSnapshotBytes() int64 {
	return (2 + mounts.MaxTeams) * int64(p.views.cfg.MaxObjects) * (2<<10 + 2*int64(p.views.cfg.HeadBytes) + 512)
}

// load returns the view of the snapshot sum of user, built once per replica
// while it is held.
func (p *pins) load(ctx context.Context, user, sum string) (*frozenView, error) {
	key := p.snapshotKey(user, sum)
	if f, ok := p.frozen.Get(key); ok {
		return f, nil
	}
	ch := p.flight.DoChan("snapshot\x00"+key, panics.GuardValue(func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pinTimeout)
		defer cancel()
		data, _, err := p.readBounded(rctx, key, p.maxSnapshotBytes())
		if objstore.IsNotFound(err) {
			return nil, errSnapshotGone
		}
		if err != nil {
			return nil, err
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			return nil, fmt.Errorf("%w: %s", blobs.ErrCorrupt, key)
		}
		var doc snapshotDoc
		if err := json.Unmarshal(data, &doc); err != nil || !doc.valid(user) {
			return nil, fmt.Errorf("%w: %s", blobs.ErrCorrupt, key)
		}
		f := p.build(rctx, &doc, key)
		hold(p.views, p.frozen, key, f, f.bytes)
		return f, nil
	}))
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*frozenView), nil
	}
}

// build makes the snapshot into a view with the catalog's own layer,
// composition and overlay code, from indexes rebuilt as listed and the
// protected names as frozen; then each file of the layers is pointed at
// its blob, so every read (GetSkill, ReadSkillFile, /skills, ExportSkill)
// reads the frozen bytes through the file cache.
func (p *pins) build(ctx context.Context, doc *snapshotDoc, key string) *frozenView {
	ls := make([]*layer, len(doc.Layers))
	for i, fl := range doc.Layers {
		// No generation: the content names the snapshot (an index listed
		// again after a drop has a new one), and replies of a pinned view
		// are keyed by the snapshot.
		x := &libindex.Index{}
		heads, digests := map[string][]byte{}, map[string]libindex.Digest{}
		blobOf := make(map[string]objstore.Object, len(fl.Files))
		for _, f := range fl.Files {
			o := objstore.Object{Key: fl.Prefix + f.Rel, Attributes: objstore.Attributes{Size: f.Size, ETag: f.ETag, ModTime: f.ModTime}}
			x.Objs = append(x.Objs, o)
			if f.Head != nil {
				heads[o.Key] = f.Head
			}
			var sum [sha256.Size]byte
			hex.Decode(sum[:], []byte(f.Blob))
			if f.Hashed {
				digests[o.Key] = libindex.Digest{Size: f.Size, Sum: sum}
			}
			blobOf[o.Key] = objstore.Object{Key: blobs.Key(fl.Space, blobs.Digest(f.Blob)), Attributes: objstore.Attributes{Size: f.Size, ETag: f.BlobETag, ModTime: f.ModTime}}
		}
		x.Heads, x.Digests = libindex.SortedHeads(heads), libindex.SortedDigests(digests)
		// The index holds no protected-names object: the names frozen
		// with the snapshot apply, not the live ones.
		l, _ := p.views.buildLayer(ctx, x, fl.Prefix, fl.Name, nil) // reads nothing: x lists no protected-names object
		l.protected, l.scopes = fl.Protected, compileScopes(fl.Scopes)
		if fl.ProtectAll {
			l.protected = protectAll(l)
		}
		for j := range l.entries {
			l.entries[j].obj = blobOf[l.entries[j].obj.Key]
		}
		// The skills' SKILL.md are their entries: pointed at the blobs too.
		l.bytes = l.heldBytes() // with the blobs' keys
		ls[i] = l
	}
	own, lower := ls[0], ls[1:]
	sl := lower[len(lower)-1]
	if len(doc.Teams) > 0 || len(sl.protected) > 0 {
		sl = p.views.composeBase(doc.Teams, lower) // as views.base, uncached
	}
	if sl.prot != nil {
		// Protected skills take their names and paths from the user's.
		eff := p.views.compose(sl.prot, own, false)
		eff.gen, eff.name = own.gen, own.name
		own = eff
	}
	o := p.views.overlay(own, sl)
	n := o.bytes + sl.bytes
	for _, l := range lower {
		n += l.bytes
	}
	return &frozenView{o: o, sl: sl, lower: lower, teams: strings.Join(doc.Teams, ","), base: pinBase + key, bytes: n}
}

// PinSweep counts what a sweep deleted (or, dry, would delete).
type PinSweep struct {
	Pins, Snapshots int
}

// sweep deletes user's pins that expired (a pin expires the retention
// after it was written, so the listing says which to read), and with
// snapshots the snapshots no live pin refers to that are older than the
// retention (which reads each live pin). A dry sweep only counts. Blobs
// stay: skill versions share the blob spaces, and collecting them needs
// both (library.Publisher.CollectGarbage).
func (p *pins) sweep(ctx context.Context, user string, snapshots, dry bool) (PinSweep, error) {
	now := p.now()
	live := map[string]bool{}
	var n PinSweep
	del := func(key string) error {
		if dry {
			return nil
		}
		return p.bucket.Delete(ctx, key)
	}
	err := objstore.Walk(ctx, p.bucket, p.cfg.Roots.Pins(user), func(o objstore.Object) error {
		old := now.Sub(o.ModTime) >= p.cfg.Retention
		if !old && !snapshots {
			return nil
		}
		rec, err := p.readPin(ctx, o.Key)
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
	err = objstore.Walk(ctx, p.bucket, p.cfg.Roots.Snapshots(user), func(o objstore.Object) error {
		sum := strings.TrimSuffix(strings.TrimPrefix(o.Key, p.cfg.Roots.Snapshots(user)), ".json")
		if live[sum] || now.Sub(o.ModTime) < p.cfg.Retention {
			return nil
		}
		n.Snapshots++
		return del(o.Key)
	})
	return n, err
}

// SweepPins deletes user's expired pins and the snapshots no pin refers to
// (older than the retention), or with dry only counts them. A new pinned
// thread of the user does so too (the snapshots at most once an hour per
// replica), and so does library garbage collection.
func (c *Catalog) SweepPins(ctx context.Context, user string, dry bool) (PinSweep, error) {
	if c.views.pins == nil {
		return PinSweep{}, nil
	}
	if err := mounts.ValidateID("user", user); err != nil {
		return PinSweep{}, err
	}
	return c.views.pins.sweep(ctx, user, true, dry)
}

// PinnedBlobs calls fn with every blob of the library l's blob space a
// snapshot refers to: for a user's library the user's snapshots, for the
// shared one and a team's every user's (a snapshot freezes the caller's
// teams and the shared library too, and the users are found by listing
// the bucket's first level). A snapshot
// that cannot be read is an error, never skipped: its blobs would be lost.
// Pins are not consulted: a snapshot no pin refers to keeps its blobs
// until it is swept.
func (c *Catalog) PinnedBlobs(ctx context.Context, l LibraryRef, fn func(blobs.Digest) error) error {
	p := c.views.pins
	if p == nil {
		// Without pins this catalog cannot read snapshots, whose blobs a
		// collection would otherwise delete.
		return fmt.Errorf("%w: pinned threads are not configured, so their snapshots' blobs cannot be told apart", errkind.FailedPrecondition)
	}
	if err := l.Validate(); err != nil {
		return err
	}
	space := p.cfg.Roots.BlobSpace(l)
	if l.User != "" {
		return p.snapshotBlobs(ctx, l.User, space, fn)
	}
	opts := objstore.ListOptions{Delimiter: "/"}
	for {
		page, err := p.bucket.List(ctx, opts)
		if err != nil {
			return err
		}
		for _, cp := range page.CommonPrefixes {
			if u := strings.TrimSuffix(cp, "/"); mounts.ValidateID("user", u) == nil {
				if err := p.snapshotBlobs(ctx, u, space, fn); err != nil {
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
func (p *pins) snapshotBlobs(ctx context.Context, user, space string, fn func(blobs.Digest) error) error {
	return objstore.Walk(ctx, p.bucket, p.cfg.Roots.Snapshots(user), func(o objstore.Object) error {
		data, _, err := p.readBounded(ctx, o.Key, p.maxSnapshotBytes())
		if objstore.IsNotFound(err) {
			return nil // swept since listed
		}
		if err != nil {
			return err
		}
		var doc snapshotDoc
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
