package skills_test

import (
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestRepliesSharedAcrossReplicas: a reply one replica built is every
// replica's (through Redis), for the same library content and request
// only; a request of other options is built once, by whichever replica
// gets it first.
func TestRepliesSharedAcrossReplicas(t *testing.T) {
	_, rs := newReplicas(t, testserver.SharedRedis(t).Addr, time.Hour, 2)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	builds := 0
	prompt := func(r replica, f skillmd.FormatOptions) string {
		t.Helper()
		b, _, err := r.lib.Catalog.PromptReply(t.Context(), alice, skills.ListOptions{}, f, func(b skills.Block) ([]byte, error) {
			builds++
			return []byte(b.Text), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	page := func(r replica) string {
		t.Helper()
		b, err := r.lib.Catalog.PageReply(t.Context(), alice, skills.ListOptions{}, 0, "", "", func(p skills.Page) ([]byte, error) {
			builds++
			return describePage(p), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := rs[0], rs[1]
	wantBlock, wantPage := prompt(a, skillmd.FormatOptions{}), page(a)
	if builds != 2 {
		t.Fatalf("replica A built %d replies, want 2", builds)
	}
	if got := prompt(b, skillmd.FormatOptions{}); got != wantBlock {
		t.Errorf("replica B's block:\n%s\nwant A's:\n%s", got, wantBlock)
	}
	if got := page(b); got != wantPage {
		t.Errorf("replica B's page:\n%s\nwant A's:\n%s", got, wantPage)
	}
	if builds != 2 {
		t.Errorf("replica B built %d replies, want none: A's are in Redis", builds-2)
	}
	md := skillmd.FormatOptions{Format: skillmd.FormatMarkdown}
	mdBlock := prompt(b, md)
	if builds != 3 {
		t.Fatalf("a block of other options: %d builds, want 3", builds)
	}
	if got := prompt(a, md); got != mdBlock || builds != 3 {
		t.Errorf("replica A's markdown block after B built it: %d builds (want 3), equal %t", builds, got == mdBlock)
	}
}
