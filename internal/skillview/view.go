package skillview

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
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
)

// Layer names. A team library's layer is LayerTeam followed by its ID
// ("team:legal").
const (
	LayerUser   = "user"
	LayerShared = "shared"
	LayerTeam   = "team:"
)

// Entry is one file of the merged view.
type Entry struct {
	Rel string // path inside the library
	Obj objstore.Object
}

// Ref locates one skill folder. A layer holds one per skill, so its
// fields are what cannot be had from the others (category) or the layer
// (skillMD points into its entries).
type Ref struct {
	Dir   string // "category/folder" or "folder"
	Layer string
	// Name is what the skill is listed and addressed by: its frontmatter
	// name, or the folder's when the frontmatter has no usable one.
	Name     string
	SkillMD  *objstore.Object // its entry's object, in the layer's entries
	Location string           // the virtual path of its SKILL.md (Skill.Location)
	Files    []Entry          // every file of the folder, SKILL.md included, by rel
	Head     Head             // the frontmatter as of the listing
	Manifest *Manifest        // files by digest, from the layer's index
	// Notes are what merging found: a name declared twice, a folder
	// nested too deep. nil for most skills, so a pointer (note, addNotes).
	Notes  *skillmd.Problems
	Nested bool // deeper than <category>/<skill>: reported, never served
}

// Digest is the digest of s's manifest, "" without one.
func (s *Ref) Digest() string {
	if s.Manifest == nil {
		return ""
	}
	return s.Manifest.Digest
}

// Folder is the folder's own name: the last of dir.
func (s *Ref) Folder() string { return s.Dir[strings.LastIndexByte(s.Dir, '/')+1:] }

// Category is the first folder of dir, or "" for a flat skill.
func (s *Ref) Category() string {
	cat, _, ok := strings.Cut(s.Dir, "/")
	if !ok {
		return ""
	}
	return cat
}

// Note returns s's notes.
func (s *Ref) Note() skillmd.Problems {
	if s.Notes == nil {
		return skillmd.Problems{}
	}
	return *s.Notes
}

// addNotes returns s's notes to add to.
func (s *Ref) addNotes() *skillmd.Problems {
	if s.Notes == nil {
		s.Notes = new(skillmd.Problems)
	}
	return s.Notes
}

