package views

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/snapshots"
)

// A pinned thread keeps the library it started with. Its first pinned call
// freezes every library index of the caller's view (the user's, each of
// the caller's teams', the shared one, as the catalog serves them, with
// the team and shared libraries' protected names) into a snapshot
// (internal/snapshots stores it, copies the files into their libraries'
// blob spaces and records the thread's pin); every later pinned call of
// the thread is served by a view built from the snapshot with the
// catalog's own layer and overlay code, each file resolving to its blob
// instead of the live key. Changes to the library, through the API or
// straight in the bucket, do not reach it until the pin expires.
//
// Only calls that ask for it (pinAsked) consult a pin: an unpinned call
// costs nothing more than before.
type Pins struct {
	Store *snapshots.Store
	views *Builder
	Roots layout.VersionRoots
	asked func(context.Context) bool

	Frozen *cache.Shelf[*frozenView] // by snapshot key
	flight singleflight.Group
}

// heldFrozen is the kind of the built snapshots on the budget.
const heldFrozen = "pinned_view"

// PinBase starts the userBase of a pinned thread's view.
const PinBase = "pin\x00"

// frozenView is a snapshot built into the view's parts once per replica.
type frozenView struct {
	o     *skillview.Overlay
	sl    *skillview.Layer
	lower []*skillview.Layer // the teams' and the shared one, as in view
	teams string             // the caller's teams the snapshot froze
	base  string             // what replies are keyed by, instead of the user's prefix
	bytes int64
}

func (f *frozenView) view() *skillview.View {
	return &skillview.View{Overlay: f.o, Shared: f.sl, UserBase: f.base, Lower: f.lower}
}

// NewPins makes the pins of the views vs, storing snapshots as sc says
// (its retention, size and sweep settings), roots its version roots; the bounds
// that follow from the views' own are filled in here.
func NewPins(b objstore.Bucket, vs *Builder, sc snapshots.Config, roots layout.VersionRoots, asked func(context.Context) bool, log *slog.Logger) *Pins {
	sc.Concurrency = vs.Config.Concurrency
	// Per object of its libraries (the user's, the shared one, at most
	// mounts.MaxTeams teams'), its key and ETag, a frontmatter head
	// (base64) and its numbers.
	sc.MaxSnapshotBytes = (2 + mounts.MaxTeams) * int64(vs.Config.MaxObjects) * (2<<10 + 2*int64(vs.Config.HeadBytes) + 512)
	st := snapshots.New(b, sc, vs.Indexes.Files(), vs.Indexes.Held(), log)
	return &Pins{
		Store: st, views: vs, Roots: roots, asked: asked,
		Frozen: cache.NewShelf[*frozenView](vs.Indexes.Held(), heldFrozen),
	}
}

// view returns the pinned view of the caller's thread, pinning the library
// as it is on the thread's first pinned call or after its pin expired.
func (p *Pins) view(ctx context.Context, id mounts.Caller) (*skillview.View, error) {
	v, err := p.pinnedView(ctx, id)
	if errors.Is(err, snapshots.ErrGone) {
		// Swept since this replica read the pin: resolving again pins the
		// library anew, as for an expired pin.
		p.Store.Forget(id)
		v, err = p.pinnedView(ctx, id)
	}
	return v, err
}

func (p *Pins) pinnedView(ctx context.Context, id mounts.Caller) (*skillview.View, error) {
	sum, err := p.Store.Pinned(ctx, id, p)
	if err != nil {
		return nil, err
	}
	f, err := p.load(ctx, id.User(), sum)
	if err != nil {
		return nil, err
	}
	if f.teams != id.Identity().Teams {
		// Not the teams the pin names (a damaged pin): never served.
		return nil, fmt.Errorf("%w: the thread's snapshot froze other teams", blobs.ErrCorrupt)
	}
	return f.view(), nil
}

// Holds reports whether this replica holds the snapshot at key built.
func (p *Pins) Holds(key string) bool {
	_, ok := p.Frozen.Get(key)
	return ok
}

