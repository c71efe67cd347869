package libindex

import (
	"unsafe"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Estimates of the heap a decoded value keeps alive, on 64-bit platforms:
// what Held charges. Each is a fixed cost per part plus the bytes of its
// strings, measured against runtime.MemStats by TestHeldEstimates (an index
// of 1,000 skills, and 200 of 5: within 30% of the heap they take, never
// under 90% of it).
const (
	// indexBytes: the Index and its slice headers.
	indexBytes = 160
)

// AllocBytes is the heap an allocation of n bytes takes: n rounded up to
// the Go allocator's size classes (approximately, from above).
func AllocBytes(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 16:
		return 16
	case n <= 256:
		return int64((n + 15) &^ 15)
	case n <= 1024:
		return int64((n + 63) &^ 63)
	case n <= 32<<10:
		return int64((n + 255) &^ 255)
	}
	return int64((n + 8<<10 - 1) &^ (8<<10 - 1)) // whole pages

}

// HeldBytes estimates the heap x keeps alive.
func (x *Index) HeldBytes() int64 {
	n := int64(indexBytes)
	n += AllocBytes(cap(x.Objs) * int(unsafe.Sizeof(objstore.Object{})))
	for _, o := range x.Objs {
		n += AllocBytes(len(o.Key)) + AllocBytes(len(o.ETag))
	}
	// The keys of heads and digests are those of Objs.
	n += AllocBytes(cap(x.Heads) * int(unsafe.Sizeof(Head{})))
	for _, h := range x.Heads {
		n += AllocBytes(len(h.Head))
	}
	return n + AllocBytes(cap(x.Digests)*int(unsafe.Sizeof(KeyDigest{})))
}