// Problems are the skill's own problems and the view's notes on it. The
// head's slices are shared with the cache, so the result is a new slice.
func (s *Ref) Problems() skillmd.Problems {
	return skillmd.Problems{
		Errors:   slices.Concat(s.Head.Problems.Errors, s.Note().Errors),
		Warnings: slices.Concat(s.Head.Problems.Warnings, s.Note().Warnings),
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
type View struct {
	*Overlay
	// Shared is the layer under the user's: the shared library's, or for a
	// caller in teams their team layers composed over it (base).
	Shared   *Layer
	UserBase string // the user's library (its prefix): replies are keyed by it
	// Lower are the layers under the user's as their libraries serve them,
	// the caller's teams in ID order then the shared library: what the
	// view's notes on shadowing name (notes.go).
	Lower []*Layer
	// Scope, when the caller names one, narrows what the view shows
	// (scope.go); nil shows every skill.
	Scope *scoped
}

// Layer is one library's files and skill folders as views serve them. Its
// lookups are binary searches of sorted slices: maps would cost a user's
// layer of a few skills more than the skills themselves.
type Layer struct {
	Generation uint64
	// IndexGen is the generation of the index the layer was built from;
	// Generation differs from it when the scan policy noted something on
	// the layer's skills (views.Scanner), so replies change with it.
	IndexGen uint64
	Name     string  // LayerShared, or LayerTeam and the team's ID
	Entries  []Entry // addressable files, sorted by rel
	// owner is, per entry, the position in all of the shallowest folder
	// holding it, or -1: which shared files a view shows follows from
	// which shared folders it shows.
	owner []int32
	All   []*Ref // skills (heads parsed) and nested folders, by dir
	// The skills (not nested): by name, the one the name refers to first
	// (MarkDuplicates' order); by folder name, then dir; and those with a
	// display name by it, then dir.
	names, folders, displays []*Ref
	Bytes                    int64 // the heap it keeps alive (estimated)
	// Prot, of a base layer (teams.go), holds the protected skills it
	// serves, which the user's layer is composed under.
	Prot *Layer
	// Protected are the names the library protects (protect.go).
	Protected []string
	// Scopes are the scopes the library defines (scope.go), compiled.
	Scopes map[string]*scope
	// shadowed, of a base layer, are the skills of its libraries that
	// others hide by name alone, by dir: reachable by their paths.
	shadowed []*Ref
}

// Overlay is a user's layer and what it makes of the shared layer of one
// generation: the shared folders it hides (a user skill of the same name,
// a user file or folder at or above their path), and the shared skills
// whose notes on duplicate names change because some of the skills
// declaring their name are hidden.
type Overlay struct {
	UserGen, SharedGen uint64 // the indexes it was built from
	Own                *Layer
	Raw                *Layer   // the user's layer, before protected skills took their names and paths
	hidden             []string // the dirs of shared folders, sorted
	// byName are the dirs among hidden of skills hidden by name alone: no
	// file of own is at or above their path, so they stay reachable by it
	// (view.hiddenAt).
	byName []string
	// regrouped replaces the shared skills of names declared twice of which
	// the user hides some, by dir; renamed is the skill each such name
	// refers to (nil: none is shown).
	regrouped map[string]*Ref
	renamed   map[string]*Ref
	// last is the dir of the last folder shown when the two layers hold
	// more than --skills.max-skills: the view stops there.
	last string
	// digestSum is the sha256 of what the library digest says of every
	// served skill (LibraryDigest adds the caller's settings to it), made
	// when first asked (view.digest): a GetSkill or a file read on a
	// rebuilt view never needs it.
	digestOnce sync.Once
	digestSum  [sha256.Size]byte
	mount      string
	Bytes      int64 // the heap it keeps alive (estimated), its own layer included
}

// Lookups sorts the layer's skills (those of all not nested) into its
// lookups, and finds each entry's owner. The name lookup puts first the
// skill a name refers to: by layer (teams in ID order), then
// duplicateOrder.
func (l *Layer) Lookups(skills []*Ref) {
	l.names = slices.Clone(skills)
	slices.SortFunc(l.names, func(a, b *Ref) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Layer, b.Layer), duplicateOrder(a.Name, a, b))
	})
	l.folders = slices.Clone(skills)
	slices.SortFunc(l.folders, func(a, b *Ref) int {
		return cmp.Or(strings.Compare(a.Folder(), b.Folder()), strings.Compare(a.Dir, b.Dir))
	})
	for _, s := range skills {
		if s.Head.Frontmatter.DisplayName != "" {
			l.displays = append(l.displays, s)
		}
	}
	slices.SortFunc(l.displays, func(a, b *Ref) int {
		return cmp.Or(strings.Compare(a.Head.Frontmatter.DisplayName, b.Head.Frontmatter.DisplayName), strings.Compare(a.Dir, b.Dir))
	})
	l.owner = make([]int32, len(l.Entries))
	for i, e := range l.Entries {
		l.owner[i] = -1
		for p := e.Rel; ; {
			first, _, ok := strings.Cut(p, "/")
			if !ok {
				break
			}
			if at, ok := l.find(e.Rel[:len(e.Rel)-len(p)+len(first)]); ok {
				l.owner[i] = int32(at)
				break
			}
			p = p[len(first)+1:]
		}
	}
	l.Bytes = l.HeldBytes()
}

// find returns the position in all of the folder at dir.
func (l *Layer) find(dir string) (int, bool) {
	return slices.BinarySearchFunc(l.All, dir, func(s *Ref, dir string) int { return strings.Compare(s.Dir, dir) })
}

