package skills

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// TestFileOfHead: a SKILL.md read for GetSkill is, as SkillMDOf makes it,
// what ParseSkillMD makes of it, whether the parse of its head the layer
// holds serves (the same frontmatter bytes, maps that derive from its
// JSON) or it is parsed afresh: a head of other bytes, a file whose body is
// no UTF-8, frontmatter whose maps do not derive from its JSON.
func TestFileOfHead(t *testing.T) {
	const folder = "one"
	front := func(fm string) string { return "---\n" + fm + "---\n" }
	for _, tc := range []struct {
		name, head, file string
		fromHead         bool // the layer's parse serves
	}{
		{name: "spec fields and metadata", head: front("name: one\ndescription: Does one.\nlicense: MIT\nmetadata:\n  owner: a\n"), fromHead: true},
		{name: "extra fields", head: front("name: one\ndescription: Does one.\ntags: [a, b]\nx-tool:\n  depth: 3\n"), fromHead: true},
		{name: "a display name", head: front("name: Skill One\ndescription: Does one.\n"), fromHead: true},
		{name: "a folder the name does not match", head: front("name: two\ndescription: Does two.\n"), fromHead: true},
		{name: "invalid", head: front("description: [no, name]\n")},
		{name: "not a mapping", head: front("0\n")},
		{name: "a byte order mark", head: skillmd.BOM + front("name: one\ndescription: Does one.\n"), fromHead: true},
		{name: "CRLF lines", head: "---\r\nname: one\r\ndescription: Does one.\r\n---\r\n", fromHead: true},
		{name: "blank lines before the body", head: front("name: one\ndescription: Does one.\n"), file: "\n\r\n\n# Body\n", fromHead: true},
		{name: "no body", head: front("name: one\ndescription: Does one.\n"), file: "-", fromHead: true},
		{name: "a version YAML reads as a number", head: front("name: one\ndescription: Does one.\nversion: 1.0\n")},
		{name: "a date", head: front("name: one\ndescription: Does one.\nreleased: 2024-01-02\n")},
		{name: "a body that is no UTF-8", head: front("name: one\ndescription: Does one.\n"), file: "# Body \xff\n"},
		{name: "a newer version than the head", head: front("name: one\ndescription: Does one.\n"), file: "other: " + front("name: one\ndescription: Changed.\n") + "# Body\n"},
		{name: "a longer frontmatter than the head", head: front("name: one\ndescription: Does one.\n"), file: "grown: " + "---\nname: one\ndescription: Does one.\nlicense: MIT\n---\n# Body\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.head + "# Body\n\nSteps.\n"
			switch {
			case tc.file == "-":
				raw = tc.head
			case strings.HasPrefix(tc.file, "other: "), strings.HasPrefix(tc.file, "grown: "):
				raw = tc.file[len("other: "):]
			case tc.file != "":
				raw = tc.head + tc.file
			}
			if end, _, ok := skillmd.Split([]byte(tc.head)); ok && end != len(tc.head) {
				t.Fatalf("the head %q is not cut after its frontmatter (%d bytes of %d)", tc.head, end, len(tc.head))
			}
			s := &skillview.Ref{Dir: "cat/" + folder, Layer: skillview.LayerUser, SkillMD: &objstoretestObject}
			s.Head = views.NewHeads(slog.New(slog.DiscardHandler), nil).Parse(t.Context(), s, []byte(tc.head))
			// Through the shared cache's encoding too, as another replica
			// takes it.
			enc, ok := views.EncodeParsed(s.Head)
			if !ok {
				t.Fatal("the parse does not encode")
			}
			dec, err := views.DecodeParsed(enc)
			if err != nil || dec.Src != s.Head.Src || dec.Derived != s.Head.Derived {
				t.Fatalf("decoded parse: src %x derived %v (%v), want %x %v", dec.Src, dec.Derived, err, s.Head.Src, s.Head.Derived)
			}
			for _, p := range []skillview.Head{s.Head, dec} {
				s.Head = p
				got := skillview.SkillMDOf([]byte(raw), "etag-1", s)
				want := skillview.ParseSkillMD([]byte(raw), "etag-1", folder)
				if got.Raw != want.Raw || got.Body != want.Body || got.ETag != want.ETag {
					t.Errorf("raw %q body %q etag %q; want %q, %q, %q", got.Raw, got.Body, got.ETag, want.Raw, want.Body, want.ETag)
				}
				if !reflect.DeepEqual(got.Problems, want.Problems) {
					t.Errorf("problems %+v, want %+v", got.Problems, want.Problems)
				}
				if g, w := got.FullFrontmatter(), want.FullFrontmatter(); !reflect.DeepEqual(g, w) {
					t.Errorf("frontmatter = %#v\nwant %#v", g, w)
				}
				if fromHead := len(got.Frontmatter.JSON) > 0 && unsafe.SliceData(got.Frontmatter.JSON) == unsafe.SliceData(p.Frontmatter.JSON); fromHead != tc.fromHead {
					t.Errorf("served from the layer's parse: %v, want %v", fromHead, tc.fromHead)
				}
			}
		})
	}
}

