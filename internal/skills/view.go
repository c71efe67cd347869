package skills

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
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
	dir      string // "category/folder" or "folder"
	folder   string // the folder's own name
	category string
	layer    string
	// name is what the skill is listed and addressed by: its frontmatter
	// name, or the folder's when the frontmatter has no usable one.
	name     string
	skillMD  objstore.Object
	files    []entry          // every file of the folder, SKILL.md included, by rel
	head     parsed           // the frontmatter as of the listing
	manifest *Manifest        // files by digest, from the layer's index
	notes    skillmd.Problems // what merging found: a name declared twice, a folder nested too deep
	nested   bool             // deeper than <category>/<skill>: reported, never served
}

// problems are the skill's own problems and the view's notes on it. The
// head's slices are shared with the cache, so the result is a new slice.
func (s *skillRef) problems() skillmd.Problems {
	return skillmd.Problems{
		Errors:   slices.Concat(s.head.problems.Errors, s.notes.Errors),
		Warnings: slices.Concat(s.head.problems.Warnings, s.notes.Warnings),
	}
}

// view is one user's library merged over the shared one. Concurrent callers
// share it once built, so nothing changes it after views.get returns it.
type view struct {
	userGen, sharedGen uint64      // the indexes it was built from
	userBase           string      // the user's layer prefix
	entries            []entry     // sorted by rel
	skills             []*skillRef // sorted by dir; nested folders included
	byDir              map[string]*skillRef
	byName             map[string]*skillRef   // the skill each name refers to
	byFolder           map[string][]*skillRef // served skills by folder name
	byDisplay          map[string][]*skillRef // by display name
	// digest is the sha256 of what the library digest says of every served
	// skill (libraryDigest adds the caller's settings to it).
	digest [sha256.Size]byte
}

// views builds each user's merged view from the two layers' indexes, and
// reuses it while both indexes are the same generation: every VFS call
// under the skills mount needs the view, and merging costs about as much
// as the call itself.
type views struct {
	indexes *libindex.Store
	heads   *heads
	table   *mounts.Table
	cfg     Config
	cache   *lru.Cache[string, *view] // by user prefix
	// manifests are each layer's, by layer prefix: every user's view
	// built from one shared index shares them.
	manifests *lru.Cache[string, layerManifests]
}

func newViews(ix *libindex.Store, hs *heads, table *mounts.Table, cfg Config) *views {
	vs := &views{indexes: ix, heads: hs, table: table, cfg: cfg}
	vs.cache, _ = lru.New[string, *view](cfg.MaxHeldIndexes)
	vs.manifests, _ = lru.New[string, layerManifests](cfg.MaxHeldIndexes)
	return vs
}

