package libindex

import (
	"unsafe"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Estimates of the heap a decoded value keeps alive, on 64-bit platforms:
// what cache.Held charges. Each is a fixed cost per part plus the bytes of its
// strings, measured against runtime.MemStats by TestHeldEstimates (an index
// of 1,000 skills, and 200 of 5: within 30% of the heap they take, never
// under 90% of it).
const (
	// indexBytes: the Index and its slice headers.
	indexBytes = 160
)

// HeldBytes estimates the heap x keeps alive.
func (x *Index) HeldBytes() int64 {
	n := int64(indexBytes)
	n += cache.AllocBytes(cap(x.Objs) * int(unsafe.Sizeof(objstore.Object{})))
	for _, o := range x.Objs {
		n += cache.AllocBytes(len(o.Key)) + cache.AllocBytes(len(o.ETag))
	}
	// The keys of heads and digests are those of Objs.
	n += cache.AllocBytes(cap(x.Heads) * int(unsafe.Sizeof(Head{})))
	for _, h := range x.Heads {
		n += cache.AllocBytes(len(h.Head))
	}
	return n + cache.AllocBytes(cap(x.Digests)*int(unsafe.Sizeof(KeyDigest{})))
}
