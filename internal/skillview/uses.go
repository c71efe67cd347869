package skillview

import (
	"cmp"
	"slices"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Uses are the recent activations of the skills of a caller's layers
// (internal/usage), by which a listing may order each layer's skills.
// Recent never waits on storage.
type Uses interface {
	// Recent is how often each skill of id's layer (LayerUser, a team's,
	// LayerShared) was activated recently, by name and by UseKey(name,
	// version), and a version equal for equal orders of them: what a reply
	// ordered by them is kept under.
	Recent(id mounts.Caller, layer string) (counts map[string]int64, version string)
}

// UseLayers are the layers whose uses order id's listings: its own, its
// teams', the organization's.
func UseLayers(id mounts.Caller) []string {
	out := []string{LayerUser}
	for _, t := range id.Teams() {
		out = append(out, LayerTeam+t)
	}
	return append(out, LayerShared)
}

// UseKey is the key of a skill's uses of one version (its manifest
// digest) in Uses' counts; a name holds no NUL.
func UseKey(name, version string) string { return name + "\x00" + version }

// ByUse orders items (skills in today's order) most recently used first,
// each by its own layer's uses; ties and unused skills keep their order. A
// name two items of a layer share (folders in two categories) is counted
// by the version each serves, so the use of one does not lift the other;
// a name of one folder by all its versions' uses.
func ByUse[T any](u Uses, id mounts.Caller, items []T, ref func(T) *Ref) {
	if u == nil || len(items) < 2 {
		return
	}
	type layerName struct{ layer, name string }
	folders := make(map[layerName]int, len(items))
	for _, it := range items {
		r := ref(it)
		folders[layerName{r.Layer, r.Name}]++
	}
	counts := make(map[string]map[string]int64)
	n := func(r *Ref) int64 {
		m, ok := counts[r.Layer]
		if !ok {
			m, _ = u.Recent(id, r.Layer)
			counts[r.Layer] = m
		}
		if folders[layerName{r.Layer, r.Name}] > 1 {
			return m[UseKey(r.Name, r.Digest())]
		}
		return m[r.Name]
	}
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(n(ref(b)), n(ref(a))) })
}
