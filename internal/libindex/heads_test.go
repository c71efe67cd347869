package libindex

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestHeadsKeepOnlyTheFrontmatter: a head read from storage keeps the
// frontmatter alone, not the buffer the read filled (an index holds every
// head it read, and the held budget counts only what it keeps).
func TestHeadsKeepOnlyTheFrontmatter(t *testing.T) {
	body := "---\nname: one\ndescription: Does one thing.\n---\n" + strings.Repeat("Body text.\n", 300)
	b := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": body})
	a, err := b.Stat(t.Context(), "alice/skills/one/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	o := objstore.Object{Key: "alice/skills/one/SKILL.md", Attributes: a}
	h := &headReader{bucket: b, cache: cache.NewLRU(1 << 20), ttl: time.Hour, headBytes: 8 << 10, concurrency: 1, cacheLog: NewCacheLog(slog.New(slog.DiscardHandler))}
	heads, _, err := h.fetch(t.Context(), "alice", []objstore.Object{o})
	if err != nil {
		t.Fatal(err)
	}
	head := heads[o.Key]
	if string(head) != "---\nname: one\ndescription: Does one thing.\n---\n" {
		t.Fatalf("head = %q, want the frontmatter", head)
	}
	if cap(head) > len(head)+16 {
		t.Errorf("the head of %d bytes keeps %d bytes alive", len(head), cap(head))
	}
}

// TestHeadOfARewrittenSkillNamesItsVersion: a SKILL.md rewritten between a
// listing and the read of its head is held as the version read, under that
// version's ETag, not under the listed one: whatever is keyed by version
// (the cached head, the parse the catalog shares through the cache) then
// holds that version's bytes, and the next listing finds it unchanged.
func TestHeadOfARewrittenSkillNamesItsVersion(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	c := cache.NewLRU(1 << 20)
	log := slog.New(slog.DiscardHandler)
	ix := New(b, c, testConfig(5*time.Second), log, NewCacheLog(log), NewMetrics(nil))
	t.Cleanup(ix.Close)
	listed, err := b.Stat(t.Context(), keyA)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := "---\nname: a\ndescription: Rewritten after the listing.\n---\n"
	var written objstore.Attributes
	once := false
	b.Before(objstore.OpGetRange, func(_ context.Context, call objstoretest.Call) error {
		if call.Key == keyA && !once {
			once = true // listed already: the read finds the new version
			written = objstoretest.Put(t, b, keyA, rewritten)
		}
		return nil
	})
	x, err := ix.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	if written.ETag == "" || written.ETag == listed.ETag {
		t.Fatalf("the rewrite did not change the ETag (%q, listed %q)", written.ETag, listed.ETag)
	}
	i := slices.IndexFunc(x.Objs, func(o objstore.Object) bool { return o.Key == keyA })
	if i < 0 || x.Objs[i].ETag != written.ETag || x.Objs[i].Size != written.Size {
		t.Fatalf("the index names %+v, want the version read (%+v)", x.Objs, written)
	}
	if head, _ := x.HeadOf(keyA); string(head) != rewritten {
		t.Errorf("head = %q, want the rewritten one", head)
	}
	cached, err := c.Fetch(t.Context(), []string{headCacheKey("alice", keyA, listed.ETag), headCacheKey("alice", keyA, written.ETag)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cached[headCacheKey("alice", keyA, listed.ETag)]; ok {
		t.Error("a head is cached under the listed version, whose bytes were never read")
	}
	if got := cached[headCacheKey("alice", keyA, written.ETag)]; string(got) != rewritten {
		t.Errorf("cached under the version read: %q, want the rewritten head", got)
	}
}