// Dir returns the folder at dir.
func (l *Layer) Dir(dir string) (*Ref, bool) {
	if i, ok := l.find(dir); ok {
		return l.All[i], true
	}
	return nil, false
}

// run returns the skills of sorted (by key, then anything) whose key is k.
func run(sorted []*Ref, k string, key func(*Ref) string) []*Ref {
	i, _ := slices.BinarySearchFunc(sorted, k, func(s *Ref, k string) int { return strings.Compare(key(s), k) })
	j := i
	for j < len(sorted) && key(sorted[j]) == k {
		j++
	}
	return sorted[i:j:j]
}

// named returns the layer's skills declaring name, the one the name refers
// to (within the layer) first.
func (l *Layer) named(name string) []*Ref {
	return run(l.names, name, func(s *Ref) string { return s.Name })
}

// ByFolder returns the layer's skills in folders named f, by dir.
func (l *Layer) ByFolder(f string) []*Ref {
	return run(l.folders, f, func(s *Ref) string { return s.Folder() })
}

// Display returns the layer's skills whose display name is d, by dir.
func (l *Layer) Display(d string) []*Ref {
	return run(l.displays, d, func(s *Ref) string { return s.Head.Frontmatter.DisplayName })
}

// Head returns the parsed head l holds of the version of s's SKILL.md;
// l may be nil.
func (l *Layer) Head(s *Ref) (Head, bool) {
	if l == nil || s.SkillMD.ETag == "" {
		return Head{}, false
	}
	p, ok := l.Dir(s.Dir)
	if !ok || p.Nested || p.SkillMD.Key != s.SkillMD.Key || p.SkillMD.ETag != s.SkillMD.ETag {
		return Head{}, false
	}
	return p.Head, true
}

// Shadow makes the layer own into a view over the layer sl, hiding sl's
// folders by path and, with byName, by name (byName false hides only by
// path, as one team's library does another's: both skills of a name are
// then served). Its cost follows the user's layer: what it hides is found
// from the user's paths and names, never by walking the shared library,
// but for the digest and the cut at maxSkills. mount names the skills in
// the notes on duplicate names.
func Shadow(mount string, maxSkills int, own, sl *Layer, byName bool) *Overlay {
	o := &Overlay{UserGen: own.Generation, SharedGen: sl.Generation, Own: own}
	hidden := map[string]bool{}
	hide := func(s *Ref) { hidden[s.Dir] = true }
	// A shared folder is shadowed by any user file or folder at its path,
	// and by a user file or skill folder where one of its ancestors is (a
	// folder inside a skill is part of that skill).
	under := func(dir string) {
		prefix := dir + "/"
		i, _ := sl.find(prefix)
		for ; i < len(sl.All) && strings.HasPrefix(sl.All[i].Dir, prefix); i++ {
			hide(sl.All[i])
		}
	}
	seen := map[string]bool{}
	for _, e := range own.Entries {
		under(e.Rel)
		for p := e.Rel; p != "." && p != "" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			if s, ok := sl.Dir(p); ok {
				hide(s)
			}
		}
	}
	for _, s := range own.names {
		under(s.Dir)
	}
	byPath := maps.Clone(hidden)
	for _, s := range own.names {
		// A protected skill of the lower layer passed up into own
		// (protect.go) hides only itself, not the lower layer's namesakes.
		if d, ok := sl.Dir(s.Dir); !byName || (ok && d == s) {
			continue
		}
		for _, g := range sl.named(s.Name) {
			hide(g)
			if !byPath[g.Dir] {
				o.byName = append(o.byName, g.Dir)
			}
		}
	}
	slices.Sort(o.byName)
	o.byName = slices.Compact(o.byName)
	// Names are settled per layer among the skills it shows: where the
	// user hides some of the shared skills declaring a name, the rest are
	// settled again, on copies.
	for dir := range hidden {
		s, _ := sl.Dir(dir)
		group := sl.named(s.Name)
		if _, done := o.renamed[s.Name]; done || s.Nested || len(group) < 2 || len(own.named(s.Name)) > 0 {
			continue
		}
		if o.renamed == nil {
			o.renamed, o.regrouped = map[string]*Ref{}, map[string]*Ref{}
		}
		var rest []*Ref
		for _, g := range group {
			if !hidden[g.Dir] {
				c := *g
				c.Notes = nil
				rest = append(rest, &c)
				o.regrouped[c.Dir] = &c
			}
		}
		o.renamed[s.Name] = MarkDuplicates(mount, rest)[s.Name]
	}
	o.hidden = slices.Sorted(maps.Keys(hidden))
	v := &View{Overlay: o, Shared: sl}
	if n := len(own.All) + len(sl.All) - len(o.hidden); n > maxSkills {
		i := 0
		for s := range v.All() {
			if i++; i == maxSkills {
				o.last = s.Dir
				break
			}
		}
	}
	o.mount = mount
	o.Bytes = o.heldBytes()
	return o
}

