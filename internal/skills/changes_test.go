package skills_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestChangeOf maps object keys, as change events name them, to the
// library they belong to, with the default keys and with a library mount
// whose template puts the user second.
func TestChangeOf(t *testing.T) {
	user := func(u string) skills.LibraryRef { return skills.LibraryRef{User: u} }
	shared := skills.LibraryRef{Shared: true}
	custom, err := mounts.Parse("/workspace={user}/threads/{thread}/:rw,/skills=lib/{user}/:ro")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		table *mounts.Table
		key   string
		want  skills.Change
	}{
		{"user skill file", nil, "alice/skills/docs/pdf/SKILL.md", skills.Change{Kind: skills.LibraryFile, Library: user("alice")}},
		{"user library folder marker", nil, "alice/skills/", skills.Change{Kind: skills.LibraryFile, Library: user("alice")}},
		{"user library root file", nil, "bob/skills/README.md", skills.Change{Kind: skills.LibraryFile, Library: user("bob")}},
		{"shared skill file", nil, "_shared/skills/data/csv/SKILL.md", skills.Change{Kind: skills.LibraryFile, Library: shared}},
		{"shared persisted index", nil, "_shared/settings/skills.index", skills.Change{Kind: skills.PersistedIndex, Library: shared}},
		{"user settings", nil, "alice/settings/skills.json", skills.Change{Kind: skills.Settings, Library: user("alice")}},
		{"user persisted index", nil, "alice/settings/skills.index", skills.Change{Kind: skills.PersistedIndex, Library: user("alice")}},
		{"workspace file", nil, "alice/threads/t1/notes.md", skills.Change{}},
		{"other settings object", nil, "alice/settings/other.json", skills.Change{}},
		{"library name without its slash", nil, "alice/skills", skills.Change{}},
		{"sibling of the shared prefix", nil, "_shared/skillsets/x/SKILL.md", skills.Change{}},
		{"invalid user ID", nil, "al ice/skills/x/SKILL.md", skills.Change{}},
		{"invalid user's settings", nil, "al ice/settings/skills.json", skills.Change{}},
		{"empty user", nil, "/skills/x/SKILL.md", skills.Change{}},
		{"dot user", nil, "../skills/x/SKILL.md", skills.Change{}},
		{"custom template", custom, "lib/carol/x/SKILL.md", skills.Change{Kind: skills.LibraryFile, Library: user("carol")}},
		{"custom template, default place", custom, "carol/skills/x/SKILL.md", skills.Change{}},
		{"custom template, literal only", custom, "lib/", skills.Change{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := tc.table
			if table == nil {
				table = mounts.Default()
			}
			lib, err := skills.New(memory.New(), table, skills.DefaultConfig(), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if got := lib.Catalog.ChangeOf(tc.key); got != tc.want {
				t.Errorf("ChangeOf(%q) = %+v, want %+v", tc.key, got, tc.want)
			}
		})
	}
}

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
		forget            func(r replica, ch skills.Change)
	}{
		{"user library", "alice/skills/three/SKILL.md", "three", func(r replica, ch skills.Change) {
			if err := r.lib.Catalog.Forget(ch); err != nil {
				t.Fatal(err)
			}
		}},
		{"shared library", "_shared/skills/four/SKILL.md", "four", func(r replica, ch skills.Change) {
			if err := r.lib.Catalog.Forget(ch); err != nil {
				t.Fatal(err)
			}
		}},
		{"every library", "alice/skills/five/SKILL.md", "five", func(r replica, _ skills.Change) { r.lib.Catalog.ForgetAll() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.key, skillstest.SkillMD(tc.folder, "Added behind the catalog's back.", "body"))
			ch := a.lib.Catalog.ChangeOf(tc.key)
			if ch.Kind != skills.LibraryFile {
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
			return listedBy(t, r.lib, skills.ListOptions{IncludeDisabled: true}, func(s skills.Skill) bool { return s.Disabled })["one"]
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

// FuzzChangeOf: whatever the key, a library file is under that library's
// prefix (a valid user's own, or the shared one), settings and persisted
// indexes are exactly their objects, and nothing else is claimed.
func FuzzChangeOf(f *testing.F) {
	for _, k := range []string{"alice/skills/a/SKILL.md", "_shared/skills/x", "alice/settings/skills.json", "alice/settings/skills.index", "_shared/settings/skills.index", "alice/threads/t/x", "a/skills/", "/skills/x", "../skills/x"} {
		f.Add(k)
	}
	cfg := skills.DefaultConfig()
	lib, err := skills.New(memory.New(), mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key string) {
		ch := lib.Catalog.ChangeOf(key)
		ref := ch.Library
		if ch.Kind != skills.Unrelated {
			if err := ref.Validate(); err != nil {
				t.Fatalf("ChangeOf(%q) = %+v: %v", key, ch, err)
			}
		}
		switch {
		case ch.Kind == skills.Unrelated && ref != (skills.LibraryRef{}):
			t.Fatalf("ChangeOf(%q) = %+v: an unrelated key names a library", key, ch)
		case ch.Kind == skills.LibraryFile && ref.Shared && !strings.HasPrefix(key, cfg.SharedPrefix),
			ch.Kind == skills.LibraryFile && !ref.Shared && !strings.HasPrefix(key, ref.User+"/skills/"):
			t.Fatalf("ChangeOf(%q) = %+v: not under the library's prefix", key, ch)
		case ch.Kind == skills.Settings && key != ref.User+"/settings/skills.json",
			ch.Kind == skills.PersistedIndex && ref.Shared && key != cfg.SharedIndexKey,
			ch.Kind == skills.PersistedIndex && !ref.Shared && key != ref.User+"/settings/skills.index":
			t.Fatalf("ChangeOf(%q) = %+v: not that object", key, ch)
		}
	})
}
