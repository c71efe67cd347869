package mounts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

var (
	alice    = mounts.Identity{User: "alice", Thread: "t1", Ticket: "JIRA-7"}
	aliceNoT = mounts.Identity{User: "alice", Thread: "t1"}
)

// altSpec is a layout whose top-level literals could collide with user IDs;
// New must accept it and reserve the user IDs "threads" and "tickets".
const altSpec = "/workspace=threads/{thread}/:rw,/ticket=tickets/{ticket}/:rw,/skills={user}/skills/:ro"

// longPath extends p with segments of 'a' to exactly n bytes.
func longPath(p string, n int) string {
	for len(p) < n {
		seg := min(255, n-len(p)-1)
		if n-len(p)-1-seg == 1 {
			seg-- // leave room for "/a" rather than a lone "/"
		}
		p += "/" + strings.Repeat("a", seg)
	}
	return p
}

func TestModeString(t *testing.T) {
	for _, tc := range []struct {
		mode mounts.Mode
		want string
	}{
		{mounts.ReadOnly, "ro"},
		{mounts.ReadWrite, "rw"},
		{mounts.Mode(7), "Mode(7)"},
	} {
		if got := tc.mode.String(); got != tc.want {
			t.Errorf("Mode(%d).String() = %q, want %q", int(tc.mode), got, tc.want)
		}
	}
}

