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
	// indexBytes: the Index, its slice header, and two map headers with
	// their first groups of slots.
	indexBytes = 384
	// headSlotBytes and digestSlotBytes: one entry of Heads or Digests,
	// with the slots a map keeps free (it grows by doubling, from half
	// full to seven eighths).
	headSlotBytes   = 96
	digestSlotBytes = 128
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
	}
	return int64((n + 255) &^ 255)
}

// HeldBytes estimates the heap x keeps alive.
func (x *Index) HeldBytes() int64 {
	n := int64(indexBytes)
	n += int64(cap(x.Objs)) * int64(unsafe.Sizeof(objstore.Object{}))
	for _, o := range x.Objs {
		n += AllocBytes(len(o.Key)) + AllocBytes(len(o.ETag))
	}
	for _, h := range x.Heads {
		n += headSlotBytes + AllocBytes(len(h))
	}
	n += int64(len(x.Digests)) * digestSlotBytes
	return n
}
