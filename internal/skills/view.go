package skills

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"iter"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Layer names. A team library's layer is LayerTeam followed by its ID
// ("team:legal").
const (
	LayerUser   = "user"
	LayerShared = "shared"
	LayerTeam   = "team:"
)

// entry is one file of the merged view.
type entry struct {
	rel string // path inside the library
	obj objstore.Object
}

// skillRef locates one skill folder. A layer holds one per skill, so its
// fields are what cannot be had from the others (category) or the layer
// (skillMD points into its entries).
type skillRef struct {
	dir   string // "category/folder" or "folder"
	layer string
	// name is what the skill is listed and addressed by: its frontmatter
	// name, or the folder's when the frontmatter has no usable one.
	name     string
	skillMD  *objstore.Object // its entry's object, in the layer's entries
	location string           // the virtual path of its SKILL.md (Skill.Location)
	files    []entry          // every file of the folder, SKILL.md included, by rel
	head     parsed           // the frontmatter as of the listing
	manifest *Manifest        // files by digest, from the layer's index
	// notes are what merging found: a name declared twice, a folder
	// nested too deep. nil for most skills, so a pointer (note, addNotes).
	notes  *skillmd.Problems
	nested bool // deeper than <category>/<skill>: reported, never served
}

// folder is the folder's own name: the last of dir.
func (s *skillRef) folder() string { return s.dir[strings.LastIndexByte(s.dir, '/')+1:] }

// category is the first folder of dir, or "" for a flat skill.
func (s *skillRef) category() string {
	cat, _, ok := strings.Cut(s.dir, "/")
	if !ok {
		return ""
	}
	return cat
}

// note returns s's notes.
func (s *skillRef) note() skillmd.Problems {
	if s.notes == nil {
		return skillmd.Problems{}
	}
	return *s.notes
}

// addNotes returns s's notes to add to.
func (s *skillRef) addNotes() *skillmd.Problems {
	if s.notes == nil {
		s.notes = new(skillmd.Problems)
	}
	return s.notes
}

// problems are the skill's own problems and the view's notes on it. The
// head's slices are shared with the cache, so the result is a new slice.
func (s *skillRef) problems() skillmd.Problems {
	return skillmd.Problems{
		Errors:   slices.Concat(s.head.problems.Errors, s.note().Errors),
		Warnings: slices.Concat(s.head.problems.Warnings, s.note().Warnings),
	}
}

// A view is one user's library merged over the shared one. It is built of
// two layers, each made once per generation of its library's index: the
// shared layer, which every user's view reads in place, and the user's own,
// in the overlay that also holds what the user's layer hides of the shared
// one. A user with 5 skills over a shared library of 300 holds 5 skills'
// worth of memory, not 305. Lookups ask the user's layer first, then the
// shared one through the overlay; iterations merge both in path order.
//
// A view is made per call (two pointers); layers and overlays are shared
// by concurrent callers once built, so nothing changes them after.
type view struct {
	*overlay
	// shared is the layer under the user's: the shared library's, or for a
	// caller in teams their team layers composed over it (base).
	shared   *layer
	userBase string // the user's library (its prefix): replies are keyed by it
	// lower are the layers under the user's as their libraries serve them,
	// the caller's teams in ID order then the shared library: what the
	// view's notes on shadowing name (notes.go).
	lower []*layer
	// scope, when the caller names one, narrows what the view shows
	// (scope.go); nil shows every skill.
	scope *scoped
}

