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
	// LayerShared) was activated recently, and a version equal for equal
	// orders of them: what a reply ordered by them is kept under.
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

// ByUse orders items (skills in today's order) most recently used first,
// each by its own layer's uses; ties and unused skills keep their order.
func ByUse[T any](u Uses, id mounts.Caller, items []T, ref func(T) *Ref) {
	if u == nil || len(items) < 2 {
		return
	}
	counts := make(map[string]map[string]int64)
	n := func(r *Ref) int64 {
		m, ok := counts[r.Layer]
		if !ok {
			m, _ = u.Recent(id, r.Layer)
			counts[r.Layer] = m
		}
		return m[r.Name]
	}
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(n(ref(b)), n(ref(a))) })
}
