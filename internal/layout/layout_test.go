package layout_test

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// defaultKeys are the key templates of the flags' defaults.
func defaultKeys() layout.Keys {
	c := skills.DefaultConfig()
	return c.Keys()
}

// TestChangeOf maps object keys, as change events name them, to the
// library they belong to, with the default keys and with a library mount
// whose template puts the user second.
func TestChangeOf(t *testing.T) {
	user := func(u string) layout.LibraryRef { return layout.LibraryRef{User: u} }
	shared := layout.LibraryRef{Shared: true}
	custom, err := mounts.Parse("/workspace={user}/threads/{thread}/:rw,/skills=lib/{user}/:ro")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		table *mounts.Table
		key   string
		want  layout.Change
	}{
		{"user skill file", nil, "alice/skills/docs/pdf/SKILL.md", layout.Change{Kind: layout.LibraryFile, Library: user("alice")}},
		{"user library folder marker", nil, "alice/skills/", layout.Change{Kind: layout.LibraryFile, Library: user("alice")}},
		{"user library root file", nil, "bob/skills/README.md", layout.Change{Kind: layout.LibraryFile, Library: user("bob")}},
		{"shared skill file", nil, "_shared/skills/data/csv/SKILL.md", layout.Change{Kind: layout.LibraryFile, Library: shared}},
		{"shared persisted index", nil, "_shared/settings/skills.index", layout.Change{Kind: layout.PersistedIndex, Library: shared}},
		{"user settings", nil, "alice/settings/skills.json", layout.Change{Kind: layout.Settings, Library: user("alice")}},
		{"user persisted index", nil, "alice/settings/skills.index", layout.Change{Kind: layout.PersistedIndex, Library: user("alice")}},
		{"workspace file", nil, "alice/threads/t1/notes.md", layout.Change{}},
		{"other settings object", nil, "alice/settings/other.json", layout.Change{}},
		{"library name without its slash", nil, "alice/skills", layout.Change{}},
		{"sibling of the shared prefix", nil, "_shared/skillsets/x/SKILL.md", layout.Change{}},
		{"invalid user ID", nil, "al ice/skills/x/SKILL.md", layout.Change{}},
		{"invalid user's settings", nil, "al ice/settings/skills.json", layout.Change{}},
		{"empty user", nil, "/skills/x/SKILL.md", layout.Change{}},
		{"dot user", nil, "../skills/x/SKILL.md", layout.Change{}},
		{"custom template", custom, "lib/carol/x/SKILL.md", layout.Change{Kind: layout.LibraryFile, Library: user("carol")}},
		{"custom template, default place", custom, "carol/skills/x/SKILL.md", layout.Change{}},
		{"custom template, literal only", custom, "lib/", layout.Change{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := tc.table
			if table == nil {
				table = mounts.Default()
			}
			if got := layout.New(table, defaultKeys()).ChangeOf(tc.key); got != tc.want {
				t.Errorf("ChangeOf(%q) = %+v, want %+v", tc.key, got, tc.want)
			}
		})
	}
}

// rendered is one key a layout renders for a library, and what a change of
// it is.
type rendered struct {
	key  string
	kind layout.ChangeKind
}

// keysOf returns keys the layout renders for l: files at several depths
// below its prefix, its persisted index and protected list, and a user's
// settings.
func keysOf(t *testing.T, ly layout.Layout, l layout.LibraryRef) []rendered {
	t.Helper()
	lib, err := ly.Of(l)
	if err != nil {
		t.Fatalf("Of(%+v): %v", l, err)
	}
	out := []rendered{
		{lib.Prefix + "pdf/SKILL.md", layout.LibraryFile},
		{lib.Prefix + "docs/pdf/scripts/run.py", layout.LibraryFile},
		{lib.Prefix + "README.md", layout.LibraryFile},
		{lib.Index, layout.PersistedIndex},
	}
	if lib.Protected != "" {
		out = append(out, rendered{lib.Protected, layout.LibraryFile})
	}
	if l.User != "" {
		out = append(out, rendered{ly.Settings(l.User), layout.Settings})
	}
	return out
}

