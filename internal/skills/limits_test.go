package skills_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// TestMaxObjects checks that a library larger than the listing cap is
// served truncated rather than failing every call.
func TestMaxObjects(t *testing.T) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		body := fmt.Sprintf("---\nname: %s\ndescription: skill %s\n---\n", name, name)
		if _, err := b.Put(ctx, "alice/skills/"+name+"/SKILL.md", bytes.NewReader([]byte(body)), int64(len(body)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := skills.DefaultConfig()
	cfg.IndexTTL = 0
	cfg.MaxObjects = 2
	lib, err := skills.New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	list, err := lib.Catalog.Skills(ctx, mounts.Identity{User: "alice", Thread: "t"}, skills.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
		t.Errorf("listed %+v, want a and b", list)
	}
}
