package cache

import (
	"fmt"
	"testing"
	"time"
)

// Locks whose holders never release them must not pile up.
func TestLRULockTableBounded(t *testing.T) {
	c := NewLRU(1024)
	for i := range 5 * maxLocks {
		if _, ok, err := c.TryLock(t.Context(), fmt.Sprintf("lock/%d", i), time.Nanosecond); err != nil || !ok {
			t.Fatalf("TryLock %d: %v, %v", i, ok, err)
		}
		c.mu.Lock()
		n := len(c.locks)
		c.mu.Unlock()
		if n > maxLocks+1 {
			t.Fatalf("after %d expired locks the table holds %d, want at most %d", i+1, n, maxLocks+1)
		}
	}
}