// Digest is the overlay's digest (digestSum), made on first use. The view's
// shared layer is the one the overlay was made over (its generation is the
// overlay's sharedGen), so every view of the overlay hashes alike.
func (v *View) Digest() [sha256.Size]byte {
	// Of every skill the overlay serves, whatever scope the view applies:
	// LibraryDigest adds the scope.
	all := (&View{Overlay: v.Overlay, Shared: v.Shared}).All()
	v.digestOnce.Do(func() { v.digestSum = ViewDigest(v.mount, all) })
	return v.digestSum
}

// hides reports whether the user's layer hides the shared folder at dir.
func (o *Overlay) hides(dir string) bool {
	_, ok := slices.BinarySearch(o.hidden, dir)
	return ok
}

// Shown returns the skill a view shows for s, a folder of the shared layer:
// nil when hidden, its copy with the user's notes when regrouped.
func (v *View) Shown(s *Ref) *Ref {
	if s == nil || v.hides(s.Dir) || !v.Kept(s) {
		return nil
	}
	if c, ok := v.regrouped[s.Dir]; ok {
		return c
	}
	return s
}

// hiddenAt returns the skill of a lower layer at dir that a skill of
// another name's hides by name alone (in this view, or in composing its
// base layer, teams.go): listed under that name, it is still reachable by
// its path. nil when there is none, or a folder of the view is there.
func (v *View) hiddenAt(dir string) *Ref {
	if s := v.hiddenAtAll(dir); s != nil && v.inScope(s) {
		return s
	}
	return nil
}

// hiddenAtAll is hiddenAt whatever the view's scope.
func (v *View) hiddenAtAll(dir string) *Ref {
	if _, ok := v.Own.Dir(dir); ok {
		return nil
	}
	if _, ok := v.Shared.Dir(dir); ok {
		if _, hidden := slices.BinarySearch(v.byName, dir); hidden {
			s, _ := v.Shared.Dir(dir)
			return s
		}
		return nil
	}
	i, ok := slices.BinarySearchFunc(v.Shared.shadowed, dir, func(s *Ref, dir string) int { return strings.Compare(s.Dir, dir) })
	if !ok {
		return nil
	}
	// A file of the user's at or below the path takes it.
	if i, _ := findEntry(v.Own.Entries, dir); i < len(v.Own.Entries) && (v.Own.Entries[i].Rel == dir || strings.HasPrefix(v.Own.Entries[i].Rel, dir+"/")) {
		return nil
	}
	for p := path.Dir(dir); p != "."; p = path.Dir(p) {
		if _, ok := findEntry(v.Own.Entries, p); ok {
			return nil
		}
	}
	return v.Shared.shadowed[i]
}

// Kept reports whether the view keeps s, a folder of one of its layers:
// within its --skills.max-skills (withinCut) and its scope (inScope).
// Every lookup of the view asks it, so a scoped view shows its set alone
// on every surface.
func (v *View) Kept(s *Ref) bool { return v.withinCut(s) && v.inScope(s) }