// layer is one library's files and skill folders as views serve them. Its
// lookups are binary searches of sorted slices: maps would cost a user's
// layer of a few skills more than the skills themselves.
type layer struct {
	gen     uint64
	name    string  // LayerShared, or LayerTeam and the team's ID
	entries []entry // addressable files, sorted by rel
	// owner is, per entry, the position in all of the shallowest folder
	// holding it, or -1: which shared files a view shows follows from
	// which shared folders it shows.
	owner []int32
	all   []*skillRef // skills (heads parsed) and nested folders, by dir
	// The skills (not nested): by name, the one the name refers to first
	// (markDuplicates' order); by folder name, then dir; and those with a
	// display name by it, then dir.
	names, folders, displays []*skillRef
	bytes                    int64 // the heap it keeps alive (estimated)
	// prot, of a base layer (teams.go), holds the protected skills it
	// serves, which the user's layer is composed under.
	prot *layer
	// protected are the names the library protects (protect.go).
	protected []string
	// scopes are the scopes the library defines (scope.go), compiled.
	scopes map[string]*scope
	// shadowed, of a base layer, are the skills of its libraries that
	// others hide by name alone, by dir: reachable by their paths.
	shadowed []*skillRef
}

// overlay is a user's layer and what it makes of the shared layer of one
// generation: the shared folders it hides (a user skill of the same name,
// a user file or folder at or above their path), and the shared skills
// whose notes on duplicate names change because some of the skills
// declaring their name are hidden.
type overlay struct {
	userGen, sharedGen uint64 // the indexes it was built from
	own                *layer
	raw                *layer   // the user's layer, before protected skills took their names and paths
	hidden             []string // the dirs of shared folders, sorted
	// byName are the dirs among hidden of skills hidden by name alone: no
	// file of own is at or above their path, so they stay reachable by it
	// (view.hiddenAt).
	byName []string
	// regrouped replaces the shared skills of names declared twice of which
	// the user hides some, by dir; renamed is the skill each such name
	// refers to (nil: none is shown).
	regrouped map[string]*skillRef
	renamed   map[string]*skillRef
	// last is the dir of the last folder shown when the two layers hold
	// more than --skills.max-skills: the view stops there.
	last string
	// digestSum is the sha256 of what the library digest says of every
	// served skill (libraryDigest adds the caller's settings to it), made
	// when first asked (view.digest): a GetSkill or a file read on a
	// rebuilt view never needs it.
	digestOnce sync.Once
	digestSum  [sha256.Size]byte
	mount      string
	bytes      int64 // the heap it keeps alive (estimated), its own layer included
}

// lookups sorts the layer's skills (those of all not nested) into its
// lookups, and finds each entry's owner. The name lookup puts first the
// skill a name refers to: by layer (teams in ID order), then
// duplicateOrder.
func (l *layer) lookups(skills []*skillRef) {
	l.names = slices.Clone(skills)
	slices.SortFunc(l.names, func(a, b *skillRef) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.layer, b.layer), duplicateOrder(a.name, a, b))
	})
	l.folders = slices.Clone(skills)
	slices.SortFunc(l.folders, func(a, b *skillRef) int {
		return cmp.Or(strings.Compare(a.folder(), b.folder()), strings.Compare(a.dir, b.dir))
	})
	for _, s := range skills {
		if s.head.fm.DisplayName != "" {
			l.displays = append(l.displays, s)
		}
	}
	slices.SortFunc(l.displays, func(a, b *skillRef) int {
		return cmp.Or(strings.Compare(a.head.fm.DisplayName, b.head.fm.DisplayName), strings.Compare(a.dir, b.dir))
	})
	l.owner = make([]int32, len(l.entries))
	for i, e := range l.entries {
		l.owner[i] = -1
		for p := e.rel; ; {
			first, _, ok := strings.Cut(p, "/")
			if !ok {
				break
			}
			if at, ok := l.find(e.rel[:len(e.rel)-len(p)+len(first)]); ok {
				l.owner[i] = int32(at)
				break
			}
			p = p[len(first)+1:]
		}
	}
	l.bytes = l.heldBytes()
}

// find returns the position in all of the folder at dir.
func (l *layer) find(dir string) (int, bool) {
	return slices.BinarySearchFunc(l.all, dir, func(s *skillRef, dir string) int { return strings.Compare(s.dir, dir) })
}

// dir returns the folder at dir.
func (l *layer) dir(dir string) (*skillRef, bool) {
	if i, ok := l.find(dir); ok {
		return l.all[i], true
	}
	return nil, false
}

