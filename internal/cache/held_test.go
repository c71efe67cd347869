package cache

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestHeld: what is held never passes the budget, whatever the kinds; the
// least recently used goes first; a value larger than the budget is not
// held; the metrics say so.
func TestHeld(t *testing.T) {
	m := NewHeldMetrics()
	const item = 100 // charged item + heldItemBytes + len(key)
	charged := int64(item + heldItemBytes + 2)
	h := NewHeld(4*charged, m) // room for four
	a, b := NewShelf[string](h, "a"), NewShelf[int](h, "b")
	check := func(when string, want int64) {
		t.Helper()
		used := h.Bytes()
		if used > h.MaxBytes() || used != want*charged {
			t.Errorf("%s: %d bytes held, want %d (%d values), at most %d", when, used, want*charged, want, h.MaxBytes())
		}
		sum := testutil.ToFloat64(m.HeldBytes.WithLabelValues("a")) + testutil.ToFloat64(m.HeldBytes.WithLabelValues("b"))
		if int64(sum) != used {
			t.Errorf("%s: metric says %v bytes held, want %d", when, sum, used)
		}
	}
	for i := range 4 {
		a.Add(fmt.Sprintf("a%d", i), "v", item)
	}
	check("four values", 4)
	if _, ok := a.Get("a0"); !ok { // now the most recently used
		t.Fatal("a0 not held")
	}
	b.Add("b0", 7, item)
	check("a fifth value", 4)
	if _, ok := a.Get("a1"); ok {
		t.Error("a1, the least recently used, is still held")
	}
	if _, ok := a.Get("a0"); !ok {
		t.Error("a0, used since, was evicted")
	}
	if v, ok := b.Get("b0"); !ok || v != 7 {
		t.Errorf("b0 = %v, %v", v, ok)
	}
	if n := testutil.ToFloat64(m.HeldEvictions.WithLabelValues("a")); n != 1 {
		t.Errorf("%v evictions of kind a, want 1", n)
	}
	b.Add("b0", 8, item) // replaced, not added twice
	check("a value replaced", 4)
	b.Remove("b0")
	check("a value removed", 3)
	if b.Add("b1", 9, 4*charged) {
		t.Error("a value larger than the budget was held")
	}
	check("a value too large", 3)
	if n := testutil.ToFloat64(m.HeldTooLarge.WithLabelValues("b")); n != 1 {
		t.Errorf("%v values too large, want 1", n)
	}
	if n := testutil.ToFloat64(m.HeldMaxBytes); int64(n) != h.MaxBytes() {
		t.Errorf("max bytes metric %v, want %d", n, h.MaxBytes())
	}
}
