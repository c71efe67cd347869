package userset

import (
	"slices"
	"testing"
)

func TestSet(t *testing.T) {
	var s Set
	for _, u := range []string{"carol", "alice", "bob", "alice", "dave"} {
		s.Add(Hash(u), 3)
	}
	if len(s) != 3 || !slices.IsSorted(s) || !slices.Contains(s, Hash("alice")) {
		t.Fatalf("set of 4 users within 3: %x", s)
	}
	for _, c := range []struct {
		name string
		k    int
		sets []Set
		want int
	}{
		{"disjoint", 5, []Set{{1, 2}, {3}}, 3},
		{"overlapping", 5, []Set{{1, 2}, {2, 3}, {1}}, 3},
		{"past k", 2, []Set{{1, 2}, {3}}, 2},
		{"none", 2, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := Union(c.k, c.sets...)
			if len(u) != c.want || !slices.IsSorted(u) {
				t.Errorf("union %v, want %d members", u, c.want)
			}
		})
	}
	enc := Encode(Set{1, 1 << 63, 42})
	if got := Decode(enc, 5); !slices.Equal(got, Set{1, 42, 1 << 63}) {
		t.Errorf("Decode(Encode) = %x", got)
	}
	if got := Decode(enc+"zz", 2); len(got) != 2 {
		t.Errorf("Decode within 2: %x", got)
	}
	if Hash("alice") != Hash("alice") || Hash("alice") == Hash("bob") {
		t.Error("Hash is not a stable function of the user")
	}
}