func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		ok   bool
	}{
		{"simple", "alice", true},
		{"digits and punctuation", "0a.b_c-d", true},
		{"single char", "x", true},
		{"128 bytes", strings.Repeat("a", 128), true},
		{"129 bytes", strings.Repeat("a", 129), false},
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"traversal", "../x", false},
		{"slash", "a/b", false},
		{"leading underscore", "_shared", false},
		{"leading dot", ".hidden", false},
		{"leading dash", "-rf", false},
		{"space", "a b", false},
		{"NUL", "a\x00", false},
		{"trailing newline", "a\n", false},
		{"non-ASCII", "alicé", false},
		{"placeholder", "{user}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mounts.ValidateID("user", tc.id)
			if tc.ok != (err == nil) {
				t.Fatalf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			}
			if err != nil && !errors.Is(err, mounts.ErrInvalidID) {
				t.Errorf("error %v does not wrap ErrInvalidID", err)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		vpath string
		ok    bool
	}{
		{"root", "/", true},
		{"mount", "/workspace", true},
		{"file", "/workspace/a/b.md", true},
		{"NFC accent", "/workspace/caf\u00e9", true},
		{"percent-encoded dots stay literal", "/workspace/%2e%2e/x", true},
		{"dots inside a name", "/workspace/..a/b..", true},
		{"1024 bytes", longPath("/workspace", 1024), true},
		{"255-byte segment", "/workspace/" + strings.Repeat("a", 255), true},

		{"empty", "", false},
		{"relative", "workspace/a", false},
		{"dotdot", "/..", false},
		{"dotdot inside", "/workspace/../skills", false},
		{"trailing dotdot", "/workspace/..", false},
		{"dot segment", "/workspace/./a", false},
		{"double slash", "/workspace//a", false},
		{"leading double slash", "//workspace", false},
		{"trailing slash", "/workspace/", false},
		{"NUL", "/workspace/a\x00b", false},
		{"CR LF", "/workspace/a\r\nb", false},
		{"tab", "/workspace/a\tb", false},
		{"DEL", "/workspace/a\x7fb", false},
		{"C1 NEL", "/workspace/a\u0085b", false},
		{"backslash", "/workspace/a\\b", false},
		{"backslash traversal", "/workspace/..\\..\\skills", false},
		{"non-NFC", "/workspace/cafe\u0301", false},
		{"invalid UTF-8", "/workspace/\xff", false},
		{"overlong encoding of slash", "/workspace/\xc0\xaf", false},
		{"UTF-16 surrogate", "/workspace/\xed\xa0\x80", false},
		{"256-byte segment", "/workspace/" + strings.Repeat("a", 256), false},
		{"1025 bytes", longPath("/workspace", 1025), false},
		{"very long", "/workspace/" + strings.Repeat("a/", 1<<16) + "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mounts.CleanPath(tc.vpath)
			if tc.ok != (err == nil) {
				t.Fatalf("CleanPath(%q) = %v, want ok=%v", tc.vpath, err, tc.ok)
			}
			if err != nil && !errors.Is(err, mounts.ErrInvalidPath) {
				t.Errorf("error %v does not wrap ErrInvalidPath", err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	// "/workspace/" is 11 bytes and "alice/threads/t1/" 17, so keys are 6
	// bytes longer than paths: a 1018-byte path makes a 1024-byte key.
	long := longPath("/workspace", 1018)
	tooLong := longPath("/workspace", 1019)
	if len(long) != 1018 || len(tooLong) != 1019 {
		t.Fatalf("longPath made %d and %d bytes", len(long), len(tooLong))
	}
	for _, tc := range []struct {
		name    string
		id      mounts.Identity
		vpath   string
		want    mounts.Resolved // checked when wantErr is nil
		wantErr error
	}{
		{name: "workspace root", id: alice, vpath: "/workspace", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite},
			Prefix: "alice/threads/t1/", Rel: "", Key: "alice/threads/t1/",
		}},
		{name: "workspace file", id: alice, vpath: "/workspace/a/b.md", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite},
			Prefix: "alice/threads/t1/", Rel: "a/b.md", Key: "alice/threads/t1/a/b.md",
		}},
		{name: "ticket file", id: alice, vpath: "/ticket/notes.md", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/ticket", Template: "{user}/tickets/{ticket}/", Mode: mounts.ReadWrite},
			Prefix: "alice/tickets/JIRA-7/", Rel: "notes.md", Key: "alice/tickets/JIRA-7/notes.md",
		}},
		{name: "skills without ticket", id: aliceNoT, vpath: "/skills/pdf/SKILL.md", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/skills", Template: "{user}/skills/", Mode: mounts.ReadOnly},
			Prefix: "alice/skills/", Rel: "pdf/SKILL.md", Key: "alice/skills/pdf/SKILL.md",
		}},
		{name: "percent-encoded dots stay inside", id: alice, vpath: "/workspace/%2e%2e/skills", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite},
			Prefix: "alice/threads/t1/", Rel: "%2e%2e/skills", Key: "alice/threads/t1/%2e%2e/skills",
		}},
		{name: "unicode name", id: alice, vpath: "/workspace/r\u00e9sum\u00e9.md", want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite},
			Prefix: "alice/threads/t1/", Rel: "r\u00e9sum\u00e9.md", Key: "alice/threads/t1/r\u00e9sum\u00e9.md",
		}},
		{name: "longest key that fits", id: alice, vpath: long, want: mounts.Resolved{
			Mount:  mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite},
			Prefix: "alice/threads/t1/", Rel: long[len("/workspace/"):], Key: "alice/threads/t1/" + long[len("/workspace/"):],
		}},

		{name: "root", id: alice, vpath: "/", wantErr: mounts.ErrNoMount},
		{name: "unknown mount", id: alice, vpath: "/etc/passwd", wantErr: mounts.ErrNoMount},
		{name: "mount name is case-sensitive", id: alice, vpath: "/Workspace/a", wantErr: mounts.ErrNoMount},
		{name: "mount name prefix", id: alice, vpath: "/workspaces/a", wantErr: mounts.ErrNoMount},
		{name: "ticket mount without ticket", id: aliceNoT, vpath: "/ticket/x", wantErr: mounts.ErrNoMount},
		{name: "ticket root without ticket", id: aliceNoT, vpath: "/ticket", wantErr: mounts.ErrNoMount},
		{name: "dotdot", id: alice, vpath: "/workspace/../skills/x", wantErr: mounts.ErrInvalidPath},
		{name: "dotdot to other user", id: alice, vpath: "/workspace/../../../bob/skills", wantErr: mounts.ErrInvalidPath},
		{name: "relative dotdot", id: alice, vpath: "../skills", wantErr: mounts.ErrInvalidPath},
		{name: "double slash", id: alice, vpath: "/workspace//a", wantErr: mounts.ErrInvalidPath},
		{name: "leading double slash", id: alice, vpath: "//workspace/a", wantErr: mounts.ErrInvalidPath},
		{name: "trailing slash", id: alice, vpath: "/workspace/a/", wantErr: mounts.ErrInvalidPath},
		{name: "dot segment", id: alice, vpath: "/workspace/./a", wantErr: mounts.ErrInvalidPath},
		{name: "NUL", id: alice, vpath: "/workspace/a\x00", wantErr: mounts.ErrInvalidPath},
		{name: "CR LF", id: alice, vpath: "/workspace/a\r\nb", wantErr: mounts.ErrInvalidPath},
		{name: "backslash", id: alice, vpath: "/workspace\\..\\skills", wantErr: mounts.ErrInvalidPath},
		{name: "non-NFC", id: alice, vpath: "/workspace/e\u0301", wantErr: mounts.ErrInvalidPath},
		{name: "invalid UTF-8", id: alice, vpath: "/workspace/\xfe\xff", wantErr: mounts.ErrInvalidPath},
		{name: "key too long", id: alice, vpath: tooLong, wantErr: mounts.ErrInvalidPath},
		{name: "path too long", id: alice, vpath: "/workspace/" + strings.Repeat("a/", 600) + "a", wantErr: mounts.ErrInvalidPath},

		{name: "empty user", id: mounts.Identity{Thread: "t1"}, vpath: "/workspace", wantErr: mounts.ErrInvalidID},
		{name: "empty thread", id: mounts.Identity{User: "alice"}, vpath: "/skills", wantErr: mounts.ErrInvalidID},
		{name: "traversal user", id: mounts.Identity{User: "../x", Thread: "t1"}, vpath: "/workspace", wantErr: mounts.ErrInvalidID},
		{name: "slash in user", id: mounts.Identity{User: "a/b", Thread: "t1"}, vpath: "/workspace", wantErr: mounts.ErrInvalidID},
		{name: "dot user", id: mounts.Identity{User: ".", Thread: "t1"}, vpath: "/workspace", wantErr: mounts.ErrInvalidID},
		{name: "dotdot thread", id: mounts.Identity{User: "alice", Thread: ".."}, vpath: "/workspace", wantErr: mounts.ErrInvalidID},
		{name: "underscore user", id: mounts.Identity{User: "_shared", Thread: "t1"}, vpath: "/skills", wantErr: mounts.ErrInvalidID},
		{name: "129-byte user", id: mounts.Identity{User: strings.Repeat("u", 129), Thread: "t1"}, vpath: "/skills", wantErr: mounts.ErrInvalidID},
		{name: "bad ticket", id: mounts.Identity{User: "alice", Thread: "t1", Ticket: "../t"}, vpath: "/skills", wantErr: mounts.ErrInvalidID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(mounts.Default(), tc.id, tc.vpath)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Resolve(%+v, %q) = %+v, %v; want error wrapping %v", tc.id, tc.vpath, got, err, tc.wantErr)
				}
				// Errors go back to callers; they must not reveal key layout.
				for _, secret := range []string{"alice/threads/", "alice/tickets/", "alice/skills/"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q reveals prefix %q", err, secret)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%+v, %q): %v", tc.id, tc.vpath, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%+v, %q) =\n  %+v\nwant\n  %+v", tc.id, tc.vpath, got, tc.want)
			}
		})
	}
}

