package libindex

import (
	"log/slog"
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
	heads, err := h.fetch(t.Context(), "alice", []objstore.Object{o})
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
