package skillview

import (
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// ComposeBase is the composition of views' base layer, uncached: a pinned
// thread's view composes its frozen layers with it too. mount and maxSkills
// are shadow's.
func ComposeBase(mount string, maxSkills int, teams []string, lower []*Layer) *Layer {
	sl := lower[len(lower)-1]
	var l *Layer
	if len(teams) == 0 {
		c := *sl // the same skills; a generation that names the protection
		l = &c
	} else {
		t := lower[0]
		for _, next := range lower[1 : len(lower)-1] {
			t = Compose(mount, maxSkills, t, next, false)
		}
		if ps := protectedOf(sl); len(ps) > 0 {
			t = Compose(mount, maxSkills, protectedLayer(ps), t, false)
		}
		l = Compose(mount, maxSkills, t, sl, true)
	}
	l.Name = ""
	var served []*Ref
	for _, ly := range lower {
		for _, s := range protectedOf(ly) {
			if d, ok := l.Dir(s.Dir); ok && d.Layer == s.Layer && d.Name == s.Name {
				served = append(served, d)
			}
		}
	}
	if len(served) > 0 {
		l.Prot = protectedLayer(served)
	}
	return l
}

// Compose makes the layer upper shows over lower, hiding lower's folders
// by path and, with byName, by name, from the skills of both (never a
// copy of a skill, but the regrouped ones overlay makes).
func Compose(mount string, maxSkills int, upper, lower *Layer, byName bool) *Layer {
	o := Shadow(mount, maxSkills, upper, lower, byName)
	v := &View{Overlay: o, Shared: lower}
	l := &Layer{}
	for e := range v.Files("") {
		l.Entries = append(l.Entries, e)
	}
	var skills []*Ref
	for s := range v.All() {
		l.All = append(l.All, s)
		if !s.Nested {
			skills = append(skills, s)
		}
	}
	l.Lookups(skills)
	// What either side or this composition hides by name alone stays
	// reachable by its path, unless the composition has a folder there.
	shadowed := slices.Concat(upper.shadowed, lower.shadowed)
	for _, dir := range o.byName {
		if s, ok := lower.Dir(dir); ok {
			shadowed = append(shadowed, s)
		}
	}
	shadowed = slices.DeleteFunc(shadowed, func(s *Ref) bool {
		_, ok := l.Dir(s.Dir)
		return ok
	})
	slices.SortStableFunc(shadowed, func(a, b *Ref) int { return strings.Compare(a.Dir, b.Dir) })
	l.shadowed = slices.CompactFunc(shadowed, func(a, b *Ref) bool { return a.Dir == b.Dir })
	return l
}

// Problems are s's problems and what the view notes of it across layers
// (notes).
func (v *View) Problems(mount string, s *Ref) skillmd.Problems {
	p := s.Problems()
	p.Warnings = append(p.Warnings, v.Notes(mount, s)...)
	return p
}

// Notes are the view's warnings on s across layers: the skills of lower
// layers it hides (by name or path), the other teams' skills served under
// its name, protection, and for a skill reached by its path, what takes
// its name. Worked out per summary, from the layers' lookups, so no layer
// or overlay holds per-caller notes.
func (v *View) Notes(mount string, s *Ref) []string {
	if s.Nested || len(v.Lower) == 0 {
		return nil
	}
	var p skillmd.Problems
	w, _ := v.Named(s.Name) // the skill the name refers to
	switch {
	case v.protected(s):
		p.Warnf("protected by an administrator: no lower layer's skill of its name or path replaces it")
	case w == nil || w == s:
	case v.protected(w):
		p.Warnf("not serving the name %q: the %s skill at %s/%s is protected by an administrator; refer to this skill by its path %s/%s", s.Name, w.Layer, mount, w.Dir, mount, s.Dir)
	case strings.HasPrefix(s.Layer, LayerTeam) && strings.HasPrefix(w.Layer, LayerTeam) && w.Layer != s.Layer:
		p.Warnf("name %q is also served by the %s skill at %s/%s, which the name refers to (of the teams, the first by ID); refer to this skill by its path %s/%s", s.Name, w.Layer, mount, w.Dir, mount, s.Dir)
	case v.rank(w.Layer) < v.rank(s.Layer):
		p.Warnf("not served under its name %q, which the %s skill at %s/%s takes; reached by its path %s/%s", s.Name, w.Layer, mount, w.Dir, mount, s.Dir)
	}
	for _, l := range v.Lower[min(v.rank(s.Layer), len(v.Lower)):] { // the layers under s's own
		if d, ok := l.Dir(s.Dir); ok && !d.Nested {
			p.Warnf("hides the %s skill at the same path %s/%s", l.Name, mount, d.Dir)
		}
		for _, g := range l.named(s.Name) {
			switch {
			case g.Dir == s.Dir || g == w:
			case strings.HasPrefix(s.Layer, LayerTeam) && strings.HasPrefix(l.Name, LayerTeam):
				if w == s {
					p.Warnf("name %q is also served by the %s skill at %s/%s; the name refers to this skill (of the teams, the first by ID)", s.Name, l.Name, mount, g.Dir)
				}
			default:
				p.Warnf("hides the %s skill %q at %s/%s", l.Name, g.Name, mount, g.Dir)
			}
		}
	}
	return p.Warnings
}

// rank is a layer's place in the view, highest first: the user's 0, then
// the teams' in ID order from 1, then the shared library's.
func (v *View) rank(layer string) int {
	if layer == LayerUser {
		return 0
	}
	for i, l := range v.Lower {
		if l.Name == layer {
			return i + 1
		}
	}
	return len(v.Lower) + 1
}

// protected reports whether s is a protected skill the view serves.
func (v *View) protected(s *Ref) bool {
	p := v.Shared.Prot
	if p == nil {
		return false
	}
	d, ok := p.Dir(s.Dir)
	return ok && d == s
}