// layers returns the caller's library layer and the shared one.
func (vs *views) layers(id mounts.Caller) (own, shared libindex.Layer, err error) {
	r, err := vs.table.Resolve(id, vs.cfg.Mount)
	if err != nil {
		return libindex.Layer{}, libindex.Layer{}, err
	}
	own = libindex.Layer{Tag: id.User(), Prefix: r.Prefix, Object: strings.Replace(vs.cfg.IndexKey, "{user}", id.User(), 1)}
	shared = libindex.Layer{Tag: libindex.SharedTag, Prefix: vs.cfg.SharedPrefix, Object: vs.cfg.SharedIndexKey}
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
// library and settings: those depend on the user alone, and the thread only
// gives the identity its required shape. The operator's request named the
// user, so it is validated here, where it comes in.
func (vs *views) operator(user string) (mounts.Caller, error) {
	return vs.table.Identify(mounts.Identity{User: user, Thread: "index"})
}

// get returns the caller's view.
func (vs *views) get(ctx context.Context, id mounts.Caller) (*view, error) {
	own, shared, err := vs.layers(id)
	if err != nil {
		return nil, err
	}
	var userIdx, sharedIdx *libindex.Index
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { userIdx, err = vs.indexes.Get(gctx, own); return err })
	g.Go(func() (err error) { sharedIdx, err = vs.indexes.Get(gctx, shared); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if v, ok := vs.cache.Get(own.Prefix); ok && v.userGen == userIdx.Gen && v.sharedGen == sharedIdx.Gen {
		return v, nil
	}
	v := vs.build(ctx, own.Prefix, userIdx, sharedIdx)
	vs.cache.Add(own.Prefix, v)
	return v, nil
}

// forget drops the user's view.
func (vs *views) forget(userBase string) { vs.cache.Remove(userBase) }

// layerFiles is one library's files and the skill folders among them.
type layerFiles struct {
	gen     uint64
	entries []entry
	skills  []*skillRef // heads parsed
	nested  []*skillRef // SKILL.md files deeper than <category>/<skill>
}

// build finds the skills of both layers and parses the heads their indexes
// hold (once per version): a skill overrides another by its frontmatter
// name, which only the head holds. It reads nothing from storage.
func (vs *views) build(ctx context.Context, userBase string, userIdx, sharedIdx *libindex.Index) *view {
	user := vs.layerFiles(ctx, userIdx, userBase, LayerUser)
	shared := vs.layerFiles(ctx, sharedIdx, vs.cfg.SharedPrefix, LayerShared)
	return mergeLayers(vs.cfg.Mount, userBase, user, shared, vs.cfg.MaxSkills)
}

func (vs *views) layerFiles(ctx context.Context, x *libindex.Index, prefix, layerName string) layerFiles {
	lf := layerFiles{gen: x.Gen, entries: addressable(x.Objs, prefix)}
	lf.skills, lf.nested = layerSkills(lf.entries, layerName, vs.cfg.MaxSkills)
	manifests := vs.layerManifests(prefix, x, lf.skills)
	lf.skills = slices.DeleteFunc(lf.skills, func(s *skillRef) bool {
		head, ok := x.Heads[s.skillMD.Key]
		if !ok {
			return true // deleted between the listing and the read of its head
		}
		s.head = vs.heads.parse(ctx, s, head)
		s.name = cmp.Or(s.head.fm.Name, s.folder)
		s.manifest = manifests[s.dir]
		return false
	})
	for _, s := range lf.nested {
		vs.heads.reportNested(ctx, s)
	}
	return lf
}

// mergeLayers merges the two layers of one user: every user file, plus the
// folders of shared skills that the user neither overrides by name nor
// shadows by path.
func mergeLayers(mount, userBase string, user, shared layerFiles, maxSkills int) *view {
	v := &view{
		userGen: user.gen, sharedGen: shared.gen, userBase: userBase,
		byDir: map[string]*skillRef{}, byName: map[string]*skillRef{},
		byFolder: map[string][]*skillRef{}, byDisplay: map[string][]*skillRef{},
	}
	userPaths := map[string]bool{} // every user file and ancestor directory
	userFiles := map[string]bool{}
	for _, e := range user.entries {
		userFiles[e.rel] = true
		for p := e.rel; p != "." && p != ""; p = path.Dir(p) {
			if userPaths[p] {
				break
			}
			userPaths[p] = true
		}
	}
	userDirs := map[string]bool{}
	userNames := map[string]bool{}
	for _, s := range user.skills {
		userDirs[s.dir] = true
		userNames[s.name] = true
	}
	// A shared folder is shadowed by any user file or folder at its path,
	// and by a user file or skill folder where one of its ancestors is (a
	// folder inside a skill is part of that skill).
	shadowed := func(dir string) bool {
		if userPaths[dir] {
			return true
		}
		for p := path.Dir(dir); p != "."; p = path.Dir(p) {
			if userFiles[p] || userDirs[p] {
				return true
			}
		}
		return false
	}
	var sharedSkills []*skillRef
	for _, s := range shared.skills {
		if !userNames[s.name] && !shadowed(s.dir) {
			sharedSkills = append(sharedSkills, s)
		}
	}
	var sharedNested []*skillRef
	for _, s := range shared.nested {
		if !shadowed(s.dir) {
			sharedNested = append(sharedNested, s)
		}
	}
	// Names are settled per layer among the skills it shows: the user's
	// layer hides the shared skills it names, so neither layer's
	// duplicates can pick a winner from the other.
	served := markDuplicates(mount, user.skills)
	maps.Copy(served, markDuplicates(mount, sharedSkills)) // names no user skill has
	v.skills = slices.Concat(user.skills, sharedSkills, user.nested, sharedNested)
	sort.Slice(v.skills, func(i, j int) bool { return v.skills[i].dir < v.skills[j].dir })
	if len(v.skills) > maxSkills {
		v.skills = v.skills[:maxSkills]
	}
	kept := map[*skillRef]bool{}
	for _, s := range v.skills {
		kept[s] = true
		v.byDir[s.dir] = s
	}
	for name, s := range served {
		if kept[s] {
			v.byName[name] = s
		}
	}
	for _, s := range v.skills {
		if !s.nested {
			v.byFolder[s.folder] = append(v.byFolder[s.folder], s)
			if d := s.head.fm.DisplayName; d != "" {
				v.byDisplay[d] = append(v.byDisplay[d], s)
			}
		}
	}

	visibleShared := map[string]bool{}
	for _, s := range slices.Concat(sharedSkills, sharedNested) {
		visibleShared[s.dir] = true
	}
	v.entries = append(v.entries, user.entries...)
	for _, e := range shared.entries {
		for p := path.Dir(e.rel); p != "."; p = path.Dir(p) {
			if visibleShared[p] {
				v.entries = append(v.entries, e)
				break
			}
		}
	}
	sort.Slice(v.entries, func(i, j int) bool { return v.entries[i].rel < v.entries[j].rel })
	v.digest = viewDigest(mount, v.skills)
	return v
}

// markDuplicates picks, for each name that several skills of one layer
// declare, the one the name refers to, and notes the choice on all of them.
// The pick is deterministic: a valid skill before an invalid one, then the
// one whose folder is named so, then the first by path. It returns the
// skill each name refers to.
func markDuplicates(mount string, refs []*skillRef) map[string]*skillRef {
	byName := map[string][]*skillRef{}
	for _, s := range refs {
		byName[s.name] = append(byName[s.name], s)
	}
	out := make(map[string]*skillRef, len(byName))
	for name, group := range byName {
		if len(group) > 1 {
			slices.SortFunc(group, func(a, b *skillRef) int {
				return cmp.Or(
					compareTrueFirst(a.head.problems.Valid(), b.head.problems.Valid()),
					compareTrueFirst(a.folder == name, b.folder == name),
					strings.Compare(a.dir, b.dir))
			})
			paths := func(skip *skillRef) string {
				var ps []string
				for _, o := range group {
					if o != skip {
						ps = append(ps, mount+"/"+o.dir)
					}
				}
				slices.Sort(ps)
				return listed(ps, 5)
			}
			winner := group[0]
			winner.notes.Warnf("name %q is also declared by %s; the name refers to this skill", name, paths(winner))
			for _, s := range group[1:] {
				s.notes.Warnf("name %q is also declared by %s, which the name refers to; refer to this skill by its path %s",
					name, mount+"/"+winner.dir, mount+"/"+s.dir)
			}
		}
		out[name] = group[0]
	}
	return out
}

func compareTrueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// listed joins up to n items, saying how many more there are.
func listed(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
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

// nestedProblem explains why a SKILL.md deeper than <category>/<skill> is
// not served.
const nestedProblem = "SKILL.md is nested deeper than <category>/<skill>: only <skill>/SKILL.md and <category>/<skill>/SKILL.md are skills; move the folder up to serve it"

// findSkills returns the skill folders among the rel paths of one layer,
// at most max of them, sorted by path: <name>/SKILL.md, or
// <category>/<name>/SKILL.md when <category> is not itself a skill. Second,
// it returns the folders of SKILL.md files that lie deeper and inside no
// skill, so they can be reported instead of silently ignored.
func findSkills(entries []entry, layer string, max int) (skills, nested []*skillRef) {
	flat := map[string]bool{}
	for _, e := range entries {
		if d, f := path.Split(e.rel); f == "SKILL.md" && d != "" && !strings.Contains(strings.TrimSuffix(d, "/"), "/") {
			flat[strings.TrimSuffix(d, "/")] = true
		}
	}
	categorized := map[string]bool{}
	for _, e := range entries {
		dir, file := path.Split(e.rel)
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || dir == "" {
			continue
		}
		cat, rest, isCategorized := strings.Cut(dir, "/")
		switch {
		case !isCategorized:
			skills = append(skills, &skillRef{dir: dir, folder: dir, name: dir, layer: layer, skillMD: e.obj})
		case flat[cat]:
			// a file of the flat skill cat
		case !strings.Contains(rest, "/"):
			categorized[dir] = true
			skills = append(skills, &skillRef{dir: dir, folder: rest, name: rest, category: cat, layer: layer, skillMD: e.obj})
		}
	}
	for _, e := range entries {
		dir, file := path.Split(e.rel)
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || strings.Count(dir, "/") < 2 {
			continue
		}
		cat, rest, _ := strings.Cut(dir, "/")
		second, _, _ := strings.Cut(rest, "/")
		if flat[cat] || categorized[cat+"/"+second] {
			continue // a file of a skill
		}
		n := &skillRef{dir: dir, folder: path.Base(dir), name: path.Base(dir), category: cat, layer: layer, skillMD: e.obj, nested: true}
		n.notes.Errorf("%s", nestedProblem)
		nested = append(nested, n)
	}
	byDir := func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) }
	slices.SortFunc(skills, byDir)
	slices.SortFunc(nested, byDir)
	return skills[:min(len(skills), max)], nested[:min(len(nested), max)]
}

// layerSkills is findSkills with each skill's files attached: every entry
// of the layer inside its folder. A layer's skill never holds another
// layer's file: where the user has a file, the shared folder around it is
// shadowed.
func layerSkills(entries []entry, layer string, max int) (skills, nested []*skillRef) {
	skills, nested = findSkills(entries, layer, max)
	byDir := make(map[string]*skillRef, len(skills))
	for _, s := range skills {
		byDir[s.dir] = s
	}
	for _, e := range entries {
		if d := skillDirOf(e.rel, byDir); d != "" {
			byDir[d].files = append(byDir[d].files, e)
		}
	}
	return skills, nested
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

// file returns the entry at rel.
func (v *view) file(rel string) (entry, bool) {
	i := sort.Search(len(v.entries), func(i int) bool { return v.entries[i].rel >= rel })
	if i < len(v.entries) && v.entries[i].rel == rel {
		return v.entries[i], true
	}
	return entry{}, false
}

// find resolves a skill reference, in the order a caller most likely means
// it: a path under mount (the folder or its SKILL.md); a skill name as
// listed; a folder path relative to the library; a bare folder name or a
// display name, when only one skill has it.
func (v *view) find(mount, ref string) (*skillRef, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("%w: a skill path or name is required", errkind.InvalidArgument)
	}
	if strings.HasPrefix(ref, "/") {
		if err := mounts.CleanPath(ref); err != nil {
			return nil, err
		}
		rel, ok := strings.CutPrefix(ref, mount+"/")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not under %s", errkind.InvalidArgument, ref, mount)
		}
		if s, ok := v.byDir[strings.TrimSuffix(rel, "/SKILL.md")]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
	}
	if s, ok := v.byName[ref]; ok {
		return s, nil
	}
	pathErr := mounts.CleanPath("/" + ref)
	if pathErr == nil {
		rel := strings.TrimSuffix(ref, "/SKILL.md")
		if s, ok := v.byDir[rel]; ok {
			return s, nil
		}
		if !strings.Contains(rel, "/") {
			if s, err := v.unique(mount, ref, "folder", v.byFolder[rel]); s != nil || err != nil {
				return s, err
			}
		}
	}
	if s, err := v.unique(mount, ref, "display name", v.byDisplay[ref]); s != nil || err != nil {
		return s, err
	}
	if pathErr != nil {
		return nil, pathErr
	}
	return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
}

// unique returns the one skill of refs, nil for none, and an error naming
// the candidates when ref is ambiguous.
func (v *view) unique(mount, ref, what string, refs []*skillRef) (*skillRef, error) {
	switch len(refs) {
	case 0:
		return nil, nil
	case 1:
		return refs[0], nil
	}
	paths := make([]string, len(refs))
	for i, s := range refs {
		paths[i] = mount + "/" + s.dir
	}
	return nil, fmt.Errorf("%w: %q is the %s of %d skills (%s): refer to one by its name or path",
		errkind.InvalidArgument, ref, what, len(refs), listed(paths, 5))
}

// indexedSkills is the rule libindex builds an index by: the skills among
// objs as a view finds them, each with the files it serves, so an index
// holds the heads and digests a view reads.
func indexedSkills(objs []objstore.Object, prefix string, maxSkills int) []libindex.Skill {
	refs, _ := layerSkills(addressable(objs, prefix), "", maxSkills)
	out := make([]libindex.Skill, len(refs))
	for i, s := range refs {
		files := make([]objstore.Object, len(s.files))
		for j, e := range s.files {
			files[j] = e.obj
		}
		out[i] = libindex.Skill{SkillMD: s.skillMD, Files: files}
	}
	return out
}
