package skills

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/settings"
)

// Protected skills (the names a shared or team library protects, stored in
// its side object: internal/settings) as the views apply them: a lower
// layer's protected skills shadow a higher layer's namesakes.

// protectedLayer is a layer of the given skills (protected ones of lower
// layers), the first of a folder kept: composed over a higher layer with
// its names, it shadows that layer's folders at their paths, and its
// skills come first for their names (lookups order "shared" and "team:"
// before "user", and the shared library's before a team's).
func protectedLayer(refs []*skillRef) *layer {
	slices.SortStableFunc(refs, func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) })
	refs = slices.CompactFunc(refs, func(a, b *skillRef) bool { return a.dir == b.dir })
	l := &layer{all: refs}
	for _, s := range refs {
		l.entries = append(l.entries, s.files...)
	}
	slices.SortFunc(l.entries, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	l.lookups(refs)
	return l
}

// protectedOf returns the skills of l whose names it protects.
func protectedOf(l *layer) []*skillRef {
	var out []*skillRef
	for _, n := range l.protected {
		out = append(out, l.named(n)...)
	}
	return out
}

// readSide parses the protected names and the scopes of the layer built from x, the
// library whose Side object is key: read through the file cache, by key and
// ETag, once per version. Protection fails closed: a read that fails is an
// error (the layer is not built, and the next call reads again), and a
// list that is no list (written by other tools) protects every skill of
// the library (all) until an administrator rewrites it; both are logged.
func (vs *views) readSide(ctx context.Context, x *libindex.Index, key string) (settings.Side, bool, error) {
	i, ok := slices.BinarySearchFunc(x.Objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
	if key == "" || !ok || vs.files == nil {
		return settings.Side{}, false, nil
	}
	o := x.Objs[i]
	r, _, err := vs.files.Open(ctx, o, 0, settings.MaxSideBytes+1)
	if err != nil {
		vs.heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return settings.Side{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		vs.heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return settings.Side{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	doc, err := settings.DecodeSide(data)
	if err != nil {
		vs.heads.log.WarnContext(ctx, "skills: protected skills are no list; every skill of the library is protected until SetSkillProtected rewrites it",
			"key", key, "want", fmt.Sprintf(`{"names": [...]}: at most %d names within %d bytes`, settings.MaxProtectedNames, settings.MaxSideBytes))
		return settings.Side{}, true, nil
	}
	slices.Sort(doc.Names)
	doc.Names = slices.Compact(doc.Names)
	return doc, false, nil
}

// protectAll is the protected names of a library whose list is no list:
// every name its skills are served by.
func protectAll(l *layer) []string {
	var names []string
	for _, s := range l.names {
		names = append(names, s.name)
	}
	return slices.Compact(names) // l.names is sorted by name
}
