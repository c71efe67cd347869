package cache

// Estimates of the heap a decoded value keeps alive, on 64-bit platforms:
// what a value is charged on a Held budget. The owners of held values add
// their fixed costs per part to these and measure the sums against
// runtime.MemStats in their tests.

// boxBytes is a value in an interface.
const boxBytes = 16

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

// StringsBytes estimates a slice of strings.
func StringsBytes(ss []string) int64 {
	n := AllocBytes(16 * cap(ss))
	for _, s := range ss {
		n += AllocBytes(len(s))
	}
	return n
}

// StringMapBytes estimates a map of strings to strings.
func StringMapBytes(m map[string]string) int64 {
	n := MapBytes(len(m))
	for k, v := range m {
		n += AllocBytes(len(k)) + AllocBytes(len(v))
	}
	return n
}

// AnyBytes estimates a value decoded from YAML or JSON: maps, lists,
// strings and scalars.
func AnyBytes(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return boxBytes + AllocBytes(len(v))
	case map[string]any:
		if v == nil {
			return 0
		}
		n := MapBytes(len(v))
		for k, e := range v {
			n += AllocBytes(len(k)) + AnyBytes(e)
		}
		return n
	case []any:
		n := AllocBytes(16 * cap(v))
		for _, e := range v {
			n += AnyBytes(e)
		}
		return n
	}
	return boxBytes
}

// MapBytes estimates a map of n entries of two words each (a string to a
// string or to an interface): its header and a group of eight slots while
// it is small, then the slots it keeps free as it grows by doubling.
func MapBytes(n int) int64 {
	switch {
	case n == 0:
		return 48
	case n <= 8:
		return 320
	}
	return 64 + int64(n)*56
}