// withinCut reports whether s is within the view's --skills.max-skills.
func (v *View) withinCut(s *Ref) bool { return v.last == "" || s.Dir <= v.last }

// All returns the view's folders (skills and nested ones) in path order.
func (v *View) All() iter.Seq[*Ref] {
	return func(yield func(*Ref) bool) {
		own, shared := v.Own.All, v.Shared.All
		for len(own) > 0 || len(shared) > 0 {
			var s *Ref
			if len(shared) == 0 || (len(own) > 0 && own[0].Dir < shared[0].Dir) {
				s, own = own[0], own[1:]
				if !v.withinCut(s) {
					return
				}
				if !v.inScope(s) {
					continue
				}
			} else {
				s, shared = v.Shown(shared[0]), shared[1:]
				if s == nil {
					continue
				}
			}
			if !v.Kept(s) || !yield(s) {
				return
			}
		}
	}
}

// Skill returns the folder at dir.
func (v *View) Skill(dir string) (*Ref, bool) {
	if s, ok := v.Own.Dir(dir); ok {
		return s, v.Kept(s)
	}
	s, _ := v.Shared.Dir(dir)
	s = v.Shown(s)
	return s, s != nil
}

// Named returns the skill name refers to.
func (v *View) Named(name string) (*Ref, bool) {
	if own := v.Own.named(name); len(own) > 0 {
		return own[0], v.Kept(own[0])
	}
	if s, ok := v.renamed[name]; ok {
		return s, s != nil && v.Kept(s)
	}
	shared := v.Shared.named(name)
	if len(shared) == 0 || v.hides(shared[0].Dir) || !v.Kept(shared[0]) {
		return nil, false
	}
	return shared[0], true
}

// Merged is the view's skills among own's and shared's (of one folder or
// display name), in path order.
func (v *View) Merged(own, shared []*Ref) []*Ref {
	var out []*Ref
	for _, s := range own {
		if v.Kept(s) {
			out = append(out, s)
		}
	}
	for _, s := range shared {
		if s = v.Shown(s); s != nil {
			out = append(out, s)
		}
	}
	if len(own) > 0 && len(shared) > 0 {
		slices.SortFunc(out, func(a, b *Ref) int { return strings.Compare(a.Dir, b.Dir) })
	}
	return out
}

// File returns the entry at rel.
func (v *View) File(rel string) (Entry, bool) {
	if i, ok := findEntry(v.Own.Entries, rel); ok {
		return v.Own.Entries[i], v.ownFileShown(i)
	}
	if i, ok := findEntry(v.Shared.Entries, rel); ok && v.showsFile(i) {
		return v.Shared.Entries[i], true
	}
	return Entry{}, false
}

// SkillFile returns the entry at rel, a path inside s's folder: as the
// view shows it, or from s's own files for a skill reached by its path
// though another's name hides it (hiddenAt).
func (v *View) SkillFile(s *Ref, rel string) (Entry, bool) {
	if e, ok := v.File(rel); ok {
		return e, true
	}
	if i, ok := findEntry(s.Files, rel); ok {
		return s.Files[i], true
	}
	return Entry{}, false
}

func findEntry(entries []Entry, rel string) (int, bool) {
	return slices.BinarySearchFunc(entries, rel, func(e Entry, rel string) int { return strings.Compare(e.Rel, rel) })
}

// showsFile reports whether the view shows the shared layer's entry i: it
// lies in a shared folder the view shows.
func (v *View) showsFile(i int) bool {
	o := v.Shared.owner[i]
	switch {
	case o < 0:
		return false
	case v.Scope != nil && !v.inScope(v.Shared.All[o]):
		return false
	case !v.hides(v.Shared.All[o].Dir):
		return true
	}
	// Rare: a nested folder inside a hidden one, which no scope shows.
	if v.Scope != nil {
		return false
	}
	rel := v.Shared.Entries[i].Rel
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if _, ok := v.Shared.find(p); ok && !v.hides(p) {
			return true
		}
	}
	return false
}

