package views

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Builder builds each user's view from the two layers' indexes, and reuses
// its parts while the indexes are the same generation: every VFS call under
// the skills mount needs the view, and building one costs about as much as
// the call itself. Layers and overlays are held on the store's byte budget
// (cache.Held) with the indexes.
type Builder struct {
	Indexes  *libindex.Store
	Heads    *Heads
	table    *mounts.Table
	Config   Config
	Layout   layout.Layout                    // where each library and its index are
	Shared   *cache.Shelf[*skillview.Layer]   // the shared layer, by prefix
	Overlays *cache.Shelf[*skillview.Overlay] // by user prefix
	flight   singleflight.Group               // builds callers wait for
	Pins     *Pins                            // nil: no thread can pin
	Files    *libindex.Files                  // reads each library's protected names
	// UserScopes returns the scopes of the caller's own settings (a warm
	// read is in process: settings.Store.Get).
	UserScopes func(context.Context, mounts.Caller) ([]settings.ScopeDef, error)
	scopes     *skillview.CompiledScopes // users' scopes, each definition compiled once
	// nextTooLarge is when a value too large for the budget may be logged
	// again (unix nanoseconds).
	nextTooLarge atomic.Int64
	// Scan, when set, notes each layer's skills with what the library's
	// scan policy makes of them (internal/scanpolicy).
	Scan Scanner
	// verdicts are what Scan learnt of each shared or team library since
	// its layer was built, by prefix (*verdicts).
	verdicts sync.Map
}

// Scanner notes scan verdicts on a layer's skills as it is built
// (scanpolicy.Scanner.Layer): warnings, or errors that withhold a skill.
// It returns a sum of what it noted (0: nothing), which the layer's
// generation takes in, and the dirs of the skills it withholds, whose files
// the layer then serves to no one; it calls changed when a verdict the
// layer lacked is known, so that the layer is built again.
type Scanner interface {
	Layer(ctx context.Context, layer, prefix string, skills []*skillview.Ref, files *libindex.Files, changed func()) (sum uint64, withheld []string)
}

// dropLayer forgets the layer of the library at prefix (and a user's view
// over it): its next call builds it again.
func (vs *Builder) dropLayer(prefix string) {
	vs.Shared.Remove(prefix)
	vs.Overlays.Remove(prefix)
}

// verdicts is what the scan policy has learnt of one shared or team
// library's skills since its held layer was built. While a large upload is
// scanned in the background a verdict comes every few calls: dropping the
// layer for each made nearly every call wait for the whole library's
// layer to be built again (10,000 skills: 0.2 to 0.5 s, BenchmarkSearch10000Scanning),
// and its search index after it. The held layer is served instead and built
// again in the background, from itself, at most once per rebuild gap.
type verdicts struct {
	mu      sync.Mutex
	learnt  uint64    // verdicts learnt (Scanner.Layer's changed)
	built   uint64    // learnt when the held layer's build began
	next    time.Time // no rebuild for verdicts before then
	running bool
}

// Rebuilds for verdicts: at least verdictGap apart, and verdictShare times
// the last one's time, so that they take a tenth of a core at most.
const (
	verdictGap   = time.Second
	verdictShare = 10
)

// verdictsOf returns prefix's verdicts, made when create is set (else nil
// when none were learnt).
func (vs *Builder) verdictsOf(prefix string, create bool) *verdicts {
	if v, ok := vs.verdicts.Load(prefix); ok || !create {
		v, _ := v.(*verdicts)
		return v
	}
	v, _ := vs.verdicts.LoadOrStore(prefix, new(verdicts))
	return v.(*verdicts)
}

// learnt counts a verdict learnt for the shared or team library at prefix.
func (vs *Builder) learnt(prefix string) {
	v := vs.verdictsOf(prefix, true)
	v.mu.Lock()
	v.learnt++
	v.mu.Unlock()
}