func TestParseRoundTrip(t *testing.T) {
	const defaultSpec = "/skills={user}/skills/:ro,/ticket={user}/tickets/{ticket}/:rw,/workspace={user}/threads/{thread}/:rw"
	for _, tc := range []struct {
		name string
		spec string
		want string // String() of the parsed table
	}{
		{"default spelled out", "/workspace={user}/threads/{thread}/:rw,/ticket={user}/tickets/{ticket}/:rw,/skills={user}/skills/:ro", defaultSpec},
		{"mode omitted means rw", "/workspace={user}/threads/{thread}/,/skills={user}/skills/:ro",
			"/skills={user}/skills/:ro,/workspace={user}/threads/{thread}/:rw"},
		{"spaces around entries", " /skills={user}/skills/:ro , /workspace={user}/threads/{thread}/ ",
			"/skills={user}/skills/:ro,/workspace={user}/threads/{thread}/:rw"},
		{"literal-only shared mount", "/shared=_shared/skills/:ro,/workspace={user}/threads/{thread}/:rw",
			"/shared=_shared/skills/:ro,/workspace={user}/threads/{thread}/:rw"},
		{"reserving layout", altSpec,
			"/skills={user}/skills/:ro,/ticket=tickets/{ticket}/:rw,/workspace=threads/{thread}/:rw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := mounts.Parse(tc.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if got := tbl.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
			again, err := mounts.Parse(tbl.String())
			if err != nil {
				t.Fatalf("Parse(String()): %v", err)
			}
			if got := again.String(); got != tc.want {
				t.Errorf("round trip: String() = %q, want %q", got, tc.want)
			}
			if !slices.Equal(mountsOf(again, alice), mountsOf(tbl, alice)) {
				t.Errorf("round trip changed Mounts: %v vs %v", mountsOf(again, alice), mountsOf(tbl, alice))
			}
		})
	}
	if got := mounts.Default().String(); got != defaultSpec {
		t.Errorf("Default().String() = %q, want %q", got, defaultSpec)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		msg  string // substring the error must contain
	}{
		{"empty spec", "", "path=template"},
		{"trailing comma", "/skills={user}/skills/:ro,", "path=template"},
		{"no template", "/skills", "path=template"},
		{"unknown mode", "/skills={user}/skills/:rx", `"rx"`},
		{"unknown placeholder", "/skills={owner}/skills/", "unknown placeholder"},
		{"empty placeholder", "/skills={}/skills/", "unknown placeholder"},
		{"partial placeholder", "/workspace={user}/t-{thread}/", "whole segment"},
		{"two placeholders in a segment", "/workspace={user}{thread}/", "whole segment"},
		{"missing trailing slash", "/skills={user}/skills", `end with "/"`},
		{"leading slash", "/skills=/{user}/skills/", `start with "/"`},
		{"empty template", "/skills=:ro", "empty"},
		{"empty segment", "/skills={user}//skills/", "empty segment"},
		{"dotdot segment", "/skills={user}/../skills/", `".."`},
		{"dot segment", "/skills={user}/./skills/", `"."`},
		{"bad literal", "/skills={user}/sk ills/", "literals"},
		{"mount path not absolute", "skills={user}/skills/", "mount path"},
		{"mount path two segments", "/a/b={user}/skills/", "mount path"},
		{"mount path root", "/={user}/skills/", "mount path"},
		{"mount path dotdot", "/..={user}/skills/", "mount path"},
		{"mount path underscore", "/_x={user}/skills/", "mount path"},
		{"duplicate mount", "/a={user}/a/,/a={user}/b/", "twice"},
		{"equal templates", "/a={user}/x/,/b={user}/x/", "overlap"},
		{"nested templates", "/home={user}/:rw,/skills={user}/skills/:ro", "overlap"},
		{"placeholder-only overlap", "/a={user}/{thread}/,/b={user}/{ticket}/", "overlap"},
		{"literal-only nested", "/a=shared/:rw,/b=shared/skills/:ro", "overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := mounts.Parse(tc.spec)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tc.spec, tbl)
			}
			if !errors.Is(err, mounts.ErrInvalidTable) {
				t.Errorf("error %v does not wrap ErrInvalidTable", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		ms   []mounts.Mount
	}{
		{"no mounts", nil},
		{"unknown mode", []mounts.Mount{{Path: "/a", Template: "{user}/a/", Mode: 2}}},
		{"negative mode", []mounts.Mount{{Path: "/a", Template: "{user}/a/", Mode: -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := mounts.New(tc.ms); !errors.Is(err, mounts.ErrInvalidTable) {
				t.Fatalf("New(%v) = %v, want ErrInvalidTable", tc.ms, err)
			}
		})
	}
}

// TestReservedIDs covers layouts whose top-level literals share a namespace
// with a placeholder: the table is accepted and the colliding IDs refused.
func TestReservedIDs(t *testing.T) {
	alt, err := mounts.Parse(altSpec)
	if err != nil {
		t.Fatalf("Parse(%q): %v", altSpec, err)
	}
	// Literals that are not IDs ("_shared") can never collide, so reserve nothing.
	shared, err := mounts.Parse("/shared=_shared/:ro,/home={user}/:rw")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, tc := range []struct {
		name    string
		tbl     *mounts.Table
		id      mounts.Identity
		vpath   string
		wantKey string
		reserve bool // want ErrInvalidID for a reserved id
	}{
		{"ordinary user workspace", alt, alice, "/workspace/a", "threads/t1/a", false},
		{"ordinary user ticket", alt, alice, "/ticket/a", "tickets/JIRA-7/a", false},
		{"ordinary user skills", alt, alice, "/skills/a", "alice/skills/a", false},
		// "threads/skills/" is the workspace of thread "skills"; user
		// "threads" would have had it as their read-only skills prefix.
		{"user threads", alt, mounts.Identity{User: "threads", Thread: "t1"}, "/skills/a", "", true},
		{"user tickets", alt, mounts.Identity{User: "tickets", Thread: "t1"}, "/skills/a", "", true},
		{"user threads on workspace too", alt, mounts.Identity{User: "threads", Thread: "t1"}, "/workspace/a", "", true},
		// Reserving the user is enough; the matching thread stays usable.
		{"thread skills", alt, mounts.Identity{User: "alice", Thread: "skills"}, "/workspace/a", "threads/skills/a", false},
		{"user skills", alt, mounts.Identity{User: "skills", Thread: "t1"}, "/skills/a", "skills/skills/a", false},
		{"user named like a mount", alt, mounts.Identity{User: "workspace", Thread: "t1"}, "/skills/a", "workspace/skills/a", false},
		{"default table reserves nothing", mounts.Default(), mounts.Identity{User: "threads", Thread: "skills"}, "/skills/a", "threads/skills/a", false},
		{"non-id literal reserves nothing", shared, mounts.Identity{User: "shared", Thread: "t1"}, "/home/a", "shared/a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := resolve(tc.tbl, tc.id, tc.vpath)
			if tc.reserve {
				if !errors.Is(err, mounts.ErrInvalidID) || !strings.Contains(err.Error(), "reserved") {
					t.Fatalf("Resolve(%+v, %q) = %+v, %v; want reserved-id error", tc.id, tc.vpath, r, err)
				}
				if _, err := tc.tbl.Identify(tc.id); err == nil {
					t.Errorf("Identify(%+v) = nil, want error", tc.id)
				}
				if ms := mountsOf(tc.tbl, tc.id); ms != nil {
					t.Errorf("Mounts(%+v) = %v, want nil", tc.id, ms)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%+v, %q): %v", tc.id, tc.vpath, err)
			}
			if r.Key != tc.wantKey {
				t.Errorf("Key = %q, want %q", r.Key, tc.wantKey)
			}
		})
	}
}

func TestMounts(t *testing.T) {
	ws := mounts.Mount{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: mounts.ReadWrite}
	tk := mounts.Mount{Path: "/ticket", Template: "{user}/tickets/{ticket}/", Mode: mounts.ReadWrite}
	sk := mounts.Mount{Path: "/skills", Template: "{user}/skills/", Mode: mounts.ReadOnly}
	for _, tc := range []struct {
		name string
		id   mounts.Identity
		want []mounts.Mount
	}{
		{"with ticket", alice, []mounts.Mount{sk, tk, ws}},
		{"without ticket", aliceNoT, []mounts.Mount{sk, ws}},
		{"invalid user", mounts.Identity{User: "..", Thread: "t1"}, nil},
		{"invalid ticket", mounts.Identity{User: "alice", Thread: "t1", Ticket: "a/b"}, nil},
		{"missing thread", mounts.Identity{User: "alice"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mountsOf(mounts.Default(), tc.id)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Mounts(%+v) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
	// Callers may scribble on the result; the table must not change.
	got := mountsOf(mounts.Default(), alice)
	got[0].Path = "/evil"
	if mountsOf(mounts.Default(), alice)[0].Path != "/skills" {
		t.Error("Mounts returned the table's own storage")
	}
}

func TestErrorQuotesAreBounded(t *testing.T) {
	huge := "/workspace/" + strings.Repeat("x", 1<<20)
	_, err := resolve(mounts.Default(), alice, huge)
	if !errors.Is(err, mounts.ErrInvalidPath) {
		t.Fatalf("Resolve(huge) = %v, want ErrInvalidPath", err)
	}
	if len(err.Error()) > 512 {
		t.Errorf("error message is %d bytes, want it cut short", len(err.Error()))
	}
}

func TestDisjoint(t *testing.T) {
	custom, err := mounts.Parse("/workspace={user}/{thread}/:rw,/skills={user}/skills/:ro")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		table  *mounts.Table
		prefix string
		ok     bool
	}{
		{"settings beside the default mounts", mounts.Default(), "{user}/settings/", true},
		{"shared library", mounts.Default(), "_shared/skills/", true},
		{"inside a mount", mounts.Default(), "{user}/threads/x/", false},
		{"above a mount", mounts.Default(), "{user}/", false},
		{"a thread could be named settings", custom, "{user}/settings/", false},
		{"overlap needs a reserved user", mustParse(t, "/workspace=threads/{thread}/:rw,/ticket=tickets/{ticket}/:rw,/skills={user}/skills/:ro"), "{user}/settings/", true},
		{"not a template", mounts.Default(), "/abs/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.table.Disjoint(tc.prefix); (err == nil) != tc.ok {
				t.Errorf("Disjoint(%q) = %v, want ok=%v", tc.prefix, err, tc.ok)
			}
		})
	}
}

func mustParse(t *testing.T, spec string) *mounts.Table {
	t.Helper()
	table, err := mounts.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return table
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
		mode mounts.Mode
	}{
		{"/skills", true, mounts.ReadOnly},
		{"/workspace", true, mounts.ReadWrite},
		{"/ticket", true, mounts.ReadWrite},
		{"skills", false, 0},
		{"/nope", false, 0},
		{"/skills/x", false, 0},
	} {
		m, ok := mounts.Default().Lookup(tc.path)
		if ok != tc.ok || (ok && (m.Path != tc.path || m.Mode != tc.mode)) {
			t.Errorf("Lookup(%q) = %+v, %v", tc.path, m, ok)
		}
	}
}

// resolve is Resolve for a raw identity: Identify, then Resolve.
func resolve(tbl *mounts.Table, id mounts.Identity, vpath string) (mounts.Resolved, error) {
	c, err := tbl.Identify(id)
	if err != nil {
		return mounts.Resolved{}, err
	}
	return tbl.Resolve(c, vpath)
}

// mountsOf is Mounts for a raw identity; nil when Identify refuses it.
func mountsOf(tbl *mounts.Table, id mounts.Identity) []mounts.Mount {
	c, err := tbl.Identify(id)
	if err != nil {
		return nil
	}
	return tbl.Mounts(c)
}

func TestCallerOnlyFromItsTable(t *testing.T) {
	alt, err := mounts.Parse(altSpec)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]mounts.Caller{
		"zero":          {},
		"another table": alt.MustIdentify(aliceNoT),
	} {
		t.Run(name, func(t *testing.T) {
			if r, err := mounts.Default().Resolve(c, "/workspace/a"); !errors.Is(err, mounts.ErrInvalidID) {
				t.Errorf("Resolve = %+v, %v; want ErrInvalidID", r, err)
			}
			if ms := mounts.Default().Mounts(c); ms != nil {
				t.Errorf("Mounts = %v, want nil", ms)
			}
		})
	}
}