// objstoretestObject is the SKILL.md object of TestFileOfHead's skills.
var objstoretestObject = objstore.Object{Key: "alice/skills/cat/one/SKILL.md", Attributes: objstore.Attributes{ETag: "etag-1"}}

// TestParsedCodecRefuses: a cached parse without its flags and digest, or
// with flags this build does not know, is undecodable (the caller parses
// the head again), never a parse of something else.
func TestParsedCodecRefuses(t *testing.T) {
	good, ok := views.EncodeParsed(skillview.Head{Src: 42, Derived: true})
	if !ok {
		t.Fatal("encode failed")
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"flags only":    {views.ParsedDerived},
		"unknown flags": append([]byte{0x80}, good[1:]...),
		"a bare parse":  good[9:],
	} {
		if p, err := views.DecodeParsed(b); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, p)
		}
	}
}

// TestOwnSkillsReadOnceKeepNothing: users reading their own skills once
// each, as thousands of users do between two reads of one, keep neither
// the parses nor the replies, so the views every call needs stay held on a
// budget sized for them; one user asking again is kept from the second ask.
// Without admission the parses evict the views.
func TestOwnSkillsReadOnceKeepNothing(t *testing.T) {
	const users = 200
	b := objstoretest.NewBucket(t, tenantFiles(300, users+1, 5)) // the last one asks later
	sized := func(max int64) *Library {
		cfg := DefaultConfig()
		if max > 0 {
			cfg.MaxHeldBytes = max
		}
		lib, err := New(b, mounts.Default(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lib.Close)
		for u := range users {
			if _, err := lib.Catalog.Skills(t.Context(), tenant(u), skillview.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return lib
	}
	// A budget with a tenth to spare over what listing every user holds.
	listed := sized(0).indexes.Held().Bytes()
	lib := sized(listed + listed/10)
	evicted := func() (n float64) {
		for _, kind := range []string{libindex.HeldIndex, views.HeldView, settings.HeldKind, views.HeldLayer} {
			n += testutil.ToFloat64(lib.metrics.HeldEvictions.WithLabelValues(kind))
		}
		return n
	}
	before := evicted()
	rc := replies.New(lib.Catalog.ReplyCacheBytes(), nil)
	builds := 0
	get := func(u int, name string) {
		t.Helper()
		if _, err := getReply(t.Context(), lib, rc, tenant(u), name, func(d skillview.Detail) ([]byte, error) {
			builds++
			return []byte(d.Body), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	own := []string{"skill-0007", "mine-1", "mine-2", "mine-3", "mine-4"}
	for u := range users {
		for _, name := range own {
			get(u, name)
		}
	}
	if n := evicted() - before; n != 0 {
		t.Errorf("reading each user's own skills once evicted %v indexes, views or settings, want none", n)
	}
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(heldSkillMD)); n != 0 {
		t.Errorf("%v parses of users' own SKILL.md files held after one read each, want none", n)
	}
	if builds != users*len(own) {
		t.Fatalf("%d replies built, want %d", builds, users*len(own))
	}
	// One user asking three times: kept from the second ask.
	builds = 0
	for range 3 {
		get(users, "mine-1")
	}
	if builds != 2 {
		t.Errorf("three asks of one skill built %d replies, want 2 (the first two, then kept)", builds)
	}
	if n := testutil.ToFloat64(lib.metrics.HeldItems.WithLabelValues(heldSkillMD)); n != 1 {
		t.Errorf("%v parses held after one user's second ask, want 1", n)
	}
	// The shared library's skills are kept at once.
	builds = 0
	get(1, "skill-0042")
	get(2, "skill-0042")
	if builds != 1 {
		t.Errorf("two users asking for a shared skill built %d replies, want 1", builds)
	}
}

func TestAdmissionAgain(t *testing.T) {
	a := newAdmission()
	if a.again("k") {
		t.Fatal("a first ask was admitted")
	}
	if !a.again("k") || !a.again("k") {
		t.Fatal("a repeated ask was not admitted")
	}
	// Remembering is bounded: after many other first asks, k is a first
	// ask again.
	for i := range 16 * admissionSlots {
		a.again(fmt.Sprint(i))
	}
	if a.again("k") {
		t.Error("an ask remembered past many others")
	}
}