// holdLayer holds l, built from the verdicts learnt of prefix by then
// (begun), as the layer of prefix.
func (vs *Builder) holdLayer(prefix string, l *skillview.Layer, begun uint64) {
	v := vs.verdictsOf(prefix, true)
	v.mu.Lock()
	defer v.mu.Unlock()
	hold(vs, vs.Shared, prefix, l, l.Bytes)
	v.built = begun
}

// learntSince returns the verdicts learnt of prefix so far: what a build
// that begins now notes.
func (vs *Builder) learntSince(prefix string) uint64 {
	v := vs.verdictsOf(prefix, false)
	if v == nil {
		return 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.learnt
}

// rebuildForVerdicts builds held, the layer of prefix from x, again in the
// background when verdicts were learnt since it was built, no rebuild is
// under way and the gap since the last one is over. The caller is served
// held: a verdict shows a rebuild later, and a skill the policy withholds
// until it is scanned stays withheld until then.
func (vs *Builder) rebuildForVerdicts(ctx context.Context, prefix, name string, x *libindex.Index, held *skillview.Layer) {
	v := vs.verdictsOf(prefix, false)
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.learnt == v.built || v.running || time.Now().Before(v.next) {
		return
	}
	v.running = true
	begun := v.learnt
	ctx = context.WithoutCancel(ctx) // the call that started it does not wait for it
	go func() {
		start := time.Now()
		l, err := panics.GuardValue(func() (*skillview.Layer, error) {
			ctx, cancel := context.WithTimeout(ctx, layerReadTimeout)
			defer cancel()
			return vs.BuildLayer(ctx, x, prefix, name, held)
		})()
		v.mu.Lock()
		defer v.mu.Unlock()
		v.running = false
		v.next = time.Now().Add(max(verdictGap, verdictShare*time.Since(start)))
		if err != nil {
			return // the next call after the gap tries again
		}
		if cur, ok := vs.Shared.Get(prefix); ok && cur != held {
			return // a newer build is held
		}
		hold(vs, vs.Shared, prefix, l, l.Bytes)
		v.built = begun
	}()
}

// Kinds of values views hold on the budget.
const (
	HeldLayer = "layer" // the shared library's
	HeldView  = "view"  // a user's overlay, their own layer in it
)

// Config is what views read of the catalog's Config.
type Config struct {
	Mount                                         string // where listings place skills
	MaxSkills, MaxObjects, HeadBytes, Concurrency int
	Keys                                          layout.Keys
}

// New is the builder of views over the indexes of ix, parsing their heads
// with hs, for the mount table table.
func New(ix *libindex.Store, hs *Heads, table *mounts.Table, cfg Config) *Builder {
	return &Builder{
		scopes:  skillview.NewCompiledScopes(),
		Indexes: ix, Heads: hs, table: table, Config: cfg, Layout: layout.New(table, cfg.Keys),
		Shared:   cache.NewShelf[*skillview.Layer](ix.Held(), HeldLayer),
		Overlays: cache.NewShelf[*skillview.Overlay](ix.Held(), HeldView),
	}
}

// TeamLayer is the library of one team, whose ID the caller's identity
// validated (or an operator's request, by LibraryRef.Validate).
func (vs *Builder) TeamLayer(team string) libindex.Layer {
	return IndexLayer(layout.LibraryRef{Team: team}, vs.Layout.Team(team))
}

// IndexLayer is lib, the library l names, as the index store keys it: by
// the user's ID, or a tag no user ID can be.
func IndexLayer(l layout.LibraryRef, lib layout.Library) libindex.Layer {
	tag := l.User
	switch {
	case l.Shared:
		tag = libindex.SharedTag
	case l.Team != "":
		tag = libindex.SharedTag + ".team." + l.Team
	}
	return libindex.Layer{Tag: tag, Prefix: lib.Prefix, Object: lib.Index, Side: lib.Protected}
}

// Layers returns the caller's library layer and the shared one.
func (vs *Builder) Layers(id mounts.Caller) (own, shared libindex.Layer, err error) {
	lib, err := vs.Layout.User(id)
	if err != nil {
		return libindex.Layer{}, libindex.Layer{}, err
	}
	own = IndexLayer(layout.LibraryRef{User: id.User()}, lib)
	shared = IndexLayer(layout.LibraryRef{Shared: true}, vs.Layout.Shared())
	return own, shared, nil
}

// UserLayers is layers for a user named without a thread (by an operator):
// the skills mount depends on the user alone (Config.Validate), so any
// valid thread renders it.
func (vs *Builder) UserLayers(user string) (own, shared libindex.Layer, err error) {
	id, err := vs.Operator(user)
	if err != nil {
		return libindex.Layer{}, libindex.Layer{}, err
	}
	return vs.Layers(id)
}

// Operator is the caller as which an operator's call reads a user's
// library and settings (layout.Layout.Operator).
func (vs *Builder) Operator(user string) (mounts.Caller, error) { return vs.Layout.Operator(user) }

// Get returns the caller's view: the library as it is, or for a call that
// asks for its thread's pinned library, as it was when the thread pinned
// it.
func (vs *Builder) Get(ctx context.Context, id mounts.Caller) (*skillview.View, error) {
	var v *skillview.View
	var err error
	if vs.Pinned(ctx) {
		v, err = vs.Pins.view(ctx, id)
	} else {
		v, err = vs.live(ctx, id)
	}
	if err != nil || id.Scope() == "" {
		return v, err
	}
	var own []settings.ScopeDef
	if vs.UserScopes != nil {
		if own, err = vs.UserScopes(ctx, id); err != nil {
			return nil, err
		}
	}
	sc, err := skillview.ScopeOf(id.Scope(), own, v.Lower, vs.scopes)
	if err != nil {
		return nil, err
	}
	sc.Harness = id.Harness()
	scoped := *v // a view is made per call
	scoped.Scope = sc
	return &scoped, nil
}

// Pinned reports whether the call reads its thread's pinned library.
func (vs *Builder) Pinned(ctx context.Context) bool { return vs.Pins != nil && vs.Pins.asked(ctx) }

// indexesOf returns the indexes of ls, in order. Those held and servable
// are taken at once (most calls); the rest are waited for together.
func (vs *Builder) indexesOf(ctx context.Context, ls []libindex.Layer) ([]*libindex.Index, error) {
	idx := make([]*libindex.Index, len(ls))
	var g *errgroup.Group
	gctx := ctx
	for i, l := range ls {
		if x, ok := vs.Indexes.Servable(l); ok {
			idx[i] = x
			continue
		}
		if g == nil {
			g, gctx = errgroup.WithContext(ctx)
		}
		g.Go(func() (err error) { idx[i], err = vs.Indexes.Get(gctx, l); return err })
	}
	if g != nil {
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// live returns the caller's view of the library as it is.
func (vs *Builder) live(ctx context.Context, id mounts.Caller) (*skillview.View, error) {
	own, shared, err := vs.Layers(id)
	if err != nil {
		return nil, err
	}
	teams := id.Teams()
	// The user's index, the shared library's, then the teams'.
	ls := make([]libindex.Layer, 0, 2+len(teams))
	ls = append(ls, own, shared)
	for _, t := range teams {
		ls = append(ls, vs.TeamLayer(t))
	}
	idx, err := vs.indexesOf(ctx, ls)
	if err != nil {
		return nil, err
	}
	userIdx, sharedIdx, teamIdx := idx[0], idx[1], idx[2:]
	lower := make([]*skillview.Layer, 0, len(teams)+1)
	for i, t := range teams {
		tl, err := vs.SharedLayer(ctx, vs.TeamLayer(t).Prefix, skillview.LayerTeam+t, teamIdx[i])
		if err != nil {
			return nil, err
		}
		lower = append(lower, tl)
	}
	sh, err := vs.SharedLayer(ctx, shared.Prefix, skillview.LayerShared, sharedIdx)
	if err != nil {
		return nil, err
	}
	lower = append(lower, sh)
	sl := vs.base(teams, lower)
	if o, ok := vs.Overlays.Get(own.Prefix); ok && o.Raw.IndexGen == userIdx.Gen && o.SharedGen == sl.Generation {
		return &skillview.View{Overlay: o, Shared: sl, UserBase: own.Prefix, Lower: lower}, nil
	}
	key := fmt.Sprintf("view\x00%s\x00%d\x00%d", own.Prefix, userIdx.Gen, sl.Generation)
	v, _, _ := vs.flight.Do(key, func() (any, error) {
		prev, _ := vs.Overlays.Get(own.Prefix)
		var ul *skillview.Layer
		if prev != nil && prev.Raw.IndexGen == userIdx.Gen {
			ul = prev.Raw // only the shared library changed
		} else {
			var prevOwn *skillview.Layer
			if prev != nil {
				prevOwn = prev.Raw
			}
			ul, _ = vs.BuildLayer(ctx, userIdx, own.Prefix, skillview.LayerUser, prevOwn) // a user's library protects nothing: no error
		}
		eff := ul
		if sl.Prot != nil {
			// Protected skills take their names and paths from the user's.
			eff = vs.compose(sl.Prot, ul, false)
			eff.Generation, eff.Name = ul.Generation, ul.Name
		}
		o := vs.Overlay(eff, sl)
		o.Raw = ul
		hold(vs, vs.Overlays, own.Prefix, o, o.Bytes)
		return o, nil
	})
	return &skillview.View{Overlay: v.(*skillview.Overlay), Shared: sl, UserBase: own.Prefix, Lower: lower}, nil
}

// SharedLayer returns the layer of a library every caller reads alike (the
// shared library, a team's) from its index x, built once per generation
// for all of them.
func (vs *Builder) SharedLayer(ctx context.Context, prefix, name string, x *libindex.Index) (*skillview.Layer, error) {
	if l, ok := vs.Shared.Get(prefix); ok && l.IndexGen == x.Gen {
		vs.rebuildForVerdicts(ctx, prefix, name, x, l)
		return l, nil
	}
	ch := vs.flight.DoChan(fmt.Sprintf("layer\x00%s\x00%d", prefix, x.Gen), panics.GuardValue(func() (any, error) {
		// Built for every caller waiting: the first one's leaving must not
		// fail the others' read of the protected names.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), layerReadTimeout)
		defer cancel()
		prev, _ := vs.Shared.Get(prefix)
		begun := vs.learntSince(prefix)
		l, err := vs.BuildLayer(ctx, x, prefix, name, prev)
		if err != nil {
			return nil, err
		}
		vs.holdLayer(prefix, l, begun)
		return l, nil
	}))
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*skillview.Layer), nil
	case <-ctx.Done():
		return nil, ctx.Err() // the build goes on for the others
	}
}

// layerReadTimeout bounds the one read a layer build may make: its
// library's protected names.
const layerReadTimeout = 30 * time.Second

// hold puts v on the budget, and says so when it does not fit at all: then
// every call builds it again.
func hold[V any](vs *Builder, shelf *cache.Shelf[V], key string, v V, bytes int64) {
	if shelf.Add(key, v, bytes) {
		return
	}
	now := time.Now().UnixNano()
	if next := vs.nextTooLarge.Load(); now >= next && vs.nextTooLarge.CompareAndSwap(next, now+int64(time.Minute)) {
		vs.Heads.log.Warn("skills: a library is too large to hold decoded within --skills.max-held-bytes; every call builds it again",
			"prefix", key, "bytes", bytes, "max_held_bytes", vs.Indexes.Held().MaxBytes())
	}
}

// Forget drops the user's view.
func (vs *Builder) Forget(userBase string) { vs.Overlays.Remove(userBase) }

// BuildLayer finds the skills of one library and parses the heads its index
// holds, taking those of prev (the layer of an earlier generation) whose
// SKILL.md is the same version: a skill overrides another by its
// frontmatter name, which only the head holds. It reads nothing from
// storage but the protected names of the shared library or a team's, which
// fail the build when they cannot be read (readSide).
func (vs *Builder) BuildLayer(ctx context.Context, x *libindex.Index, prefix, layerName string, prev *skillview.Layer) (*skillview.Layer, error) {
	l := &skillview.Layer{Generation: x.Gen, IndexGen: x.Gen, Name: layerName, Entries: skillview.Addressable(x.Objs, prefix)}
	var all bool
	var err error
	var side settings.Side
	switch {
	case layerName == skillview.LayerShared:
		side, all, err = vs.readSide(ctx, x, vs.Layout.Shared().Protected)
	case strings.HasPrefix(layerName, skillview.LayerTeam):
		side, all, err = vs.readSide(ctx, x, vs.Layout.Team(strings.TrimPrefix(layerName, skillview.LayerTeam)).Protected)
	}
	if err != nil {
		return nil, err
	}
	l.Protected, l.Scopes = side.Names, skillview.CompileScopes(side.Scopes)
	skills, nested := skillview.LayerSkills(l.Entries, layerName, vs.Config.MaxSkills)
	var unparsed []*skillview.Ref
	skills = slices.DeleteFunc(skills, func(s *skillview.Ref) bool {
		if _, ok := x.HeadOf(s.SkillMD.Key); !ok {
			return true // deleted between the listing and the read of its head
		}
		if p, ok := prev.Head(s); ok {
			s.Head = p
		} else {
			unparsed = append(unparsed, s)
		}
		s.Location = skillview.Location(vs.Config.Mount + "/" + s.Dir) // every listing names it
		s.Manifest = skillview.ManifestOf(vs.Config.Mount, s.Dir, s.Files, x)
		return false
	})
	vs.Heads.carried(len(skills) - len(unparsed))
	vs.Heads.take(ctx, unparsed, x)
	ShareMaps(skills)
	for _, s := range skills {
		s.Name = cmp.Or(s.Head.Frontmatter.Name, s.Folder())
	}
	if vs.Scan != nil {
		changed := func() { vs.dropLayer(prefix) } // a user's library: built again on its next call
		if layerName == skillview.LayerShared || strings.HasPrefix(layerName, skillview.LayerTeam) {
			changed = func() { vs.learnt(prefix) } // every caller's: built again in the background
		}
		sum, withheld := vs.Scan.Layer(ctx, layerName, prefix, skills, vs.Files, changed)
		if sum != 0 {
			// What the policy noted changes the replies: the generation
			// they are cached by says so (IndexGen stays the index's).
			l.Generation = mixGen(x.Gen, sum)
		}
		withhold(l, skills, withheld)
	}
	for _, s := range nested {
		vs.Heads.reportNested(ctx, s)
	}
	skillview.MarkDuplicates(vs.Config.Mount, skills)
	l.All = slices.Concat(skills, nested)
	for _, s := range nested {
		s.Location = skillview.Location(vs.Config.Mount + "/" + s.Dir)
	}
	slices.SortFunc(l.All, func(a, b *skillview.Ref) int { return strings.Compare(a.Dir, b.Dir) })
	l.Lookups(skills)
	if all {
		l.Protected = skillview.ProtectAll(l)
	}
	return l, nil
}

// base returns the layer under a caller's own: the shared library's, or
// for a caller in teams their team layers composed over it, by the rule of
// precedence user > team > organization. Two teams serving one name are
// both served (the name refers to the team first in ID order); a team's
// skill hides the shared skills of its name and path, as a user's does.
// lower holds the teams' layers in ID order, then the shared one. Each
// library's layer is built once for every caller; the composition is
// held once per set of teams (and their generations), which every member
// with those teams shares.
//
// Each lower layer's protected names (protect.go) apply: the shared library's
// protected skills take their names and paths from the teams' skills, and
// every protected skill served takes them from the user's (l.prot).
func (vs *Builder) base(teams []string, lower []*skillview.Layer) *skillview.Layer {
	sl := lower[len(lower)-1]
	if len(teams) == 0 && len(sl.Protected) == 0 {
		return sl
	}
	h := sha256.New()
	for _, l := range lower {
		fmt.Fprintf(h, "%d:%s:%d;", len(l.Name), l.Name, l.Generation)
	}
	gen := binary.BigEndian.Uint64(h.Sum(nil))
	key := "teams\x00" + strings.Join(teams, ",")
	if l, ok := vs.Shared.Get(key); ok && l.Generation == gen {
		return l
	}
	v, _, _ := vs.flight.Do(fmt.Sprintf("base\x00%s\x00%d", key, gen), func() (any, error) {
		l := vs.composeBase(teams, lower)
		l.Generation = gen
		hold(vs, vs.Shared, key, l, l.Bytes)
		return l, nil
	})
	return v.(*skillview.Layer)
}

// Overlay makes the user's layer own into a view over the shared layer sl
// (shadow, by name).
func (vs *Builder) Overlay(own, sl *skillview.Layer) *skillview.Overlay {
	return skillview.Shadow(vs.Config.Mount, vs.Config.MaxSkills, own, sl, true)
}

// composeBase is base's composition, uncached (composeBase).
func (vs *Builder) composeBase(teams []string, lower []*skillview.Layer) *skillview.Layer {
	return skillview.ComposeBase(vs.Config.Mount, vs.Config.MaxSkills, teams, lower)
}

// compose makes the layer upper shows over lower (compose).
func (vs *Builder) compose(upper, lower *skillview.Layer, byName bool) *skillview.Layer {
	return skillview.Compose(vs.Config.Mount, vs.Config.MaxSkills, upper, lower, byName)
}

// readSide parses the protected names and the scopes of the layer built from x, the
// library whose Side object is key: read through the file cache, by key and
// ETag, once per version. Protection fails closed: a read that fails is an
// error (the layer is not built, and the next call reads again), and a
// list that is no list (written by other tools) protects every skill of
// the library (all) until an administrator rewrites it; both are logged.
func (vs *Builder) readSide(ctx context.Context, x *libindex.Index, key string) (settings.Side, bool, error) {
	i, ok := slices.BinarySearchFunc(x.Objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
	if key == "" || !ok || vs.Files == nil {
		return settings.Side{}, false, nil
	}
	o := x.Objs[i]
	r, _, err := vs.Files.Open(ctx, o, 0, settings.MaxSideBytes+1)
	if err != nil {
		vs.Heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return settings.Side{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		vs.Heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return settings.Side{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	doc, err := settings.DecodeSide(data)
	if err != nil {
		vs.Heads.log.WarnContext(ctx, "skills: protected skills are no list; every skill of the library is protected until SetSkillProtected rewrites it",
			"key", key, "want", fmt.Sprintf(`{"names": [...]}: at most %d names within %d bytes`, settings.MaxProtectedNames, settings.MaxSideBytes))
		return settings.Side{}, true, nil
	}
	slices.Sort(doc.Names)
	doc.Names = slices.Compact(doc.Names)
	return doc, false, nil
}

// mixGen is a layer's generation from its index's and what the scan
// policy noted on it.
func mixGen(gen, sum uint64) uint64 {
	h := sha256.New()
	_ = binary.Write(h, binary.BigEndian, [2]uint64{gen, sum})
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// withhold takes the files of the skills at dirs out of the layer: listed
// (as invalid, with why), never read, through any surface.
func withhold(l *skillview.Layer, skills []*skillview.Ref, dirs []string) {
	if len(dirs) == 0 {
		return
	}
	in := func(rel string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(rel, d+"/") })
	}
	l.Entries = slices.DeleteFunc(slices.Clone(l.Entries), func(e skillview.Entry) bool { return in(e.Rel) })
	for _, s := range skills {
		if slices.Contains(dirs, s.Dir) {
			s.Files = nil
		}
	}
}
