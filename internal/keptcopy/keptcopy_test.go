package keptcopy

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCopies: a key is read once, answered from its copy while fresh, read
// again in the background once stale (the stale call answers the copy), a
// failed read keeps the copy, Forget reads again at once, Set replaces the
// copy with a fresh one, and past max
// keys the copies are dropped.
func TestCopies(t *testing.T) {
	now := time.Unix(0, 0)
	reads := map[string]int{}
	var fail bool
	c := New(10*time.Second, time.Second, 2, func(_ context.Context, key string) (int, error) {
		if fail {
			return 0, errors.New("down")
		}
		reads[key]++
		return reads[key], nil
	}, func() time.Time { return now }, nil)
	get := func(key string, want, wantReads int) {
		t.Helper()
		v, err := c.Get(t.Context(), key)
		c.Wait()
		if err != nil || v != want || reads[key] != wantReads {
			t.Fatalf("Get(%s) = %d, %v after %d reads; want %d after %d", key, v, err, reads[key], want, wantReads)
		}
	}
	get("a", 1, 1)
	get("a", 1, 1) // fresh
	now = now.Add(10 * time.Second)
	get("a", 1, 2) // stale: the copy, read again behind it
	get("a", 2, 2)
	now = now.Add(10 * time.Second)
	fail = true
	get("a", 2, 2) // the read behind it fails: the copy stays
	fail = false
	get("a", 2, 2) // and is fresh again for another interval
	c.Forget("a")
	get("a", 3, 3)
	get("b", 1, 1)
	get("c", 1, 1) // past max: a and b dropped
	get("a", 4, 4)
	c.Set("a", 10) // a write made here: the copy, fresh, no read
	get("a", 10, 4)
	now = now.Add(10 * time.Second)
	c.Set("a", 11) // set past staleness: fresh again
	get("a", 11, 4)
	if _, err := New(time.Second, time.Second, 1, func(context.Context, string) (int, error) { return 0, errors.New("down") }, nil, nil).Get(t.Context(), "x"); err == nil {
		t.Fatal("a first read's error not returned")
	}
}
