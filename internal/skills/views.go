package skills

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/settings"
)

// views builds each user's view from the two layers' indexes, and reuses
// its parts while the indexes are the same generation: every VFS call under
// the skills mount needs the view, and building one costs about as much as
// the call itself. Layers and overlays are held on the store's byte budget
// (cache.Held) with the indexes.
type views struct {
	indexes  *libindex.Store
	heads    *heads
	table    *mounts.Table
	cfg      Config
	layout   layout.Layout          // where each library and its index are
	shared   *cache.Shelf[*layer]   // the shared layer, by prefix
	overlays *cache.Shelf[*overlay] // by user prefix
	flight   singleflight.Group     // builds callers wait for
	pins     *pins                  // nil: no thread can pin
	files    *libindex.Files        // reads each library's protected names
	// userScopes returns the scopes of the caller's own settings (a warm
	// read is in process: settings.Store.Get).
	userScopes func(context.Context, mounts.Caller) ([]settings.ScopeDef, error)
	// nextTooLarge is when a value too large for the budget may be logged
	// again (unix nanoseconds).
	nextTooLarge atomic.Int64
}

// Kinds of values views hold on the budget.
const (
	heldLayer = "layer" // the shared library's
	heldView  = "view"  // a user's overlay, their own layer in it
)

func newViews(ix *libindex.Store, hs *heads, table *mounts.Table, cfg Config) *views {
	return &views{
		indexes: ix, heads: hs, table: table, cfg: cfg, layout: layout.New(table, cfg.Keys()),
		shared:   cache.NewShelf[*layer](ix.Held(), heldLayer),
		overlays: cache.NewShelf[*overlay](ix.Held(), heldView),
	}
}

// teamLayer is the library of one team, whose ID the caller's identity
// validated (or an operator's request, by LibraryRef.Validate).
func (vs *views) teamLayer(team string) libindex.Layer {
	return indexLayer(LibraryRef{Team: team}, vs.layout.Team(team))
}

// indexLayer is lib, the library l names, as the index store keys it: by
// the user's ID, or a tag no user ID can be.
func indexLayer(l LibraryRef, lib layout.Library) libindex.Layer {
	tag := l.User
	switch {
	case l.Shared:
		tag = libindex.SharedTag
	case l.Team != "":
		tag = libindex.SharedTag + ".team." + l.Team
	}
	return libindex.Layer{Tag: tag, Prefix: lib.Prefix, Object: lib.Index, Side: lib.Protected}
}

// layers returns the caller's library layer and the shared one.
func (vs *views) layers(id mounts.Caller) (own, shared libindex.Layer, err error) {
	lib, err := vs.layout.User(id)
	if err != nil {
		return libindex.Layer{}, libindex.Layer{}, err
	}
	own = indexLayer(LibraryRef{User: id.User()}, lib)
	shared = indexLayer(LibraryRef{Shared: true}, vs.layout.Shared())
	return own, shared, nil
}

// userLayers is layers for a user named without a thread (by an operator):
// the skills mount depends on the user alone (Config.Validate), so any
// valid thread renders it.
func (vs *views) userLayers(user string) (own, shared libindex.Layer, err error) {
	id, err := vs.operator(user)
	if err != nil {
		return libindex.Layer{}, libindex.Layer{}, err
	}
	return vs.layers(id)
}

// operator is the caller as which an operator's call reads a user's
// library and settings (layout.Layout.Operator).
func (vs *views) operator(user string) (mounts.Caller, error) { return vs.layout.Operator(user) }

// get returns the caller's view: the library as it is, or for a call that
// asks for its thread's pinned library, as it was when the thread pinned
// it.
func (vs *views) get(ctx context.Context, id mounts.Caller) (*view, error) {
	var v *view
	var err error
	if vs.pinned(ctx) {
		v, err = vs.pins.view(ctx, id)
	} else {
		v, err = vs.live(ctx, id)
	}
	if err != nil || id.Scope() == "" {
		return v, err
	}
	var own []settings.ScopeDef
	if vs.userScopes != nil {
		if own, err = vs.userScopes(ctx, id); err != nil {
			return nil, err
		}
	}
	sc, err := scopeOf(id.Scope(), own, v.lower)
	if err != nil {
		return nil, err
	}
	sc.harness = id.Harness()
	scoped := *v // a view is made per call
	scoped.scope = sc
	return &scoped, nil
}

