package libindex

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// heapAfter returns the live heap after a collection.
func heapAfter() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// testIndex is an index of n skills (a SKILL.md with a head and a file
// each, both hashed) in l.
func testIndex(l Layer, n int) *Index {
	x := &Index{Gen: 1, Listed: time.Now()}
	defer func() {
		slices.SortFunc(x.Objs, func(a, b objstore.Object) int { return strings.Compare(a.Key, b.Key) })
		slices.SortFunc(x.Heads, func(a, b Head) int { return strings.Compare(a.Key, b.Key) })
		slices.SortFunc(x.Digests, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	}()
	for i := range n {
		for _, f := range []string{"SKILL.md", "references/guide.md"} {
			k := fmt.Sprintf("%scat-%02d/skill-%04d/%s", l.Prefix, i%20, i, f)
			x.Objs = append(x.Objs, objstore.Object{Key: k, Attributes: objstore.Attributes{Size: 3000, ETag: fmt.Sprintf("%032x", i), ModTime: time.Now()}})
			x.Digests = append(x.Digests, KeyDigest{Key: k, Digest: Digest{Size: 3000, Sum: sha256.Sum256([]byte(k)), Mode: 0o644}})
			if f == "SKILL.md" {
				x.Heads = append(x.Heads, Head{Key: k, Head: fmt.Appendf(nil, "---\nname: skill-%04d\ndescription: Skill %04d; extracts, converts and summarizes documents of its kind.\nlicense: Apache-2.0\n---\n", i, i)})
			}
		}
	}
	return x
}

// TestIndexHeldBytes: the estimate an index is charged is close to the
// heap it takes, from above, for one large library and many small ones,
// decoded as a replica decodes them from the shared cache.
func TestIndexHeldBytes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		indexes, skills int
	}{
		{"one of 1000 skills", 1, 1000},
		{"200 of 5 skills", 200, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records := make([][]byte, tc.indexes)
			layers := make([]Layer, tc.indexes)
			for i := range records {
				layers[i] = Layer{Tag: fmt.Sprintf("u%d", i), Prefix: fmt.Sprintf("u%d/skills/", i)}
				b, err := encodeIndex(testIndex(layers[i], tc.skills), layers[i])
				if err != nil {
					t.Fatal(err)
				}
				records[i] = b
			}
			decoded := make([]*Index, tc.indexes)
			before := heapAfter()
			for i, b := range records {
				y, err := DecodeIndex(b, layers[i], 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				decoded[i] = y
			}
			heap := heapAfter() - before
			var est int64
			for _, y := range decoded {
				est += y.HeldBytes()
			}
			runtime.KeepAlive(records)
			skills := int64(tc.indexes * tc.skills)
			t.Logf("%d bytes of heap, estimated %d (%d a skill)", heap, est, est/skills)
			if est < heap*9/10 || est > heap*13/10 {
				t.Errorf("estimate %d bytes for %d of heap, want within -10%%..+30%%", est, heap)
			}
		})
	}
}
