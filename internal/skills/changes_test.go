package skills_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestInvalidateAcrossReplicas: with indexes served for an hour, a change
// written behind the catalog's back shows up on the replica that
// Invalidates it at once, and on another once it Forgets its copy, which
// then costs that replica no listing: the first one published the new
// index. Settings too: each replica keeps them in process (up to
// --cache.lru.max-ttl) until it Forgets them.
func TestInvalidateAcrossReplicas(t *testing.T) {
	mem, rs := newReplicas(t, testserver.SharedRedis(t).Addr, time.Hour, 2)
	a, b := rs[0], rs[1]
	for _, r := range rs {
		if got := r.descriptions(t); len(got) != 2 {
			t.Fatalf("before the change: %v", got)
		}
	}
	put := func(key, body string) {
		t.Helper()
		if _, err := mem.Put(t.Context(), key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name, key, folder string
		forget            func(r replica, ch layout.Change)
	}{
		{"user library", "alice/skills/three/SKILL.md", "three", func(r replica, ch layout.Change) {
			if err := r.lib.Catalog.Forget(ch); err != nil {
				t.Fatal(err)
			}
		}},
		{"shared library", "_shared/skills/four/SKILL.md", "four", func(r replica, ch layout.Change) {
			if err := r.lib.Catalog.Forget(ch); err != nil {
				t.Fatal(err)
			}
		}},
		{"every library", "alice/skills/five/SKILL.md", "five", func(r replica, _ layout.Change) { r.lib.Catalog.ForgetAll() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.key, skillstest.SkillMD(tc.folder, "Added behind the catalog's back.", "body"))
			ch := a.lib.Catalog.ChangeOf(tc.key)
			if ch.Kind != layout.LibraryFile {
				t.Fatalf("ChangeOf(%q) = %+v", tc.key, ch)
			}
			if _, ok := b.descriptions(t)[tc.folder]; ok {
				t.Fatal("B shows the change before anyone invalidated it: the test proves nothing")
			}
			if err := a.lib.Catalog.Invalidate(t.Context(), ch); err != nil {
				t.Fatal(err)
			}
			if _, ok := a.descriptions(t)[tc.folder]; !ok {
				t.Fatal("A does not show the change it invalidated")
			}
			if _, ok := b.descriptions(t)[tc.folder]; ok {
				t.Fatal("B shows the change before it forgot its copy: Forget would be untested")
			}
			lists, _ := b.calls()
			tc.forget(b, ch)
			if _, ok := b.descriptions(t)[tc.folder]; !ok {
				t.Fatal("B does not show the change after forgetting its copy")
			}
			if after, _ := b.calls(); after != lists {
				t.Errorf("B listed %d times after forgetting its copy; A had published the new index", after-lists)
			}
		})
	}

	t.Run("settings", func(t *testing.T) {
		disabled := func(r replica) bool {
			return listedBy(t, r.lib, skillview.ListOptions{IncludeDisabled: true}, func(s skillview.Skill) bool { return s.Disabled })["one"]
		}
		put("alice/settings/skills.json", `{"disabled":["one"]}`)
		if disabled(a) || disabled(b) {
			t.Fatal("the settings showed before anyone invalidated them: the test proves nothing")
		}
		ch := a.lib.Catalog.ChangeOf("alice/settings/skills.json")
		if err := a.lib.Catalog.Invalidate(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		if !disabled(a) {
			t.Error("after Invalidate on A: enabled on A")
		}
		if err := b.lib.Catalog.Forget(ch); err != nil {
			t.Fatal(err)
		}
		if !disabled(b) {
			t.Error("after Forget on B: enabled on B")
		}
	})
}
