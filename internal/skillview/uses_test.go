package skillview

import (
	"slices"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

type fakeUses map[string]map[string]int64

func (f fakeUses) Recent(_ mounts.Caller, layer string) (map[string]int64, string) {
	return f[layer], "v"
}

// TestByUseSharedName: a name two folders of a layer share is ordered by
// the version each serves, so using one lifts only it; a name of one
// folder by its name's uses, whatever version was used.
func TestByUseSharedName(t *testing.T) {
	ref := func(dir, name, digest string) *Ref {
		return &Ref{Dir: dir, Name: name, Layer: LayerShared, Manifest: &Manifest{Digest: digest}}
	}
	items := []*Ref{
		ref("a/other", "other", "sha256:o"),
		ref("docs/pdf", "pdf", "sha256:1"),
		ref("legal/pdf", "pdf", "sha256:2"),
		ref("z/report", "report", "sha256:new"),
	}
	uses := fakeUses{LayerShared: {
		"pdf": 5, UseKey("pdf", "sha256:2"): 5, // legal/pdf used, docs/pdf not
		"report": 3, UseKey("report", "sha256:old"): 3, // used before its last change
	}}
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	ByUse(uses, id, items, func(r *Ref) *Ref { return r })
	var got []string
	for _, r := range items {
		got = append(got, r.Dir)
	}
	if want := []string{"legal/pdf", "z/report", "a/other", "docs/pdf"}; !slices.Equal(got, want) {
		t.Errorf("ByUse = %v, want %v", got, want)
	}
}