// run returns the skills of sorted (by key, then anything) whose key is k.
func run(sorted []*skillRef, k string, key func(*skillRef) string) []*skillRef {
	i, _ := slices.BinarySearchFunc(sorted, k, func(s *skillRef, k string) int { return strings.Compare(key(s), k) })
	j := i
	for j < len(sorted) && key(sorted[j]) == k {
		j++
	}
	return sorted[i:j:j]
}

// named returns the layer's skills declaring name, the one the name refers
// to (within the layer) first.
func (l *layer) named(name string) []*skillRef {
	return run(l.names, name, func(s *skillRef) string { return s.name })
}

func (l *layer) folder(f string) []*skillRef {
	return run(l.folders, f, func(s *skillRef) string { return s.folder() })
}

func (l *layer) display(d string) []*skillRef {
	return run(l.displays, d, func(s *skillRef) string { return s.head.fm.DisplayName })
}

// parsed returns the parsed head l holds of the version of s's SKILL.md;
// l may be nil.
func (l *layer) parsed(s *skillRef) (parsed, bool) {
	if l == nil || s.skillMD.ETag == "" {
		return parsed{}, false
	}
	p, ok := l.dir(s.dir)
	if !ok || p.nested || p.skillMD.Key != s.skillMD.Key || p.skillMD.ETag != s.skillMD.ETag {
		return parsed{}, false
	}
	return p.head, true
}

// overlay makes the user's layer own into a view over the shared layer sl.
// Its cost follows the user's layer: what it hides is found from the
// user's paths and names, never by walking the shared library, but for the
// digest and the cut at --skills.max-skills.
func (vs *views) overlay(own, sl *layer) *overlay { return vs.shadow(own, sl, true) }

// shadow is overlay; byName false hides only by path, as one team's
// library does another's: both skills of a name are then served.
func (vs *views) shadow(own, sl *layer, byName bool) *overlay {
	o := &overlay{userGen: own.gen, sharedGen: sl.gen, own: own}
	hidden := map[string]bool{}
	hide := func(s *skillRef) { hidden[s.dir] = true }
	// A shared folder is shadowed by any user file or folder at its path,
	// and by a user file or skill folder where one of its ancestors is (a
	// folder inside a skill is part of that skill).
	under := func(dir string) {
		prefix := dir + "/"
		i, _ := sl.find(prefix)
		for ; i < len(sl.all) && strings.HasPrefix(sl.all[i].dir, prefix); i++ {
			hide(sl.all[i])
		}
	}
	seen := map[string]bool{}
	for _, e := range own.entries {
		under(e.rel)
		for p := e.rel; p != "." && p != "" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			if s, ok := sl.dir(p); ok {
				hide(s)
			}
		}
	}
	for _, s := range own.names {
		under(s.dir)
	}
	byPath := maps.Clone(hidden)
	for _, s := range own.names {
		// A protected skill of the lower layer passed up into own
		// (protect.go) hides only itself, not the lower layer's namesakes.
		if d, ok := sl.dir(s.dir); !byName || (ok && d == s) {
			continue
		}
		for _, g := range sl.named(s.name) {
			hide(g)
			if !byPath[g.dir] {
				o.byName = append(o.byName, g.dir)
			}
		}
	}
	slices.Sort(o.byName)
	o.byName = slices.Compact(o.byName)
	// Names are settled per layer among the skills it shows: where the
	// user hides some of the shared skills declaring a name, the rest are
	// settled again, on copies.
	for dir := range hidden {
		s, _ := sl.dir(dir)
		group := sl.named(s.name)
		if _, done := o.renamed[s.name]; done || s.nested || len(group) < 2 || len(own.named(s.name)) > 0 {
			continue
		}
		if o.renamed == nil {
			o.renamed, o.regrouped = map[string]*skillRef{}, map[string]*skillRef{}
		}
		var rest []*skillRef
		for _, g := range group {
			if !hidden[g.dir] {
				c := *g
				c.notes = nil
				rest = append(rest, &c)
				o.regrouped[c.dir] = &c
			}
		}
		o.renamed[s.name] = markDuplicates(vs.cfg.Mount, rest)[s.name]
	}
	o.hidden = slices.Sorted(maps.Keys(hidden))
	v := &view{overlay: o, shared: sl}
	if n := len(own.all) + len(sl.all) - len(o.hidden); n > vs.cfg.MaxSkills {
		i := 0
		for s := range v.all() {
			if i++; i == vs.cfg.MaxSkills {
				o.last = s.dir
				break
			}
		}
	}
	o.mount = vs.cfg.Mount
	o.bytes = o.heldBytes()
	return o
}

