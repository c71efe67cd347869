package skillview

import (
	"hash/maphash"
	"sync/atomic"
)

// Admission decides which values of one user's own are worth keeping: those
// asked for a second time while it remembers the first. A replica serving
// thousands of users reads most users' own skills once in a long while, and
// keeping each such parse or reply would evict what every call needs (the
// users' views, on the held budget) for a value never asked for again. The
// shared library's values are kept at once: every user asks for them.
//
// It remembers a fixed number of recent first asks, by hash, each in a slot
// a later first ask may take: a value asked for again within a few thousand
// first asks is kept from its second ask, one user repeating a call at
// once. Two keys sharing a slot only make it forget one sooner; a value is
// admitted early only when another's 64-bit hash equals its own.
type Admission struct {
	seed  maphash.Seed
	slots [admissionSlots]atomic.Uint64
}

// admissionSlots is how many first asks an Admission remembers (8 bytes each).
const admissionSlots = 4096

// NewAdmission returns an Admission remembering nothing yet.
func NewAdmission() *Admission { return &Admission{seed: maphash.MakeSeed()} }

// again reports whether key was asked for before, as far as a remembers,
// and remembers that it was.
func (a *Admission) again(key string) bool {
	h := maphash.String(a.seed, key) | 1 // 0 is an empty slot
	slot := &a.slots[h%admissionSlots]
	if slot.Load() == h {
		return true
	}
	slot.Store(h)
	return false
}

// Keeps reports whether a value of s's under key is to be kept now: any
// library's but the user's own at once, the user's from its second ask.
func (a *Admission) Keeps(s *Ref, key string) bool {
	return s.Layer != LayerUser || a.again(key)
}
