package mounts_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// FuzzResolve checks that every path Resolve accepts lands under the caller's
// own prefix for that mount, resolves the same way again, and never reaches
// a key that another mount or another caller owns.
func FuzzResolve(f *testing.F) {
	for _, s := range [][4]string{
		{"alice", "t1", "JIRA-7", "/workspace/a/b.md"},
		{"alice", "t1", "JIRA-7", "/workspace"},
		{"alice", "t1", "JIRA-7", "/ticket/notes.md"},
		{"alice", "t1", "", "/skills/pdf/SKILL.md"},
		{"alice", "t1", "", "/ticket/x"},
		{"alice", "t1", "", "/"},
		{"alice", "t1", "", "/etc/passwd"},
		{"alice", "t1", "", "../skills"},
		{"alice", "t1", "", "/workspace/../skills"},
		{"alice", "t1", "", "/workspace/%2e%2e/skills"},
		{"alice", "t1", "", "/workspace//a"},
		{"alice", "t1", "", "/workspace/a/"},
		{"alice", "t1", "", "/workspace/./a"},
		{"alice", "t1", "", "/workspace/a\x00b"},
		{"alice", "t1", "", "/workspace/a\r\nb"},
		{"alice", "t1", "", "/workspace\\..\\skills"},
		{"alice", "t1", "", "/workspace/e\u0301"},
		{"alice", "t1", "", "/workspace/\xff"},
		{"alice", "t1", "", "/workspace/" + strings.Repeat("a/", 600)},
		{"../x", "t1", "", "/workspace"},
		{"a/b", "t1", "", "/workspace"},
		{"", "t1", "", "/workspace"},
		{".", "..", "", "/workspace"},
		{"_shared", "t1", "", "/skills"},
		{strings.Repeat("u", 129), "t1", "", "/skills"},
		{"threads", "skills", "", "/skills/x"},
		{"skills", "threads", "tickets", "/workspace/x"},
		{"tickets", "t1", "skills", "/ticket/x"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	alt, err := mounts.Parse(altSpec)
	if err != nil {
		f.Fatal(err)
	}
	tables := []struct {
		name       string
		tbl        *mounts.Table
		userScoped bool // every template starts with {user}/
	}{
		{"default", mounts.Default(), true},
		{"alt", alt, false},
	}

	f.Fuzz(func(t *testing.T, user, thread, ticket, vpath string) {
		id := mounts.Identity{User: user, Thread: thread, Ticket: ticket}
		// Other callers built from the same strings, so that a value the
		// fuzzer finds for one field is also tried in the others; this is
		// how a user "threads" meets a thread "skills".
		others := []mounts.Identity{
			id,
			{User: thread, Thread: user, Ticket: ticket},
			{User: ticket, Thread: thread, Ticket: user},
			{User: thread, Thread: ticket, Ticket: user},
			{User: user + "x", Thread: thread, Ticket: ticket},
		}
		for _, tc := range tables {
			r, err := resolve(tc.tbl, id, vpath)
			if err != nil {
				if !errors.Is(err, mounts.ErrInvalidPath) && !errors.Is(err, mounts.ErrInvalidID) && !errors.Is(err, mounts.ErrNoMount) {
					t.Fatalf("%s: Resolve(%+v, %q): error %v wraps no sentinel", tc.name, id, vpath, err)
				}
				continue
			}

			// (1) The key is the caller's rendered prefix plus Rel.
			if want := renderFor(r.Mount.Template, id); r.Prefix != want {
				t.Fatalf("%s: Prefix = %q, want %q", tc.name, r.Prefix, want)
			}
			if !strings.HasPrefix(r.Key, r.Prefix) || r.Key != r.Prefix+r.Rel {
				t.Fatalf("%s: Key %q is not Prefix %q + Rel %q", tc.name, r.Key, r.Prefix, r.Rel)
			}
			if len(r.Key) > 1024 {
				t.Fatalf("%s: Key is %d bytes", tc.name, len(r.Key))
			}
			// (2) With per-user templates, the key is in the caller's space.
			if tc.userScoped && !strings.HasPrefix(r.Prefix, id.User+"/") {
				t.Fatalf("%s: Prefix %q is not under user %q", tc.name, r.Prefix, id.User)
			}
			// (3) The path is rebuilt from Mount and Rel, and resolves the same.
			again := r.Mount.Path
			if r.Rel != "" {
				again += "/" + r.Rel
			}
			if again != vpath {
				t.Fatalf("%s: Mount.Path %q + Rel %q != %q", tc.name, r.Mount.Path, r.Rel, vpath)
			}
			if r2, err := resolve(tc.tbl, id, again); err != nil || r2 != r {
				t.Fatalf("%s: Resolve is not idempotent: %+v, %v vs %+v", tc.name, r2, err, r)
			}
			// (4) Nothing in the key can be read as a step out of its place.
			if r.Rel != "" && (strings.HasPrefix(r.Rel, "/") || strings.HasSuffix(r.Rel, "/")) {
				t.Fatalf("%s: Rel %q has a leading or trailing slash", tc.name, r.Rel)
			}
			for seg := range strings.SplitSeq(strings.TrimSuffix(r.Key, "/"), "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("%s: Key %q has segment %q", tc.name, r.Key, seg)
				}
			}
			// (5) No other mount, for this or another caller, owns the key,
			// and no two mounts' prefixes nest.
			for _, o := range others {
				if _, err := tc.tbl.Identify(o); err != nil {
					continue
				}
				if tc.userScoped && o.User != id.User && strings.HasPrefix(r.Key, o.User+"/") {
					t.Fatalf("%s: Key %q is under other user %q", tc.name, r.Key, o.User)
				}
				for _, m := range mountsOf(tc.tbl, o) {
					p := renderFor(m.Template, o)
					nested := strings.HasPrefix(r.Key, p) || strings.HasPrefix(p, r.Prefix)
					if nested && (m.Path != r.Mount.Path || p != r.Prefix) {
						t.Fatalf("%s: %+v at %q reaches key %q; %+v's mount %q has prefix %q",
							tc.name, id, vpath, r.Key, o, m.Path, p)
					}
				}
			}
		}
	})
}

// renderFor renders a template independently of the package's own code.
func renderFor(tmpl string, id mounts.Identity) string {
	return strings.NewReplacer("{user}", id.User, "{thread}", id.Thread, "{ticket}", id.Ticket).Replace(tmpl)
}