// TestChangeOfRoundTrip: every key the layout renders for a library is a
// change of that library, of the kind the key is, with the default keys,
// a library mount that puts the user second and other templates for teams
// and the shared library.
func TestChangeOfRoundTrip(t *testing.T) {
	custom, err := mounts.Parse("/workspace={user}/threads/{thread}/:rw,/skills=lib/{user}/:ro")
	if err != nil {
		t.Fatal(err)
	}
	other := defaultKeys()
	other.SharedPrefix, other.SharedIndexKey, other.SharedProtectedKey = "_org/lib/", "_org/meta/index", "_org/meta/protected"
	other.TeamPrefix, other.TeamIndexKey, other.TeamProtectedKey = "_g/{team}/lib/", "_g/{team}/meta/index", "_g/{team}/meta/protected"
	other.SettingsKey, other.IndexKey = "{user}/.meta/settings.json", "{user}/.meta/index"
	libs := []layout.LibraryRef{{User: "alice"}, {User: "bob-2"}, {Shared: true}, {Team: "legal"}, {Team: "eng_1"}}
	for _, tc := range []struct {
		name  string
		table *mounts.Table
		keys  layout.Keys
	}{
		{"defaults", mounts.Default(), defaultKeys()},
		{"user second", custom, defaultKeys()},
		{"other templates", custom, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ly := layout.New(tc.table, tc.keys)
			for _, l := range libs {
				for _, r := range keysOf(t, ly, l) {
					want := layout.Change{Kind: r.kind, Library: l}
					if got := ly.ChangeOf(r.key); got != want {
						t.Errorf("ChangeOf(%q) = %+v, want %+v", r.key, got, want)
					}
				}
			}
		})
	}
}

// TestChangeOfForeign: keys no library of this layout renders are
// unrelated: another layout's, invalid IDs where one is taken, the
// reserved IDs, and keys beside the libraries.
func TestChangeOfForeign(t *testing.T) {
	ly := layout.New(mounts.Default(), defaultKeys())
	for _, key := range []string{
		"",
		"alice",
		"alice/threads/t1/skills/x/SKILL.md", // a workspace file
		"alice/versions/skills/x/refs.json",  // a versions root: not a library
		"alice/settings/skills.json.bak",
		"alice/settings/",
		"_teams/legal/skills",    // the team library without its slash
		"_teams/legal/skills/",   // its folder marker: nothing below it
		"_teams/legal/other/x",   // beside the team's library
		"_teams/le gal/skills/x", // invalid team ID
		"_teams/../skills/x",     // dot segment as a team
		"_teams//skills/x",       // empty team
		"_teams/legal/settings/skills.index/x",
		"_shared/skills", // the shared prefix without its slash
		"_shared/skillsets/x",
		"lib/alice/x/SKILL.md", // another layout's user library
		"_org/lib/x/SKILL.md",  // another layout's shared library
		"ALICE\x00/skills/x",
		"./skills/x",
	} {
		if got := ly.ChangeOf(key); got != (layout.Change{}) {
			t.Errorf("ChangeOf(%q) = %+v, want unrelated", key, got)
		}
	}
}

