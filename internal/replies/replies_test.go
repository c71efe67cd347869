package replies

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
)

// TestRepliesBound: the replies kept never cost more than the bound; the
// least recently used go first, and a reply larger than the bound is sent
// but not kept.
func TestRepliesBound(t *testing.T) {
	const size = 1000
	reply := []byte(strings.Repeat("r", size))
	cost := replyCost(strings.Repeat("k", 32), reply)
	r := New(3*cost, nil)
	builds := map[string]int{}
	get := func(key string, b []byte) {
		t.Helper()
		key = fmt.Sprintf("%032s", key) // as long as a real key
		got, err := r.Get(t.Context(), KindList, key, func() ([]byte, error) { builds[key]++; return b, nil })
		if err != nil || len(got) != len(b) {
			t.Fatalf("get(%s) = %d bytes, %v", key, len(got), err)
		}
		if n, bytes := r.Held(); bytes > r.maxBytes {
			t.Fatalf("after get(%s): %d replies cost %d bytes, bound %d", key, n, bytes, r.maxBytes)
		}
	}
	// Each key's reply its own bytes: equal bytes are kept once
	// (TestRepliesKeepEqualBytesOnce).
	replyOf := func(k string) []byte { return []byte(fmt.Sprintf("%s%0*d", k, size-len(k), 0)) }
	for _, k := range []string{"a", "b", "c", "a", "d", "e"} { // a is used again before d evicts b
		get(k, replyOf(k))
	}
	if n, _ := r.Held(); n != 3 {
		t.Errorf("holding %d replies, want 3 (the bound)", n)
	}
	before := len(builds)
	for _, k := range []string{"a", "d", "e"} {
		get(k, replyOf(k))
	}
	if len(builds) != before {
		t.Errorf("the 3 most recently used replies were built again: %v", builds)
	}
	for _, k := range []string{"b", "c"} {
		get(k, replyOf(k))
	}
	for k, n := range builds {
		if want := map[bool]int{true: 2, false: 1}[strings.HasSuffix(k, "b") || strings.HasSuffix(k, "c")]; n != want {
			t.Errorf("reply %s built %d times, want %d", strings.TrimLeft(k, " "), n, want)
		}
	}

	huge := []byte(strings.Repeat("h", int(r.maxBytes)))
	get("huge", huge)
	get("huge", huge)
	if n := builds[fmt.Sprintf("%032s", "huge")]; n != 2 {
		t.Errorf("a reply over the bound was built %d times for 2 calls, want 2 (not kept)", n)
	}
}

// TestRepliesKeepEqualBytesOnce: replies of equal bytes under many keys
// are kept once, each key costing its key; the bytes go when the last key
// keeping them does, and the bound counts them once.
func TestRepliesKeepEqualBytesOnce(t *testing.T) {
	block := []byte(strings.Repeat("the same prompt block ", 500))
	keyOf := func(i int) string { return fmt.Sprintf("%032d", i) }
	r := New(bodyCost(block)+10*keyCost(keyOf(0)), nil)
	var first []byte
	for i := range 10 {
		got, err := r.Get(t.Context(), KindFormat, keyOf(i), func() ([]byte, error) { return bytes.Clone(block), nil })
		if err != nil || !bytes.Equal(got, block) {
			t.Fatalf("get(%d) = %d bytes, %v", i, len(got), err)
		}
		if i == 0 {
			first = got
		} else if &got[0] != &first[0] {
			t.Errorf("reply %d is a copy of the same bytes, want the kept ones", i)
		}
	}
	n, held := r.Held()
	if want := bodyCost(block) + 10*keyCost(keyOf(0)); n != 10 || held != want {
		t.Errorf("10 keys of one reply: holding %d replies for %d bytes, want 10 for %d (the bytes once)", n, held, want)
	}
	// An eleventh key evicts the oldest, whose bytes stay for the others.
	if _, err := r.Get(t.Context(), KindFormat, keyOf(10), func() ([]byte, error) { return bytes.Clone(block), nil }); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Held(); n != 10 || len(r.bodies) != 1 {
		t.Errorf("after an eleventh key: %d replies, %d distinct bodies; want 10 and 1", n, len(r.bodies))
	}
	// Other bytes under every key: the old body goes with its last key.
	for i := range 11 {
		other := []byte(fmt.Sprintf("reply %d", i))
		r.add(keyOf(i), other)
	}
	for sum, b := range r.bodies {
		if bytes.Equal(b.b, block) {
			t.Errorf("the old block is still kept (%x, %d refs) after every key moved on", sum[:4], b.refs)
		}
	}
	n, held = r.Held()
	var want int64
	for _, b := range r.bodies {
		want += bodyCost(b.b) + int64(b.refs)*keyCost(keyOf(0))
	}
	if held != want || n != len(r.bodies) {
		t.Errorf("holding %d replies for %d bytes; the kept bodies and their keys cost %d", n, held, want)
	}
}

// TestRepliesSharedDamaged: a reply in the shared cache that does not
// check out (cut, flipped, empty) is built again and put back whole; a
// whole one is served as kept.
func TestRepliesSharedDamaged(t *testing.T) {
	shared := cache.NewLRU(1 << 20) // stands for Redis: TestRepliesSharedAcrossReplicas uses the real one
	reply := []byte("the encoded reply")
	key := fmt.Sprintf("%032s", "k")
	for name, damage := range map[string]func([]byte) []byte{
		"cut":     func(v []byte) []byte { return v[:len(v)-1] },
		"flipped": func(v []byte) []byte { v = bytes.Clone(v); v[0] ^= 1; return v },
		"empty":   func([]byte) []byte { return nil },
		"whole":   func(v []byte) []byte { return v },
	} {
		t.Run(name, func(t *testing.T) {
			if err := shared.Store(t.Context(), map[string][]byte{sharedReplyKey(key): damage(sharedReply(reply))}, time.Hour); err != nil {
				t.Fatal(err)
			}
			r := New(1<<20, nil)
			r.Share(shared, time.Hour, libindex.NewCacheLog(slog.New(slog.DiscardHandler)))
			built := false
			got, err := r.Get(t.Context(), KindList, key, func() ([]byte, error) { built = true; return reply, nil })
			if err != nil || !bytes.Equal(got, reply) {
				t.Fatalf("get = %q, %v; want %q", got, err, reply)
			}
			if want := name != "whole"; built != want {
				t.Errorf("built %t, want %t", built, want)
			}
			hits, _ := shared.Fetch(t.Context(), []string{sharedReplyKey(key)})
			if b, err := unframeReply(hits[sharedReplyKey(key)]); err != nil || !bytes.Equal(b, reply) {
				t.Errorf("the shared cache holds %q (%v) after the call, want the whole reply", b, err)
			}
		})
	}
}
