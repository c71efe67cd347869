package skills

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// referenceView is the view as it was built before layers were overlaid:
// both layers merged into one copy per user. TestOverlayMatchesMerge holds
// the overlay to it.
type referenceView struct {
	skills    []*skillview.Ref
	byDir     map[string]*skillview.Ref
	byName    map[string]*skillview.Ref
	byFolder  map[string][]*skillview.Ref
	byDisplay map[string][]*skillview.Ref
	entries   []skillview.Entry
	digest    [32]byte
}

// fresh copies a layer's folders with the notes merging adds cleared.
func fresh(l *skillview.Layer) (skills, nested []*skillview.Ref) {
	for _, s := range l.All {
		c := *s
		if !c.Nested {
			c.Notes = skillview.Ref{}.Notes
			skills = append(skills, &c)
		} else {
			nested = append(nested, &c)
		}
	}
	return skills, nested
}

func referenceMerge(mount string, user, shared *skillview.Layer, maxSkills int) *referenceView {
	v := &referenceView{
		byDir: map[string]*skillview.Ref{}, byName: map[string]*skillview.Ref{},
		byFolder: map[string][]*skillview.Ref{}, byDisplay: map[string][]*skillview.Ref{},
	}
	userSkills, userNested := fresh(user)
	sharedAll, sharedNestedAll := fresh(shared)
	userPaths, userFiles := map[string]bool{}, map[string]bool{}
	for _, e := range user.Entries {
		userFiles[e.Rel] = true
		for p := e.Rel; p != "." && p != ""; p = path.Dir(p) {
			userPaths[p] = true
		}
	}
	userDirs, userNames := map[string]bool{}, map[string]bool{}
	for _, s := range userSkills {
		userDirs[s.Dir] = true
		userNames[s.Name] = true
	}
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
	var sharedSkills, sharedNested []*skillview.Ref
	for _, s := range sharedAll {
		if !userNames[s.Name] && !shadowed(s.Dir) {
			sharedSkills = append(sharedSkills, s)
		}
	}
	for _, s := range sharedNestedAll {
		if !shadowed(s.Dir) {
			sharedNested = append(sharedNested, s)
		}
	}
	served := skillview.MarkDuplicates(mount, userSkills)
	maps.Copy(served, skillview.MarkDuplicates(mount, sharedSkills))
	v.skills = slices.Concat(userSkills, sharedSkills, userNested, sharedNested)
	sort.Slice(v.skills, func(i, j int) bool { return v.skills[i].Dir < v.skills[j].Dir })
	if len(v.skills) > maxSkills {
		v.skills = v.skills[:maxSkills]
	}
	kept := map[*skillview.Ref]bool{}
	for _, s := range v.skills {
		kept[s] = true
		v.byDir[s.Dir] = s
	}
	for name, s := range served {
		if kept[s] {
			v.byName[name] = s
		}
	}
	for _, s := range v.skills {
		if !s.Nested {
			v.byFolder[s.Folder()] = append(v.byFolder[s.Folder()], s)
			if d := s.Head.Frontmatter.DisplayName; d != "" {
				v.byDisplay[d] = append(v.byDisplay[d], s)
			}
		}
	}
	visible := map[string]bool{}
	for _, s := range slices.Concat(sharedSkills, sharedNested) {
		visible[s.Dir] = true
	}
	v.entries = slices.Clone(user.Entries)
	for _, e := range shared.Entries {
		for p := path.Dir(e.Rel); p != "."; p = path.Dir(p) {
			if visible[p] {
				v.entries = append(v.entries, e)
				break
			}
		}
	}
	sort.Slice(v.entries, func(i, j int) bool { return v.entries[i].Rel < v.entries[j].Rel })
	v.digest = skillview.ViewDigest(mount, slices.Values(v.skills))
	return v
}

