package skills

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestRepliesBound: the replies kept never cost more than the bound; the
// least recently used go first, and a reply larger than the bound is sent
// but not kept.
func TestRepliesBound(t *testing.T) {
	const size = 1000
	reply := []byte(strings.Repeat("r", size))
	cost := replyCost(strings.Repeat("k", 32), reply)
	r := newReplies(3*cost, newReplyMetrics(nil))
	builds := map[string]int{}
	get := func(key string, b []byte) {
		t.Helper()
		key = fmt.Sprintf("%032s", key) // as long as a real key
		got, err := r.get(replyList, key, func() ([]byte, error) { builds[key]++; return b, nil })
		if err != nil || len(got) != len(b) {
			t.Fatalf("get(%s) = %d bytes, %v", key, len(got), err)
		}
		if n, bytes := r.held(); bytes > r.maxBytes {
			t.Fatalf("after get(%s): %d replies cost %d bytes, bound %d", key, n, bytes, r.maxBytes)
		}
	}
	for _, k := range []string{"a", "b", "c", "a", "d", "e"} { // a is used again before d evicts b
		get(k, reply)
	}
	if n, _ := r.held(); n != 3 {
		t.Errorf("holding %d replies, want 3 (the bound)", n)
	}
	before := len(builds)
	for _, k := range []string{"a", "d", "e"} {
		get(k, reply)
	}
	if len(builds) != before {
		t.Errorf("the 3 most recently used replies were built again: %v", builds)
	}
	for _, k := range []string{"b", "c"} {
		get(k, reply)
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

// TestRepliesBoundCatalog: a catalog's replies stay within
// --skills.reply-cache-bytes however many it is asked for.
func TestRepliesBoundCatalog(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("alice/skills/s%02d/SKILL.md", i)] = fmt.Sprintf("---\nname: s%02d\ndescription: Skill %d of a library.\n---\nbody\n", i, i)
	}
	cfg := DefaultConfig()
	cfg.ReplyCacheBytes = 4 << 10
	lib, err := New(objstoretest.NewBucket(t, files), mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	for size := int32(1); size <= 40; size++ {
		if _, err := lib.Catalog.PageReply(t.Context(), alice, ListOptions{}, size, "", "", func(p Page) ([]byte, error) {
			return []byte(fmt.Sprint(p.Skills)), nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, bytes := lib.Catalog.replies.held(); bytes > cfg.ReplyCacheBytes || n == 0 {
			t.Fatalf("after page size %d: %d replies of %d bytes, want some within %d", size, n, bytes, cfg.ReplyCacheBytes)
		}
	}
}