// digest is the overlay's digest (digestSum), made on first use. The view's
// shared layer is the one the overlay was made over (its generation is the
// overlay's sharedGen), so every view of the overlay hashes alike.
func (v *view) digest() [sha256.Size]byte {
	// Of every skill the overlay serves, whatever scope the view applies:
	// libraryDigest adds the scope.
	all := (&view{overlay: v.overlay, shared: v.shared}).all()
	v.digestOnce.Do(func() { v.digestSum = viewDigest(v.mount, all) })
	return v.digestSum
}

// hides reports whether the user's layer hides the shared folder at dir.
func (o *overlay) hides(dir string) bool {
	_, ok := slices.BinarySearch(o.hidden, dir)
	return ok
}

// shown returns the skill a view shows for s, a folder of the shared layer:
// nil when hidden, its copy with the user's notes when regrouped.
func (v *view) shown(s *skillRef) *skillRef {
	if s == nil || v.hides(s.dir) || !v.kept(s) {
		return nil
	}
	if c, ok := v.regrouped[s.dir]; ok {
		return c
	}
	return s
}

// hiddenAt returns the skill of a lower layer at dir that a skill of
// another name's hides by name alone (in this view, or in composing its
// base layer, teams.go): listed under that name, it is still reachable by
// its path. nil when there is none, or a folder of the view is there.
func (v *view) hiddenAt(dir string) *skillRef {
	if s := v.hiddenAtAll(dir); s != nil && v.inScope(s) {
		return s
	}
	return nil
}

// hiddenAtAll is hiddenAt whatever the view's scope.
func (v *view) hiddenAtAll(dir string) *skillRef {
	if _, ok := v.own.dir(dir); ok {
		return nil
	}
	if _, ok := v.shared.dir(dir); ok {
		if _, hidden := slices.BinarySearch(v.byName, dir); hidden {
			s, _ := v.shared.dir(dir)
			return s
		}
		return nil
	}
	i, ok := slices.BinarySearchFunc(v.shared.shadowed, dir, func(s *skillRef, dir string) int { return strings.Compare(s.dir, dir) })
	if !ok {
		return nil
	}
	// A file of the user's at or below the path takes it.
	if i, _ := findEntry(v.own.entries, dir); i < len(v.own.entries) && (v.own.entries[i].rel == dir || strings.HasPrefix(v.own.entries[i].rel, dir+"/")) {
		return nil
	}
	for p := path.Dir(dir); p != "."; p = path.Dir(p) {
		if _, ok := findEntry(v.own.entries, p); ok {
			return nil
		}
	}
	return v.shared.shadowed[i]
}

// kept reports whether the view keeps s, a folder of one of its layers:
// within its --skills.max-skills (withinCut) and its scope (inScope).
// Every lookup of the view asks it, so a scoped view shows its set alone
// on every surface.
func (v *view) kept(s *skillRef) bool { return v.withinCut(s) && v.inScope(s) }

// withinCut reports whether s is within the view's --skills.max-skills.
func (v *view) withinCut(s *skillRef) bool { return v.last == "" || s.dir <= v.last }

