package skills

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

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
func (vs *views) base(teams []string, lower []*layer) *layer {
	sl := lower[len(lower)-1]
	if len(teams) == 0 && len(sl.protected) == 0 {
		return sl
	}
	h := sha256.New()
	for _, l := range lower {
		fmt.Fprintf(h, "%d:%s:%d;", len(l.name), l.name, l.gen)
	}
	gen := binary.BigEndian.Uint64(h.Sum(nil))
	key := "teams\x00" + strings.Join(teams, ",")
	if l, ok := vs.shared.Get(key); ok && l.gen == gen {
		return l
	}
	v, _, _ := vs.flight.Do(fmt.Sprintf("base\x00%s\x00%d", key, gen), func() (any, error) {
		l := vs.composeBase(teams, lower)
		l.gen = gen
		hold(vs, vs.shared, key, l, l.bytes)
		return l, nil
	})
	return v.(*layer)
}

// composeBase is base's composition, uncached: a pinned thread's view
// composes its frozen layers with it too.
func (vs *views) composeBase(teams []string, lower []*layer) *layer {
	sl := lower[len(lower)-1]
	var l *layer
	if len(teams) == 0 {
		c := *sl // the same skills; a generation that names the protection
		l = &c
	} else {
		t := lower[0]
		for _, next := range lower[1 : len(lower)-1] {
			t = vs.compose(t, next, false)
		}
		if ps := protectedOf(sl); len(ps) > 0 {
			t = vs.compose(protectedLayer(ps), t, false)
		}
		l = vs.compose(t, sl, true)
	}
	l.name = ""
	var served []*skillRef
	for _, ly := range lower {
		for _, s := range protectedOf(ly) {
			if d, ok := l.dir(s.dir); ok && d.layer == s.layer && d.name == s.name {
				served = append(served, d)
			}
		}
	}
	if len(served) > 0 {
		l.prot = protectedLayer(served)
	}
	return l
}

// compose makes the layer upper shows over lower, hiding lower's folders
// by path and, with byName, by name, from the skills of both (never a
// copy of a skill, but the regrouped ones overlay makes).
func (vs *views) compose(upper, lower *layer, byName bool) *layer {
	o := vs.shadow(upper, lower, byName)
	v := &view{overlay: o, shared: lower}
	l := &layer{}
	for e := range v.files("") {
		l.entries = append(l.entries, e)
	}
	var skills []*skillRef
	for s := range v.all() {
		l.all = append(l.all, s)
		if !s.nested {
			skills = append(skills, s)
		}
	}
	l.lookups(skills)
	// What either side or this composition hides by name alone stays
	// reachable by its path, unless the composition has a folder there.
	shadowed := slices.Concat(upper.shadowed, lower.shadowed)
	for _, dir := range o.byName {
		if s, ok := lower.dir(dir); ok {
			shadowed = append(shadowed, s)
		}
	}
	shadowed = slices.DeleteFunc(shadowed, func(s *skillRef) bool {
		_, ok := l.dir(s.dir)
		return ok
	})
	slices.SortStableFunc(shadowed, func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) })
	l.shadowed = slices.CompactFunc(shadowed, func(a, b *skillRef) bool { return a.dir == b.dir })
	return l
}

// problems are s's problems and what the view notes of it across layers
// (notes).
func (v *view) problems(mount string, s *skillRef) skillmd.Problems {
	p := s.problems()
	p.Warnings = append(p.Warnings, v.notes(mount, s)...)
	return p
}

// notes are the view's warnings on s across layers: the skills of lower
// layers it hides (by name or path), the other teams' skills served under
// its name, protection, and for a skill reached by its path, what takes
// its name. Worked out per summary, from the layers' lookups, so no layer
// or overlay holds per-caller notes.
func (v *view) notes(mount string, s *skillRef) []string {
	if s.nested || len(v.lower) == 0 {
		return nil
	}
	var p skillmd.Problems
	w, _ := v.named(s.name) // the skill the name refers to
	switch {
	case v.protected(s):
		p.Warnf("protected by an administrator: no lower layer's skill of its name or path replaces it")
	case w == nil || w == s:
	case v.protected(w):
		p.Warnf("not serving the name %q: the %s skill at %s/%s is protected by an administrator; refer to this skill by its path %s/%s", s.name, w.layer, mount, w.dir, mount, s.dir)
	case strings.HasPrefix(s.layer, LayerTeam) && strings.HasPrefix(w.layer, LayerTeam) && w.layer != s.layer:
		p.Warnf("name %q is also served by the %s skill at %s/%s, which the name refers to (of the teams, the first by ID); refer to this skill by its path %s/%s", s.name, w.layer, mount, w.dir, mount, s.dir)
	case v.rank(w.layer) < v.rank(s.layer):
		p.Warnf("not served under its name %q, which the %s skill at %s/%s takes; reached by its path %s/%s", s.name, w.layer, mount, w.dir, mount, s.dir)
	}
	for _, l := range v.lower[min(v.rank(s.layer), len(v.lower)):] { // the layers under s's own
		if d, ok := l.dir(s.dir); ok && !d.nested {
			p.Warnf("hides the %s skill at the same path %s/%s", l.name, mount, d.dir)
		}
		for _, g := range l.named(s.name) {
			switch {
			case g.dir == s.dir || g == w:
			case strings.HasPrefix(s.layer, LayerTeam) && strings.HasPrefix(l.name, LayerTeam):
				if w == s {
					p.Warnf("name %q is also served by the %s skill at %s/%s; the name refers to this skill (of the teams, the first by ID)", s.name, l.name, mount, g.dir)
				}
			default:
				p.Warnf("hides the %s skill %q at %s/%s", l.name, g.name, mount, g.dir)
			}
		}
	}
	return p.Warnings
}

// rank is a layer's place in the view, highest first: the user's 0, then
// the teams' in ID order from 1, then the shared library's.
func (v *view) rank(layer string) int {
	if layer == LayerUser {
		return 0
	}
	for i, l := range v.lower {
		if l.name == layer {
			return i + 1
		}
	}
	return len(v.lower) + 1
}

// protected reports whether s is a protected skill the view serves.
func (v *view) protected(s *skillRef) bool {
	p := v.shared.prot
	if p == nil {
		return false
	}
	d, ok := p.dir(s.dir)
	return ok && d == s
}