// ownFileShown reports whether the view shows the user's entry i: every
// one of an unscoped view, those of skills in the scope of a scoped one
// (files in no skill are not part of any scope).
func (v *View) ownFileShown(i int) bool {
	if v.Scope == nil {
		return true
	}
	o := v.Own.owner[i]
	return o >= 0 && v.inScope(v.Own.All[o])
}

// Files returns the view's files whose paths start with prefix, in path
// order.
func (v *View) Files(prefix string) iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		from := func(entries []Entry) int {
			i, _ := findEntry(entries, prefix)
			return i
		}
		own, i := v.Own.Entries[from(v.Own.Entries):], from(v.Shared.Entries)
		shared := v.Shared.Entries
		for {
			for i < len(shared) && strings.HasPrefix(shared[i].Rel, prefix) && !v.showsFile(i) {
				i++
			}
			ownNext := len(own) > 0 && strings.HasPrefix(own[0].Rel, prefix)
			sharedNext := i < len(shared) && strings.HasPrefix(shared[i].Rel, prefix)
			var e Entry
			switch {
			case ownNext && (!sharedNext || own[0].Rel < shared[i].Rel):
				e, own = own[0], own[1:]
				if v.Scope != nil && !v.ownFileShown(len(v.Own.Entries)-len(own)-1) {
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

// MarkDuplicates picks, for each name that several skills of one layer
// declare, the one the name refers to, and notes the choice on all of them.
// The pick is deterministic: a valid skill before an invalid one, then the
// one whose folder is named so, then the first by path. It returns the
// skill each name refers to.
func MarkDuplicates(mount string, refs []*Ref) map[string]*Ref {
	byName := map[string][]*Ref{}
	for _, s := range refs {
		byName[s.Name] = append(byName[s.Name], s)
	}
	out := make(map[string]*Ref, len(byName))
	for name, group := range byName {
		if len(group) > 1 {
			slices.SortFunc(group, func(a, b *Ref) int { return duplicateOrder(name, a, b) })
			paths := func(skip *Ref) string {
				var ps []string
				for _, o := range group {
					if o != skip {
						ps = append(ps, mount+"/"+o.Dir)
					}
				}
				slices.Sort(ps)
				return listed(ps, 5)
			}
			winner := group[0]
			winner.addNotes().Warnf("name %q is also declared by %s; the name refers to this skill", name, paths(winner))
			for _, s := range group[1:] {
				s.addNotes().Warnf("name %q is also declared by %s, which the name refers to; refer to this skill by its path %s",
					name, mount+"/"+winner.Dir, mount+"/"+s.Dir)
			}
		}
		out[name] = group[0]
	}
	return out
}

// duplicateOrder orders skills declaring name, the one the name refers to
// first.
func duplicateOrder(name string, a, b *Ref) int {
	return cmp.Or(
		compareTrueFirst(a.Head.Problems.Valid(), b.Head.Problems.Valid()),
		compareTrueFirst(a.Folder() == name, b.Folder() == name),
		strings.Compare(a.Dir, b.Dir))
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

// Addressable drops keys that no virtual path can name.
func Addressable(objs []objstore.Object, prefix string) []Entry {
	out := make([]Entry, 0, len(objs))
	for _, o := range objs {
		// An index also lists its library's side object, outside the prefix.
		if rel, ok := strings.CutPrefix(o.Key, prefix); ok && mounts.Addressable(rel) {
			out = append(out, Entry{Rel: rel, Obj: o})
		}
	}
	return out
}

// NestedProblem explains why a SKILL.md deeper than <category>/<skill> is
// not served.
const NestedProblem = skillmd.NestedProblem

// LayerSkills is the skills among one layer's entries (sorted by path) by
// skillmd.FindFolders, at most max of them, each with its files: every
// entry of the layer inside its folder (a part of entries, not a copy). A
// layer's skill never holds another layer's file: where the user has a
// file, the shared folder around it is shadowed. Second, the folders of
// SKILL.md files nested too deep, noted with NestedProblem.
func LayerSkills(entries []Entry, layer string, max int) (skills, nested []*Ref) {
	folders, deep := skillmd.FindFolders(len(entries), func(i int) string { return entries[i].Rel }, max)
	skills = make([]*Ref, len(folders))
	for i, f := range folders {
		skills[i] = &Ref{Dir: f.Dir, Name: f.Name, Layer: layer, SkillMD: &entries[f.SkillMD].Obj, Files: entries[f.Lo:f.Hi:f.Hi]}
	}
	nested = make([]*Ref, len(deep))
	for i, f := range deep {
		n := &Ref{Dir: f.Dir, Name: f.Name, Layer: layer, SkillMD: &entries[f.SkillMD].Obj, Nested: true}
		n.addNotes().Errorf("%s", NestedProblem)
		nested[i] = n
	}
	return skills, nested
}

// Find resolves a skill reference, in the order a caller most likely means
// it: a path under mount (the folder or its SKILL.md); a skill name as
// listed; a folder path relative to the library; a bare folder name or a
// display name, when only one skill has it.
func (v *View) Find(mount, ref string) (*Ref, error) {
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
		if s, ok := v.Skill(dir); ok {
			return s, nil
		}
		if s := v.hiddenAt(dir); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
	}
	if s, ok := v.Named(ref); ok {
		return s, nil
	}
	pathErr := mounts.CleanPath("/" + ref)
	if pathErr == nil {
		rel := strings.TrimSuffix(ref, "/SKILL.md")
		if s, ok := v.Skill(rel); ok {
			return s, nil
		}
		if s := v.hiddenAt(rel); s != nil {
			return s, nil
		}
		if !strings.Contains(rel, "/") {
			if s, err := v.unique(mount, ref, "folder", v.Merged(v.Own.ByFolder(rel), v.Shared.ByFolder(rel))); s != nil || err != nil {
				return s, err
			}
		}
	}
	if s, err := v.unique(mount, ref, "display name", v.Merged(v.Own.Display(ref), v.Shared.Display(ref))); s != nil || err != nil {
		return s, err
	}
	if pathErr != nil {
		return nil, pathErr
	}
	return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
}

// unique returns the one skill of refs, nil for none, and an error naming
// the candidates when ref is ambiguous.
func (v *View) unique(mount, ref, what string, refs []*Ref) (*Ref, error) {
	switch len(refs) {
	case 0:
		return nil, nil
	case 1:
		return refs[0], nil
	}
	paths := make([]string, len(refs))
	for i, s := range refs {
		paths[i] = mount + "/" + s.Dir
	}
	return nil, fmt.Errorf("%w: %q is the %s of %d skills (%s): refer to one by its name or path",
		errkind.InvalidArgument, ref, what, len(refs), listed(paths, 5))
}

// ExtensionProblem is why the MCP skills extension does not serve r, or "".
func (r *Ref) ExtensionProblem() string {
	return skillmd.ExtensionProblem(r.Name, r.Head.Frontmatter, r.Head.Written, r.Folder(), r.Manifest == nil || r.Manifest.OverLimits)
}

// Gen, Len and Folder make a layer what skillsearch indexes: its folders,
// numbered as l.all.
func (l *Layer) Gen() uint64 { return l.Generation }

func (l *Layer) Len() int { return len(l.All) }

func (l *Layer) Folder(i int) skillsearch.Folder {
	s := l.All[i]
	f := skillsearch.Folder{
		Nested: s.Nested, Dir: s.Dir, Layer: s.Layer, Name: s.Name, Category: s.Category(), Head: s.Head.Frontmatter,
		Files: func(yield func(string) bool) {
			for _, e := range s.Files {
				if !yield(e.Rel) {
					return
				}
			}
		},
	}
	if s.SkillMD != nil {
		f.Key, f.ETag = s.SkillMD.Key, s.SkillMD.ETag
	}
	return f
}