// all returns the view's folders (skills and nested ones) in path order.
func (v *view) all() iter.Seq[*skillRef] {
	return func(yield func(*skillRef) bool) {
		own, shared := v.own.all, v.shared.all
		for len(own) > 0 || len(shared) > 0 {
			var s *skillRef
			if len(shared) == 0 || (len(own) > 0 && own[0].dir < shared[0].dir) {
				s, own = own[0], own[1:]
				if !v.withinCut(s) {
					return
				}
				if !v.inScope(s) {
					continue
				}
			} else {
				s, shared = v.shown(shared[0]), shared[1:]
				if s == nil {
					continue
				}
			}
			if !v.kept(s) || !yield(s) {
				return
			}
		}
	}
}

// skill returns the folder at dir.
func (v *view) skill(dir string) (*skillRef, bool) {
	if s, ok := v.own.dir(dir); ok {
		return s, v.kept(s)
	}
	s, _ := v.shared.dir(dir)
	s = v.shown(s)
	return s, s != nil
}

// named returns the skill name refers to.
func (v *view) named(name string) (*skillRef, bool) {
	if own := v.own.named(name); len(own) > 0 {
		return own[0], v.kept(own[0])
	}
	if s, ok := v.renamed[name]; ok {
		return s, s != nil && v.kept(s)
	}
	shared := v.shared.named(name)
	if len(shared) == 0 || v.hides(shared[0].dir) || !v.kept(shared[0]) {
		return nil, false
	}
	return shared[0], true
}

// merged is the view's skills among own's and shared's (of one folder or
// display name), in path order.
func (v *view) merged(own, shared []*skillRef) []*skillRef {
	var out []*skillRef
	for _, s := range own {
		if v.kept(s) {
			out = append(out, s)
		}
	}
	for _, s := range shared {
		if s = v.shown(s); s != nil {
			out = append(out, s)
		}
	}
	if len(own) > 0 && len(shared) > 0 {
		slices.SortFunc(out, func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) })
	}
	return out
}

// file returns the entry at rel.
func (v *view) file(rel string) (entry, bool) {
	if i, ok := findEntry(v.own.entries, rel); ok {
		return v.own.entries[i], v.ownFileShown(i)
	}
	if i, ok := findEntry(v.shared.entries, rel); ok && v.showsFile(i) {
		return v.shared.entries[i], true
	}
	return entry{}, false
}

// skillFile returns the entry at rel, a path inside s's folder: as the
// view shows it, or from s's own files for a skill reached by its path
// though another's name hides it (hiddenAt).
func (v *view) skillFile(s *skillRef, rel string) (entry, bool) {
	if e, ok := v.file(rel); ok {
		return e, true
	}
	if i, ok := findEntry(s.files, rel); ok {
		return s.files[i], true
	}
	return entry{}, false
}

func findEntry(entries []entry, rel string) (int, bool) {
	return slices.BinarySearchFunc(entries, rel, func(e entry, rel string) int { return strings.Compare(e.rel, rel) })
}

// showsFile reports whether the view shows the shared layer's entry i: it
// lies in a shared folder the view shows.
func (v *view) showsFile(i int) bool {
	o := v.shared.owner[i]
	switch {
	case o < 0:
		return false
	case v.scope != nil && !v.inScope(v.shared.all[o]):
		return false
	case !v.hides(v.shared.all[o].dir):
		return true
	}
	// Rare: a nested folder inside a hidden one, which no scope shows.
	if v.scope != nil {
		return false
	}
	rel := v.shared.entries[i].rel
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if _, ok := v.shared.find(p); ok && !v.hides(p) {
			return true
		}
	}
	return false
}

// ownFileShown reports whether the view shows the user's entry i: every
// one of an unscoped view, those of skills in the scope of a scoped one
// (files in no skill are not part of any scope).
func (v *view) ownFileShown(i int) bool {
	if v.scope == nil {
		return true
	}
	o := v.own.owner[i]
	return o >= 0 && v.inScope(v.own.all[o])
}