// TestLibraryKeys: the keys the default flags render for each library, as
// the bucket holds them.
func TestLibraryKeys(t *testing.T) {
	ly := layout.New(mounts.Default(), defaultKeys())
	for _, tc := range []struct {
		ref  layout.LibraryRef
		want layout.Library
	}{
		{layout.LibraryRef{User: "alice"}, layout.Library{Prefix: "alice/skills/", Index: "alice/settings/skills.index"}},
		{layout.LibraryRef{Shared: true}, layout.Library{Prefix: "_shared/skills/", Index: "_shared/settings/skills.index", Protected: "_shared/settings/protected.json"}},
		{layout.LibraryRef{Team: "legal"}, layout.Library{Prefix: "_teams/legal/skills/", Index: "_teams/legal/settings/skills.index", Protected: "_teams/legal/settings/protected.json"}},
	} {
		got, err := ly.Of(tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Of(%+v) = %+v, %v; want %+v", tc.ref, got, err, tc.want)
		}
	}
	for _, bad := range []layout.LibraryRef{{}, {User: "alice", Shared: true}, {User: "a b"}, {Team: "../x"}} {
		if _, err := ly.Of(bad); err == nil {
			t.Errorf("Of(%+v) accepted", bad)
		}
	}
	if _, err := ly.ProtectedList(layout.LibraryRef{User: "alice"}); err == nil {
		t.Error("a user's library has a protected list")
	}
	if got := ly.Settings("alice"); got != "alice/settings/skills.json" {
		t.Errorf("Settings(alice) = %q", got)
	}
	r := layout.DefaultVersionRoots()
	for _, tc := range []struct{ got, want string }{
		{r.Root(layout.LibraryRef{User: "alice"}), "alice/versions/"},
		{r.Root(layout.LibraryRef{Team: "legal"}), "_teams/legal/versions/"},
		{r.BlobSpace(layout.LibraryRef{Shared: true}), "_shared/versions/blobs/"},
		{r.Pin("alice", "t1"), "alice/versions/pins/t1.json"},
		{r.Snapshot("alice", "ab12"), "alice/versions/snapshots/ab12.json"},
		{r.Intents(), "_shared/versions/intents/"},
		{layout.VersionsOf(r.Root(layout.LibraryRef{User: "alice"})).Refs("pdf"), "alice/versions/skills/pdf/refs.json"},
		{layout.VersionsOf(r.Root(layout.LibraryRef{Shared: true})).Record("pdf", "ab12"), "_shared/versions/skills/pdf/v/ab12.json"},
		{layout.VersionsOf(r.Root(layout.LibraryRef{Team: "legal"})).Proposal("pdf", "ab12"), "_teams/legal/versions/skills/pdf/p/ab12.json"},
		{layout.VersionsOf("alice/versions/").Order("pdf"), "alice/versions/skills/pdf/t/"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// FuzzChangeOf: whatever the key, a change names a valid library whose
// rendered keys hold the key: a library file lies under its prefix (or is
// its protected list), settings and persisted indexes are exactly their
// objects, and nothing else is claimed.
func FuzzChangeOf(f *testing.F) {
	for _, k := range []string{"alice/skills/a/SKILL.md", "_shared/skills/x", "alice/settings/skills.json", "alice/settings/skills.index", "_shared/settings/skills.index", "_shared/settings/protected.json", "_teams/legal/skills/x/SKILL.md", "_teams/legal/settings/skills.index", "_teams/legal/settings/protected.json", "alice/threads/t/x", "a/skills/", "/skills/x", "../skills/x", "_teams/../skills/x"} {
		f.Add(k)
	}
	ly := layout.New(mounts.Default(), defaultKeys())
	f.Fuzz(func(t *testing.T, key string) {
		ch := ly.ChangeOf(key)
		ref := ch.Library
		if ch.Kind == layout.Unrelated {
			if ref != (layout.LibraryRef{}) {
				t.Fatalf("ChangeOf(%q) = %+v: an unrelated key names a library", key, ch)
			}
			return
		}
		lib, err := ly.Of(ref)
		if err != nil {
			t.Fatalf("ChangeOf(%q) = %+v: %v", key, ch, err)
		}
		switch ch.Kind {
		case layout.LibraryFile:
			if key != lib.Protected && !strings.HasPrefix(key, lib.Prefix) {
				t.Fatalf("ChangeOf(%q) = %+v: not under the library's prefix %q", key, ch, lib.Prefix)
			}
		case layout.Settings:
			if ref.User == "" || key != ly.Settings(ref.User) {
				t.Fatalf("ChangeOf(%q) = %+v: not that user's settings", key, ch)
			}
		case layout.PersistedIndex:
			if key != lib.Index {
				t.Fatalf("ChangeOf(%q) = %+v: not the library's index %q", key, ch, lib.Index)
			}
		default:
			t.Fatalf("ChangeOf(%q) = %+v: unknown kind", key, ch)
		}
	})
}

// TestUsageKeys: the daily usage roll-ups lie below each library's versions
// root, parse back to their day, and are no change to any library.
func TestUsageKeys(t *testing.T) {
	roots := layout.DefaultVersionRoots()
	ly := layout.New(mounts.Default(), defaultKeys())
	for _, l := range []layout.LibraryRef{{User: "alice"}, {Team: "red"}, {Shared: true}} {
		key := roots.UsageDay(l, "2026-11-29")
		if !strings.HasPrefix(key, roots.Root(l)) {
			t.Errorf("%+v: %s is not below the versions root %s", l, key, roots.Root(l))
		}
		if day, ok := roots.UsageDayOf(l, key); !ok || day != "2026-11-29" {
			t.Errorf("UsageDayOf(%s) = %q, %v", key, day, ok)
		}
		if _, ok := roots.UsageDayOf(l, roots.Usage(l)+"x/2026-11-29.json"); ok {
			t.Errorf("%+v: a nested key parsed as a day", l)
		}
		if got := ly.ChangeOf(key); got != (layout.Change{}) {
			t.Errorf("ChangeOf(%s) = %+v, want unrelated", key, got)
		}
	}
}
