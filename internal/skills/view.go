package skills

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Layer names.
const (
	LayerUser   = "user"
	LayerShared = "shared"
)

// entry is one file of the merged view.
type entry struct {
	rel string // path inside the library
	obj objstore.Object
}

// skillRef locates one skill folder.
type skillRef struct {
	dir      string // "category/name" or "name"
	name     string // folder name
	category string
	layer    string
	skillMD  objstore.Object
	files    []entry // every file of the folder, SKILL.md included, by rel
}

// view is one user's library merged over the shared one. Concurrent callers
// share it once built, so nothing changes it after views.get returns it.
type view struct {
	userGen, sharedGen uint64  // the listings it was built from
	userBase           string  // the user's layer prefix
	entries            []entry // sorted by rel
	skills             []*skillRef
	byDir              map[string]*skillRef
	byName             map[string]*skillRef
}

// views builds each user's merged view from the two layers' listings and
// reuses it while both listings are the same generation: every VFS call
// under the skills mount needs the view, and merging costs about as much as
// the call itself.
type views struct {
	listings *listings
	table    *mounts.Table
	cfg      Config
	cache    *lru.Cache[string, *view] // by user prefix; nil without a TTL
}

func newViews(ls *listings, table *mounts.Table, cfg Config) *views {
	vs := &views{listings: ls, table: table, cfg: cfg}
	if cfg.IndexTTL > 0 {
		vs.cache, _ = lru.New[string, *view](256)
	}
	return vs
}

// get returns the caller's view.
func (vs *views) get(ctx context.Context, id mounts.Identity) (*view, error) {
	r, err := vs.table.Resolve(id, vs.cfg.Mount)
	if err != nil {
		return nil, err
	}
	userBase := r.Prefix
	var userLs, sharedLs *listing
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { userLs, err = vs.listings.get(gctx, userBase); return err })
	g.Go(func() (err error) { sharedLs, err = vs.listings.get(gctx, vs.cfg.SharedPrefix); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if vs.cache != nil {
		if v, ok := vs.cache.Get(userBase); ok && v.userGen == userLs.gen && v.sharedGen == sharedLs.gen {
			return v, nil
		}
	}
	v := buildView(userBase, userLs, sharedLs, vs.cfg.SharedPrefix, vs.cfg.MaxSkills)
	if vs.cache != nil {
		vs.cache.Add(userBase, v)
	}
	return v, nil
}

// buildView merges the two layers of one user: every user file, plus the
// folders of shared skills that the user neither overrides by name nor
// shadows by path.
func buildView(userBase string, userLs, sharedLs *listing, sharedPrefix string, maxSkills int) *view {
	user := addressable(userLs.objs, userBase)
	shared := addressable(sharedLs.objs, sharedPrefix)

	v := &view{userGen: userLs.gen, sharedGen: sharedLs.gen, userBase: userBase, byDir: map[string]*skillRef{}, byName: map[string]*skillRef{}}
	userPaths := map[string]bool{} // every user file and ancestor directory
	for _, e := range user {
		for p := e.rel; p != "." && p != ""; p = path.Dir(p) {
			if userPaths[p] {
				break
			}
			userPaths[p] = true
		}
	}
	add := func(s *skillRef) {
		v.skills = append(v.skills, s)
		v.byDir[s.dir] = s
		if _, dup := v.byName[s.name]; !dup {
			v.byName[s.name] = s
		}
	}
	for _, s := range findSkills(user, LayerUser) {
		add(s)
	}
	userFiles := map[string]bool{}
	for _, e := range user {
		userFiles[e.rel] = true
	}
	// A shared skill is hidden by a user skill of the same name, by any user
	// file or folder at its path, or by a user file or flat skill where its
	// category is (a folder inside a flat skill is part of that skill).
	visibleShared := map[string]bool{}
	for _, s := range findSkills(shared, LayerShared) {
		_, overridden := v.byName[s.name]
		_, inFlatSkill := v.byDir[s.category]
		if overridden || inFlatSkill || userPaths[s.dir] || (s.category != "" && userFiles[s.category]) {
			continue
		}
		visibleShared[s.dir] = true
		add(s)
	}
	v.entries = append(v.entries, user...)
	for _, e := range shared {
		if d := skillDirOf(e.rel, visibleShared); d != "" {
			v.entries = append(v.entries, e)
		}
	}
	sort.Slice(v.entries, func(i, j int) bool { return v.entries[i].rel < v.entries[j].rel })
	sort.Slice(v.skills, func(i, j int) bool { return v.skills[i].dir < v.skills[j].dir })
	if len(v.skills) > maxSkills {
		v.skills = v.skills[:maxSkills]
	}
	// Attach each file to its skill.
	for _, e := range v.entries {
		if d := skillDirOf(e.rel, v.byDir); d != "" {
			s := v.byDir[d]
			s.files = append(s.files, e)
		}
	}
	return v
}

// addressable drops keys that no virtual path can name.
func addressable(objs []objstore.Object, prefix string) []entry {
	out := make([]entry, 0, len(objs))
	for _, o := range objs {
		if rel := strings.TrimPrefix(o.Key, prefix); mounts.Addressable(rel) {
			out = append(out, entry{rel: rel, obj: o})
		}
	}
	return out
}

// findSkills returns the skill folders among the rel paths of one layer:
// <name>/SKILL.md, or <category>/<name>/SKILL.md when <category> is not
// itself a skill.
func findSkills(entries []entry, layer string) []*skillRef {
	flat := map[string]bool{}
	for _, e := range entries {
		if d, f := path.Split(e.rel); f == "SKILL.md" && d != "" && !strings.Contains(strings.TrimSuffix(d, "/"), "/") {
			flat[strings.TrimSuffix(d, "/")] = true
		}
	}
	var out []*skillRef
	for _, e := range entries {
		dir, file := path.Split(e.rel)
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || dir == "" {
			continue
		}
		cat, name, categorized := strings.Cut(dir, "/")
		switch {
		case !categorized:
			cat, name = "", dir
		case strings.Contains(name, "/") || flat[cat]:
			continue // deeper, or inside a flat skill's folder
		}
		out = append(out, &skillRef{dir: dir, name: name, category: cat, layer: layer, skillMD: e.obj})
	}
	return out
}

// skillDirOf returns the skill folder (a key of dirs) that holds rel, or "".
func skillDirOf[V any](rel string, dirs map[string]V) string {
	first, rest, ok := strings.Cut(rel, "/")
	if !ok {
		return ""
	}
	if _, ok := dirs[first]; ok {
		return first
	}
	second, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	if _, ok := dirs[first+"/"+second]; ok {
		return first + "/" + second
	}
	return ""
}

// find resolves a skill reference: a path under mount (the folder or its
// SKILL.md), a folder path relative to the library, or a bare skill name.
func (v *view) find(mount, ref string) (*skillRef, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("%w: a skill path or name is required", errkind.InvalidArgument)
	}
	rel := ref
	if strings.HasPrefix(ref, "/") {
		if err := mounts.CleanPath(ref); err != nil {
			return nil, err
		}
		var ok bool
		if rel, ok = strings.CutPrefix(ref, mount+"/"); !ok {
			return nil, fmt.Errorf("%w: %q is not under %s", errkind.InvalidArgument, ref, mount)
		}
	} else if err := mounts.CleanPath("/" + ref); err != nil {
		return nil, err
	}
	rel = strings.TrimSuffix(rel, "/SKILL.md")
	if s, ok := v.byDir[rel]; ok {
		return s, nil
	}
	if s, ok := v.byName[rel]; ok && !strings.Contains(rel, "/") {
		return s, nil
	}
	return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
}