// files returns the view's files whose paths start with prefix, in path
// order.
func (v *view) files(prefix string) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		from := func(entries []entry) int {
			i, _ := findEntry(entries, prefix)
			return i
		}
		own, i := v.own.entries[from(v.own.entries):], from(v.shared.entries)
		shared := v.shared.entries
		for {
			for i < len(shared) && strings.HasPrefix(shared[i].rel, prefix) && !v.showsFile(i) {
				i++
			}
			ownNext := len(own) > 0 && strings.HasPrefix(own[0].rel, prefix)
			sharedNext := i < len(shared) && strings.HasPrefix(shared[i].rel, prefix)
			var e entry
			switch {
			case ownNext && (!sharedNext || own[0].rel < shared[i].rel):
				e, own = own[0], own[1:]
				if v.scope != nil && !v.ownFileShown(len(v.own.entries)-len(own)-1) {
					continue
				}
			case sharedNext:
				e = shared[i]
				i++
			default:
				return
			}
			if !yield(e) {
				return
			}
		}
	}
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
			slices.SortFunc(group, func(a, b *skillRef) int { return duplicateOrder(name, a, b) })
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
			winner.addNotes().Warnf("name %q is also declared by %s; the name refers to this skill", name, paths(winner))
			for _, s := range group[1:] {
				s.addNotes().Warnf("name %q is also declared by %s, which the name refers to; refer to this skill by its path %s",
					name, mount+"/"+winner.dir, mount+"/"+s.dir)
			}
		}
		out[name] = group[0]
	}
	return out
}

// duplicateOrder orders skills declaring name, the one the name refers to
// first.
func duplicateOrder(name string, a, b *skillRef) int {
	return cmp.Or(
		compareTrueFirst(a.head.problems.Valid(), b.head.problems.Valid()),
		compareTrueFirst(a.folder() == name, b.folder() == name),
		strings.Compare(a.dir, b.dir))
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
		// An index also lists its library's side object, outside the prefix.
		if rel, ok := strings.CutPrefix(o.Key, prefix); ok && mounts.Addressable(rel) {
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
	for i, e := range entries {
		dir, file := path.Split(e.rel)
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || dir == "" {
			continue
		}
		cat, rest, isCategorized := strings.Cut(dir, "/")
		switch {
		case !isCategorized:
			skills = append(skills, &skillRef{dir: dir, name: dir, layer: layer, skillMD: &entries[i].obj})
		case flat[cat]:
			// a file of the flat skill cat
		case !strings.Contains(rest, "/"):
			categorized[dir] = true
			skills = append(skills, &skillRef{dir: dir, name: rest, layer: layer, skillMD: &entries[i].obj})
		}
	}
	for i, e := range entries {
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
		n := &skillRef{dir: dir, name: path.Base(dir), layer: layer, skillMD: &entries[i].obj, nested: true}
		n.addNotes().Errorf("%s", nestedProblem)
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
	for _, s := range skills {
		// A folder's files are contiguous in path order: the skill's are a
		// part of the layer's, not a copy.
		prefix := s.dir + "/"
		lo, _ := findEntry(entries, prefix)
		hi := lo
		for hi < len(entries) && strings.HasPrefix(entries[hi].rel, prefix) {
			hi++
		}
		s.files = entries[lo:hi:hi]
	}
	return skills, nested
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
		dir := strings.TrimSuffix(rel, "/SKILL.md")
		if s, ok := v.skill(dir); ok {
			return s, nil
		}
		if s := v.hiddenAt(dir); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
	}
	if s, ok := v.named(ref); ok {
		return s, nil
	}
	pathErr := mounts.CleanPath("/" + ref)
	if pathErr == nil {
		rel := strings.TrimSuffix(ref, "/SKILL.md")
		if s, ok := v.skill(rel); ok {
			return s, nil
		}
		if s := v.hiddenAt(rel); s != nil {
			return s, nil
		}
		if !strings.Contains(rel, "/") {
			if s, err := v.unique(mount, ref, "folder", v.merged(v.own.folder(rel), v.shared.folder(rel))); s != nil || err != nil {
				return s, err
			}
		}
	}
	if s, err := v.unique(mount, ref, "display name", v.merged(v.own.display(ref), v.shared.display(ref))); s != nil || err != nil {
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
		out[i] = libindex.Skill{SkillMD: *s.skillMD, Files: files}
	}
	return out
}