// randomIndex is a small library under prefix drawn from a few folder and
// skill names, so that layers collide: skills flat and in categories,
// nested SKILL.md files, duplicate and display names, invalid skills and
// loose files.
func randomIndex(r *rand.Rand, prefix string) *libindex.Index {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	x := &libindex.Index{Gen: r.Uint64(), Listed: time.Unix(1_800_000_000, 0)}
	keys := map[string]bool{}
	for range 1 + r.IntN(12) {
		var rel string
		switch r.IntN(6) {
		case 0:
			rel = pick("a", "b", "c") + "/SKILL.md"
		case 1, 2:
			rel = pick("docs", "dev", "a") + "/" + pick("a", "b", "c", "d") + "/SKILL.md"
		case 3:
			rel = pick("deep", "docs") + "/" + pick("x", "y") + "/" + pick("a", "b") + "/SKILL.md"
		case 4:
			rel = pick("a", "docs", "dev", "deep") + "/" + pick("b", "x", "notes.md") + "/" + pick("f.txt", "SKILL.md", "g/h.md")
		default:
			rel = pick("a", "docs", "docs/b", "dev/c", "readme.md")
		}
		keys[prefix+rel] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x.Objs = append(x.Objs, objstore.Object{Key: k, Attributes: objstore.Attributes{Size: 10, ETag: fmt.Sprintf("e%d", r.IntN(3))}})
		if strings.HasSuffix(k, "/SKILL.md") {
			name := pick("alpha", "beta", "gamma", path.Base(path.Dir(k)), "Display Name")
			desc := pick("Does things.", "Does other things.", "")
			x.Heads = append(x.Heads, libindex.Head{Key: k, Head: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n")})
		}
	}
	return x
}

// TestOverlayMatchesMerge: a view overlaid on the shared layer answers
// every lookup, listing, file and digest as a copy of both layers merged
// does, for random pairs of libraries, with and without the cut at
// --skills.max-skills.
func TestOverlayMatchesMerge(t *testing.T) {
	lib := newTestLibrary(t, objstoretest.NewBucket(t, nil), time.Hour)
	for _, maxSkills := range []int{10000, 3} {
		cfg := lib.Catalog.views.Config
		cfg.MaxSkills = maxSkills
		// Heads not shared: randomIndex's ETags do not address content.
		vs := views.New(lib.Catalog.views.Indexes, views.NewHeads(slog.New(slog.DiscardHandler), libindex.NewMetrics(nil)), mounts.Default(), cfg)
		r := rand.New(rand.NewPCG(22, uint64(maxSkills)))
		for i := range 2000 {
			user := mustLayer(t)(vs.BuildLayer(t.Context(), randomIndex(r, "alice/skills/"), "alice/skills/", skillview.LayerUser, nil))
			shared := mustLayer(t)(vs.BuildLayer(t.Context(), randomIndex(r, "_shared/skills/"), "_shared/skills/", skillview.LayerShared, nil))
			v := &skillview.View{Overlay: vs.Overlay(user, shared), Shared: shared}
			want := referenceMerge(vs.Config.Mount, user, shared, maxSkills)
			if err := compareViews(vs.Config.Mount, v, want); err != nil {
				t.Fatalf("max-skills %d, case %d: %v\nuser: %s\nshared: %s", maxSkills, i, err, describe(user), describe(shared))
			}
		}
	}
}

func describe(l *skillview.Layer) string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Rel)
	}
	for _, s := range l.All {
		out = append(out, fmt.Sprintf("%s=%s", s.Dir, s.Name))
	}
	return strings.Join(out, " ")
}

// same reports whether a and b describe one folder alike.
func same(a, b *skillview.Ref) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Dir == b.Dir && a.Layer == b.Layer && a.Name == b.Name &&
		slices.Equal(a.Problems().Errors, b.Problems().Errors) && slices.Equal(a.Problems().Warnings, b.Problems().Warnings)
}

func dirsOf(refs []*skillview.Ref) string {
	var out []string
	for _, s := range refs {
		out = append(out, s.Dir)
	}
	return strings.Join(out, ",")
}

func compareViews(mount string, v *skillview.View, want *referenceView) error {
	got := slices.Collect(v.All())
	if len(got) != len(want.skills) {
		return fmt.Errorf("folders %s, want %s", dirsOf(got), dirsOf(want.skills))
	}
	for i := range got {
		if !same(got[i], want.skills[i]) {
			return fmt.Errorf("folder %d: %+v, want %+v", i, got[i], want.skills[i])
		}
	}
	for _, name := range []string{"alpha", "beta", "gamma", "a", "b", "c", "d", "x", "y", "Display Name"} {
		s, ok := v.Named(name)
		if w := want.byName[name]; ok != (w != nil) || (ok && !same(s, w)) {
			return fmt.Errorf("name %q: %v, want %v", name, s, w)
		}
		for what, pair := range map[string][2][]*skillview.Ref{
			"folder":  {v.Merged(v.Own.ByFolder(name), v.Shared.ByFolder(name)), want.byFolder[name]},
			"display": {v.Merged(v.Own.Display(name), v.Shared.Display(name)), want.byDisplay[name]},
		} {
			if dirsOf(pair[0]) != dirsOf(pair[1]) {
				return fmt.Errorf("%s %q: %s, want %s", what, name, dirsOf(pair[0]), dirsOf(pair[1]))
			}
		}
	}
	for dir, w := range want.byDir {
		if s, ok := v.Skill(dir); !ok || !same(s, w) {
			return fmt.Errorf("dir %q: %v, want %v", dir, s, w)
		}
	}
	for _, s := range slices.Concat(v.Own.All, v.Shared.All) {
		if _, ok := v.Skill(s.Dir); ok != (want.byDir[s.Dir] != nil) {
			return fmt.Errorf("dir %q found %t", s.Dir, ok)
		}
	}
	var files []string
	for e := range v.Files("") {
		files = append(files, e.Rel)
	}
	var wantFiles []string
	for _, e := range want.entries {
		wantFiles = append(wantFiles, e.Rel)
		if g, ok := v.File(e.Rel); !ok || g.Obj.Key != e.Obj.Key {
			return fmt.Errorf("file %q: %v, want %s", e.Rel, g.Obj.Key, e.Obj.Key)
		}
	}
	if !slices.Equal(files, wantFiles) {
		return fmt.Errorf("files %q, want %q", files, wantFiles)
	}
	for _, e := range slices.Concat(v.Own.Entries, v.Shared.Entries) {
		if _, ok := v.File(e.Rel); ok != slices.Contains(wantFiles, e.Rel) {
			return fmt.Errorf("file %q found %t", e.Rel, ok)
		}
		for _, prefix := range []string{path.Dir(e.Rel) + "/"} {
			var got, want []string
			for g := range v.Files(prefix) {
				got = append(got, g.Rel)
			}
			for _, w := range wantFiles {
				if strings.HasPrefix(w, prefix) {
					want = append(want, w)
				}
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("files under %q: %q, want %q", prefix, got, want)
			}
		}
	}
	if v.Digest() != want.digest {
		return fmt.Errorf("digest differs")
	}
	return nil
}