// pinned reports whether the call reads its thread's pinned library.
func (vs *views) pinned(ctx context.Context) bool { return vs.pins != nil && vs.pins.asked(ctx) }

// indexesOf returns the indexes of ls, in order. Those held and servable
// are taken at once (most calls); the rest are waited for together.
func (vs *views) indexesOf(ctx context.Context, ls []libindex.Layer) ([]*libindex.Index, error) {
	idx := make([]*libindex.Index, len(ls))
	var g *errgroup.Group
	gctx := ctx
	for i, l := range ls {
		if x, ok := vs.indexes.Servable(l); ok {
			idx[i] = x
			continue
		}
		if g == nil {
			g, gctx = errgroup.WithContext(ctx)
		}
		g.Go(func() (err error) { idx[i], err = vs.indexes.Get(gctx, l); return err })
	}
	if g != nil {
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// live returns the caller's view of the library as it is.
func (vs *views) live(ctx context.Context, id mounts.Caller) (*view, error) {
	own, shared, err := vs.layers(id)
	if err != nil {
		return nil, err
	}
	teams := id.Teams()
	// The user's index, the shared library's, then the teams'.
	ls := make([]libindex.Layer, 0, 2+len(teams))
	ls = append(ls, own, shared)
	for _, t := range teams {
		ls = append(ls, vs.teamLayer(t))
	}
	idx, err := vs.indexesOf(ctx, ls)
	if err != nil {
		return nil, err
	}
	userIdx, sharedIdx, teamIdx := idx[0], idx[1], idx[2:]
	lower := make([]*layer, 0, len(teams)+1)
	for i, t := range teams {
		tl, err := vs.sharedLayer(ctx, vs.teamLayer(t).Prefix, LayerTeam+t, teamIdx[i])
		if err != nil {
			return nil, err
		}
		lower = append(lower, tl)
	}
	sh, err := vs.sharedLayer(ctx, shared.Prefix, LayerShared, sharedIdx)
	if err != nil {
		return nil, err
	}
	lower = append(lower, sh)
	sl := vs.base(teams, lower)
	if o, ok := vs.overlays.Get(own.Prefix); ok && o.userGen == userIdx.Gen && o.sharedGen == sl.gen {
		return &view{overlay: o, shared: sl, userBase: own.Prefix, lower: lower}, nil
	}
	key := fmt.Sprintf("view\x00%s\x00%d\x00%d", own.Prefix, userIdx.Gen, sl.gen)
	v, _, _ := vs.flight.Do(key, func() (any, error) {
		prev, _ := vs.overlays.Get(own.Prefix)
		var ul *layer
		if prev != nil && prev.userGen == userIdx.Gen {
			ul = prev.raw // only the shared library changed
		} else {
			var prevOwn *layer
			if prev != nil {
				prevOwn = prev.raw
			}
			ul, _ = vs.buildLayer(ctx, userIdx, own.Prefix, LayerUser, prevOwn) // a user's library protects nothing: no error
		}
		eff := ul
		if sl.prot != nil {
			// Protected skills take their names and paths from the user's.
			eff = vs.compose(sl.prot, ul, false)
			eff.gen, eff.name = ul.gen, ul.name
		}
		o := vs.overlay(eff, sl)
		o.raw = ul
		hold(vs, vs.overlays, own.Prefix, o, o.bytes)
		return o, nil
	})
	return &view{overlay: v.(*overlay), shared: sl, userBase: own.Prefix, lower: lower}, nil
}

// sharedLayer returns the layer of a library every caller reads alike (the
// shared library, a team's) from its index x, built once per generation
// for all of them.
func (vs *views) sharedLayer(ctx context.Context, prefix, name string, x *libindex.Index) (*layer, error) {
	if l, ok := vs.shared.Get(prefix); ok && l.gen == x.Gen {
		return l, nil
	}
	ch := vs.flight.DoChan(fmt.Sprintf("layer\x00%s\x00%d", prefix, x.Gen), panics.GuardValue(func() (any, error) {
		// Built for every caller waiting: the first one's leaving must not
		// fail the others' read of the protected names.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), layerReadTimeout)
		defer cancel()
		prev, _ := vs.shared.Get(prefix)
		l, err := vs.buildLayer(ctx, x, prefix, name, prev)
		if err != nil {
			return nil, err
		}
		hold(vs, vs.shared, prefix, l, l.bytes)
		return l, nil
	}))
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*layer), nil
	case <-ctx.Done():
		return nil, ctx.Err() // the build goes on for the others
	}
}

