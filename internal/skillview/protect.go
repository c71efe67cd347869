package skillview

import (
	"slices"
	"strings"
)

// Protected skills (the names a shared or team library protects, stored in
// its side object: internal/settings) as the views apply them: a lower
// layer's protected skills shadow a higher layer's namesakes.

// protectedLayer is a layer of the given skills (protected ones of lower
// layers), the first of a folder kept: composed over a higher layer with
// its names, it shadows that layer's folders at their paths, and its
// skills come first for their names (lookups order "shared" and "team:"
// before "user", and the shared library's before a team's).
func protectedLayer(refs []*Ref) *Layer {
	slices.SortStableFunc(refs, func(a, b *Ref) int { return strings.Compare(a.Dir, b.Dir) })
	refs = slices.CompactFunc(refs, func(a, b *Ref) bool { return a.Dir == b.Dir })
	l := &Layer{All: refs}
	for _, s := range refs {
		l.Entries = append(l.Entries, s.Files...)
	}
	slices.SortFunc(l.Entries, func(a, b Entry) int { return strings.Compare(a.Rel, b.Rel) })
	l.Lookups(refs)
	return l
}

// protectedOf returns the skills of l whose names it protects.
func protectedOf(l *Layer) []*Ref {
	var out []*Ref
	for _, n := range l.Protected {
		out = append(out, l.named(n)...)
	}
	return out
}

// ProtectAll is the protected names of a library whose list is no list:
// every name its skills are served by.
func ProtectAll(l *Layer) []string {
	var names []string
	for _, s := range l.names {
		names = append(names, s.Name)
	}
	return slices.Compact(names) // l.names is sorted by name
}
