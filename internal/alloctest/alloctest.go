// Package alloctest measures what a piece of work allocates, for tests
// that hold a request's memory to a bound set by its inputs.
package alloctest

import "runtime"

// Bytes returns the bytes fn allocated on the heap. It counts every
// goroutine's allocations while fn runs, so a test bounds fn generously
// or runs nothing else meanwhile.
func Bytes(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