// Libraries lists every library of the caller's view as its index lists
// it now (the user's, each team's, the shared one, with their protected
// names and scopes), for a pin to freeze.
func (p *Pins) Libraries(ctx context.Context, id mounts.Caller) ([]snapshots.Listed, error) {
	own, shared, err := p.views.Layers(id)
	if err != nil {
		return nil, err
	}
	teams := id.Teams()
	ls := []libindex.Layer{own}
	refs := []layout.LibraryRef{{User: id.User()}}
	names := []string{skillview.LayerUser}
	for _, t := range teams {
		ls = append(ls, p.views.TeamLayer(t))
		refs = append(refs, layout.LibraryRef{Team: t})
		names = append(names, skillview.LayerTeam+t)
	}
	ls = append(ls, shared)
	refs = append(refs, layout.LibraryRef{Shared: true})
	names = append(names, skillview.LayerShared)
	xs := make([]*libindex.Index, len(ls))
	g, gctx := errgroup.WithContext(ctx)
	for i, l := range ls {
		g.Go(func() (err error) { xs[i], err = p.views.Indexes.Get(gctx, l); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]snapshots.Listed, len(ls))
	for i, l := range ls {
		fl := snapshots.Layer{Name: names[i], Prefix: l.Prefix, Space: p.Roots.BlobSpace(refs[i])}
		if l.Side != "" {
			side, all, err := p.views.readSide(ctx, xs[i], l.Side)
			if err != nil {
				return nil, err
			}
			fl.Protected, fl.ProtectAll, fl.Scopes = side.Names, all, side.Scopes
		}
		for _, e := range skillview.Addressable(xs[i].Objs, l.Prefix) {
			head, _ := xs[i].HeadOf(e.Obj.Key)
			fl.Files = append(fl.Files, snapshots.File{Rel: e.Rel, Size: e.Obj.Size, ETag: e.Obj.ETag, ModTime: e.Obj.ModTime.UTC(), Head: head})
		}
		out[i] = snapshots.Listed{Layer: fl, Index: xs[i]}
	}
	return out, nil
}

// load returns the view of the snapshot sum of user, built once per replica
// while it is held.
func (p *Pins) load(ctx context.Context, user, sum string) (*frozenView, error) {
	key := p.Store.Key(user, sum)
	if f, ok := p.Frozen.Get(key); ok {
		return f, nil
	}
	ch := p.flight.DoChan("snapshot\x00"+key, panics.GuardValue(func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshots.Timeout)
		defer cancel()
		doc, err := p.Store.Read(rctx, user, sum)
		if err != nil {
			return nil, err
		}
		f := p.build(rctx, doc, key)
		hold(p.views, p.Frozen, key, f, f.bytes)
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
func (p *Pins) build(ctx context.Context, doc *snapshots.Snapshot, key string) *frozenView {
	ls := make([]*skillview.Layer, len(doc.Layers))
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
				// The mode lives in the record: the blob is shared by every
				// file of the same bytes, whatever its mode.
				digests[o.Key] = libindex.Digest{Size: int32(f.Size), Sum: sum, Mode: f.Mode} // hashed: within skillmd.MaxSkillBytes
			}
			blobOf[o.Key] = objstore.Object{Key: blobs.Key(fl.Space, blobs.Digest(f.Blob)), Attributes: objstore.Attributes{Size: f.Size, ETag: f.BlobETag, ModTime: f.ModTime}}
		}
		x.Heads, x.Digests = libindex.SortedHeads(heads), libindex.SortedDigests(digests)
		// The index holds no protected-names object: the names frozen
		// with the snapshot apply, not the live ones.
		l, _ := p.views.BuildLayer(ctx, x, fl.Prefix, fl.Name, nil) // reads nothing: x lists no protected-names object
		l.Protected, l.Scopes = fl.Protected, skillview.CompileScopes(fl.Scopes)
		if fl.ProtectAll {
			l.Protected = skillview.ProtectAll(l)
		}
		for j := range l.Entries {
			l.Entries[j].Obj = blobOf[l.Entries[j].Obj.Key]
		}
		// The skills' SKILL.md are their entries: pointed at the blobs too.
		l.Bytes = l.HeldBytes() // with the blobs' keys
		ls[i] = l
	}
	own, lower := ls[0], ls[1:]
	sl := lower[len(lower)-1]
	if len(doc.Teams) > 0 || len(sl.Protected) > 0 {
		sl = p.views.composeBase(doc.Teams, lower) // as views.base, uncached
	}
	if sl.Prot != nil {
		// Protected skills take their names and paths from the user's.
		eff := p.views.compose(sl.Prot, own, false)
		eff.Generation, eff.Name = own.Generation, own.Name
		own = eff
	}
	o := p.views.Overlay(own, sl)
	n := o.Bytes + sl.Bytes
	for _, l := range lower {
		n += l.Bytes
	}
	return &frozenView{o: o, sl: sl, lower: lower, teams: strings.Join(doc.Teams, ","), base: PinBase + key, bytes: n}
}