// layerReadTimeout bounds the one read a layer build may make: its
// library's protected names.
const layerReadTimeout = 30 * time.Second

// hold puts v on the budget, and says so when it does not fit at all: then
// every call builds it again.
func hold[V any](vs *views, shelf *cache.Shelf[V], key string, v V, bytes int64) {
	if shelf.Add(key, v, bytes) {
		return
	}
	now := time.Now().UnixNano()
	if next := vs.nextTooLarge.Load(); now >= next && vs.nextTooLarge.CompareAndSwap(next, now+int64(time.Minute)) {
		vs.heads.log.Warn("skills: a library is too large to hold decoded within --skills.max-held-bytes; every call builds it again",
			"prefix", key, "bytes", bytes, "max_held_bytes", vs.indexes.Held().MaxBytes())
	}
}

// forget drops the user's view.
func (vs *views) forget(userBase string) { vs.overlays.Remove(userBase) }

// buildLayer finds the skills of one library and parses the heads its index
// holds, taking those of prev (the layer of an earlier generation) whose
// SKILL.md is the same version: a skill overrides another by its
// frontmatter name, which only the head holds. It reads nothing from
// storage but the protected names of the shared library or a team's, which
// fail the build when they cannot be read (readSide).
func (vs *views) buildLayer(ctx context.Context, x *libindex.Index, prefix, layerName string, prev *layer) (*layer, error) {
	l := &layer{gen: x.Gen, name: layerName, entries: addressable(x.Objs, prefix)}
	var all bool
	var err error
	var side settings.Side
	switch {
	case layerName == LayerShared:
		side, all, err = vs.readSide(ctx, x, vs.layout.Shared().Protected)
	case strings.HasPrefix(layerName, LayerTeam):
		side, all, err = vs.readSide(ctx, x, vs.layout.Team(strings.TrimPrefix(layerName, LayerTeam)).Protected)
	}
	if err != nil {
		return nil, err
	}
	l.protected, l.scopes = side.Names, compileScopes(side.Scopes)
	skills, nested := layerSkills(l.entries, layerName, vs.cfg.MaxSkills)
	var unparsed []*skillRef
	skills = slices.DeleteFunc(skills, func(s *skillRef) bool {
		if _, ok := x.HeadOf(s.skillMD.Key); !ok {
			return true // deleted between the listing and the read of its head
		}
		if p, ok := prev.parsed(s); ok {
			s.head = p
		} else {
			unparsed = append(unparsed, s)
		}
		s.location = location(vs.cfg.Mount + "/" + s.dir) // every listing names it
		s.manifest = manifestOf(vs.cfg.Mount, s.dir, s.files, x)
		return false
	})
	vs.heads.carried(len(skills) - len(unparsed))
	vs.heads.take(ctx, unparsed, x)
	shareMaps(skills)
	for _, s := range skills {
		s.name = cmp.Or(s.head.fm.Name, s.folder())
	}
	for _, s := range nested {
		vs.heads.reportNested(ctx, s)
	}
	markDuplicates(vs.cfg.Mount, skills)
	l.all = slices.Concat(skills, nested)
	for _, s := range nested {
		s.location = location(vs.cfg.Mount + "/" + s.dir)
	}
	slices.SortFunc(l.all, func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) })
	l.lookups(skills)
	if all {
		l.protected = protectAll(l)
	}
	return l, nil
}
