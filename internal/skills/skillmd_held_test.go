package skills

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestSkillMDParsedOnce: GetSkill and RenderSkill read and parse a
// SKILL.md once per version: later calls read nothing, not even the file
// cache, and a new version (once the listing has it) is read afresh.
func TestSkillMDParsedOnce(t *testing.T) {
	mem := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")})
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, objstoretest.NewFaulty(mem), nil, clk)
	reads := func() float64 {
		sum := 0.0
		for _, r := range []string{"hit", "miss", "uncached"} {
			sum += testutil.ToFloat64(lib.metrics.Files.WithLabelValues(r))
		}
		return sum
	}
	d, err := lib.Catalog.Get(t.Context(), alice, "one")
	if err != nil || !strings.Contains(d.Body, "# one") {
		t.Fatalf("Get = %+v, %v", d, err)
	}
	before := reads()
	for range 3 {
		again, err := lib.Catalog.Get(t.Context(), alice, "one")
		if err != nil || again.Raw != d.Raw || again.Body != d.Body || again.ETag != d.ETag || again.Description != d.Description {
			t.Fatalf("Get again = %+v, %v; want %+v", again, err, d)
		}
		if _, _, err := lib.Catalog.Render(t.Context(), alice, "one", RenderOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads() - before; n != 0 {
		t.Errorf("the same version was read %v more times, want 0", n)
	}

	changed := "---\nname: one\ndescription: Changed.\n---\n# one, changed\n"
	if _, err := mem.Put(t.Context(), "alice/skills/one/SKILL.md", strings.NewReader(changed), int64(len(changed)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lib.Catalog.DropIndex(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	d, err = lib.Catalog.Get(t.Context(), alice, "one")
	if err != nil || d.Raw != changed || d.Body != "# one, changed\n" || d.Description != "Changed." {
		t.Errorf("Get after the change = %+v, %v; want the new version", d, err)
	}
}
