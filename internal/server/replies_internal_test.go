package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// describePage is a stand-in for a reply's encoding: what a test can see
// of a page.
func describePage(p skillview.Page) []byte {
	var b strings.Builder
	for _, s := range p.Skills {
		fmt.Fprintf(&b, "%s %s %q layer=%s disabled=%t\n", s.Path, s.Name, s.Description, s.Layer, s.Disabled)
	}
	fmt.Fprintf(&b, "next=%q digest=%s\n", p.NextPageToken, p.LibraryDigest)
	return []byte(b.String())
}

// TestRepliesReused: a reply is encoded once and reused while the caller's
// library, settings and request are the same; a change to any of them is
// a new reply, at once.
func TestRepliesReused(t *testing.T) {
	lb := skillstest.New()
	lb.Shared().Skill("docs/pdf", "", "Fill PDF forms.", "body\n").Skill("csv", "", "Clean CSV files.", "body\n")
	lb.User("alice").Skill("notes", "", "Take meeting notes.", "body\n")
	lb.User("bob").Skill("notes", "", "Take meeting notes.", "body\n")
	bucket := lb.Bucket(t)
	// Every call lists the libraries (index-refresh 0): a change to the
	// bucket is the next call's, and nothing but the reply cache reuses a
	// reply.
	lib := skillstest.Library(t, bucket, nil)
	cat, h := lib.Catalog, NewSkills(lib, 256<<10)
	as := func(user, thread string) mounts.Caller {
		return mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: thread})
	}
	alice, alice2, bob := as("alice", "t1"), as("alice", "t2"), as("bob", "t1")

	builds := 0
	encodePage := func(p skillview.Page) ([]byte, error) { builds++; return describePage(p), nil }
	list := func(id mounts.Caller, opts skillview.ListOptions, size int32, token, variant string) func(*testing.T) string {
		return func(t *testing.T) string {
			b, err := h.pageReply(t.Context(), id, opts, size, token, variant, encodePage)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	page := list(alice, skillview.ListOptions{}, 0, "", "")
	prompt := func(f skillmd.FormatOptions) func(*testing.T) string {
		return func(t *testing.T) string {
			b, _, err := h.promptReply(t.Context(), alice, skillview.ListOptions{}, f, func(b skillview.Block) ([]byte, error) {
				builds++
				return []byte(b.Text), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	search := func(query string) func(*testing.T) string {
		return func(t *testing.T) string {
			b, err := h.searchReply(t.Context(), alice, skillview.SearchOptions{Query: query}, func(r skillview.Results) ([]byte, error) {
				builds++
				var s strings.Builder
				for _, h := range r.Hits {
					fmt.Fprintf(&s, "%s %q\n", h.Path, h.Description)
				}
				return []byte(s.String()), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	put := func(key, content string) func(*testing.T) {
		return func(t *testing.T) {
			if _, err := bucket.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	firstPage, err := catalogPage(t.Context(), cat, alice, skillview.ListOptions{}, 1, "")
	if err != nil || firstPage.NextPageToken == "" {
		t.Fatalf("Page of 1 = %v, token %q; want a next page", err, firstPage.NextPageToken)
	}

	runReplySteps(t, &builds, []replyStep{
		{name: "first listing", call: page, built: true, want: "Take meeting notes."},
		{name: "same listing", call: page},
		{name: "same listing, another thread of the user", call: list(alice2, skillview.ListOptions{}, 0, "", "")},
		{name: "another page size", call: list(alice, skillview.ListOptions{}, 1, "", ""), built: true},
		{name: "next page", call: list(alice, skillview.ListOptions{}, 1, firstPage.NextPageToken, ""), built: true},
		{name: "another variant", call: list(alice, skillview.ListOptions{}, 0, "", "full"), built: true},
		{name: "a category", call: list(alice, skillview.ListOptions{Category: "docs", FilterCategory: true}, 0, "", ""), built: true, notWant: "notes"},
		{name: "disabled skills included", call: list(alice, skillview.ListOptions{IncludeDisabled: true}, 0, "", ""), built: true},
		{name: "another user with the same library", call: list(bob, skillview.ListOptions{}, 0, "", ""), built: true},
		{name: "first listing again", call: page},
		{
			name: "the user's SKILL.md changed", change: put("alice/skills/notes/SKILL.md", skillstest.SkillMD("notes", "Take better notes.", "body\n")),
			call: page, built: true, want: "Take better notes.",
		},
		{name: "unchanged since", call: page},
		{
			name: "a shared SKILL.md changed", change: put(skillstest.SharedPrefix+"csv/SKILL.md", skillstest.SkillMD("csv", "Clean CSV files well.", "body\n")),
			call: page, built: true, want: "Clean CSV files well.",
		},
		{name: "a shared file added", change: put(skillstest.SharedPrefix+"csv/guide.md", "# Guide\n"), call: page, built: true},
		{name: "another user, after the shared change", call: list(bob, skillview.ListOptions{}, 0, "", ""), built: true, want: "Clean CSV files well."},
		{
			name: "a skill disabled", change: func(t *testing.T) {
				if _, err := cat.SetEnabled(t.Context(), alice, "csv", false); err != nil {
					t.Fatal(err)
				}
			},
			call: page, built: true, notWant: "/skills/csv ",
		},
		{name: "the other user, unchanged by the settings", call: list(bob, skillview.ListOptions{}, 0, "", "")},
		{
			name: "an invalid skill added, listed with include_invalid", change: put("alice/skills/broken/SKILL.md", "---\nname: broken\n---\nbody\n"),
			call: list(alice, skillview.ListOptions{IncludeInvalid: true}, 0, "", ""), built: true, want: "/skills/broken",
		},
		{
			// The library digest covers served skills only: the key
			// must cover more.
			name: "the invalid skill changed", change: put("alice/skills/broken/SKILL.md", "---\nname: broken\nlicense: MIT\n---\nbody\n"),
			call: list(alice, skillview.ListOptions{IncludeInvalid: true}, 0, "", ""), built: true, want: "/skills/broken",
		},
		{name: "prompt block", call: prompt(skillmd.FormatOptions{}), built: true, want: "notes"},
		{name: "same prompt block", call: prompt(skillmd.FormatOptions{})},
		{name: "same prompt block, defaults spelled out", call: prompt(skillmd.FormatOptions{Format: skillmd.FormatXML, CharBudget: skillmd.DefaultCharBudget})},
		{name: "prompt block of another budget", call: prompt(skillmd.FormatOptions{CharBudget: 500}), built: true},
		{name: "prompt block in another format", call: prompt(skillmd.FormatOptions{Format: skillmd.FormatMarkdown}), built: true},
		{
			name: "prompt block after a change", change: put("alice/skills/notes/SKILL.md", skillstest.SkillMD("notes", "Take the best notes.", "body\n")),
			call: prompt(skillmd.FormatOptions{}), built: true, want: "Take the best notes.",
		},
		{name: "search", call: search("pdf forms"), built: true, want: "/skills/docs/pdf"},
		{name: "same search", call: search("pdf forms")},
		{name: "another search", call: search("meeting notes"), built: true, want: "/skills/notes"},
	})
}

// replyStep is one call of a reply test, after an optional change.
type replyStep struct {
	name    string
	change  func(*testing.T)
	call    func(*testing.T) string
	built   bool   // the reply was encoded by this call
	want    string // in the reply
	notWant string
}

// runReplySteps runs steps in order; builds counts the encodings so far.
func runReplySteps(t *testing.T, builds *int, steps []replyStep) {
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.change != nil {
				step.change(t)
			}
			before := *builds
			got := step.call(t)
			if built := *builds > before; built != step.built {
				t.Errorf("reply encoded: %t, want %t", built, step.built)
			}
			if !strings.Contains(got, step.want) || step.notWant != "" && strings.Contains(got, step.notWant) {
				t.Errorf("reply:\n%s\nwant it to hold %q and not %q", got, step.want, step.notWant)
			}
		})
	}
}

// TestRepliesBuiltOnce: concurrent callers that miss the same reply wait
// for one build.
func TestRepliesBuiltOnce(t *testing.T) {
	lb := skillstest.New()
	for i := range 50 {
		lb.User("alice").Skill(fmt.Sprintf("s%02d", i), "", "A skill among many.", "body\n")
	}
	lib := skillstest.Library(t, lb.Bucket(t), skillstest.Indexed(time.Hour))
	h := NewSkills(lib, 256<<10)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	var (
		mu     sync.Mutex
		builds int
		wg     sync.WaitGroup
	)
	for range 16 {
		wg.Go(func() {
			_, _, err := h.promptReply(t.Context(), alice, skillview.ListOptions{}, skillmd.FormatOptions{}, func(b skillview.Block) ([]byte, error) {
				mu.Lock()
				builds++
				mu.Unlock()
				return []byte(b.Text), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if builds != 1 {
		t.Errorf("16 concurrent calls encoded the reply %d times, want once", builds)
	}
}

// TestRepliesOff: with --skills.reply-cache-bytes=0 every call encodes its
// reply.
func TestRepliesOff(t *testing.T) {
	lb := skillstest.New()
	lb.User("alice").Skill("notes", "", "Take meeting notes.", "body\n")
	lib := skillstest.Library(t, lb.Bucket(t), func(c *skills.Config) { c.ReplyCacheBytes = 0 })
	h := NewSkills(lib, 256<<10)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	builds := 0
	for range 3 {
		if _, err := h.pageReply(t.Context(), alice, skillview.ListOptions{}, 0, "", "", func(p skillview.Page) ([]byte, error) {
			builds++
			return describePage(p), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if builds != 3 {
		t.Errorf("3 calls encoded %d replies, want 3", builds)
	}
}

// describeDetail is a stand-in for GetSkill's encoding: what a test can
// see of a skill's detail.
func describeDetail(d skillview.Detail) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q layer=%s disabled=%t warnings=%q files=", d.Path, d.Name, d.Description, d.Layer, d.Disabled, d.Problems.Warnings)
	for _, f := range d.Files {
		fmt.Fprintf(&b, "%s,", f.Path)
	}
	return []byte(b.String())
}

// TestGetRepliesShared: a GetSkill reply is kept by the skill it
// resolves to, not by the caller: a shared skill's reply is built once for
// every user who sees it alike, and anything that changes what a user is
// sent (their own skill of the name, notes on shadowing, a disabled skill,
// a new version or file) is another reply, at once.
func TestGetRepliesShared(t *testing.T) {
	lb := skillstest.New()
	lb.Shared().Skill("docs/pdf", "", "Fill PDF forms.", "body\n").Skill("csv", "", "Clean CSV files.", "body\n")
	lb.User("alice").Skill("notes", "", "Take meeting notes.", "body\n")
	lb.User("bob").Skill("notes", "", "Take meeting notes.", "body\n")
	lb.User("carol").Skill("csv", "", "Carol's own CSV cleaning.", "body\n")
	lb.User("dave").Skill("mine/pdf", "pdf", "Dave's PDF skill.", "body\n")
	bucket := lb.Bucket(t)
	// Every call lists the libraries (index-refresh 0): a change to the
	// bucket is the next call's, and nothing but the reply cache reuses a
	// reply.
	lib := skillstest.Library(t, bucket, nil)
	h := NewSkills(lib, 256<<10)
	as := func(user string) mounts.Caller {
		return mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t1"})
	}
	alice, bob, carol, dave := as("alice"), as("bob"), as("carol"), as("dave")
	builds := 0
	get := func(id mounts.Caller, ref string) func(*testing.T) string {
		return func(t *testing.T) string {
			b, err := h.getReply(t.Context(), id, ref, func(d skillview.Detail) ([]byte, error) {
				builds++
				return describeDetail(d), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	put := func(key, content string) func(*testing.T) {
		return func(t *testing.T) {
			if _, err := bucket.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setEnabled := func(id mounts.Caller, name string, on bool) func(*testing.T) {
		return func(t *testing.T) {
			if _, err := lib.Catalog.SetEnabled(t.Context(), id, name, on); err != nil {
				t.Fatal(err)
			}
		}
	}
	runReplySteps(t, &builds, []replyStep{
		{name: "a shared skill", call: get(alice, "csv"), built: true, want: `"Clean CSV files." layer=shared`},
		{name: "again", call: get(alice, "csv")},
		{name: "by its path", call: get(alice, "/skills/csv")},
		{name: "another user who sees it alike", call: get(bob, "csv")},
		{name: "a user whose own skill takes the name", call: get(carol, "csv"), built: true, want: "Carol's own CSV cleaning.", notWant: "layer=shared"},
		{name: "another shared skill", call: get(bob, "docs/pdf"), built: true, want: "Fill PDF forms."},
		{name: "the same skill by path, hidden by name for this user", call: get(dave, "/skills/docs/pdf"), built: true, want: "not served under its name"},
		{name: "a user's own skill", call: get(alice, "notes"), built: true, want: "layer=user"},
		{name: "another user's own skill of the same content", call: get(bob, "notes"), built: true},
		{name: "disabled by one user", change: setEnabled(alice, "csv", false), call: get(alice, "csv"), built: true, want: "disabled=true"},
		{name: "not by another", call: get(bob, "csv"), want: "disabled=false"},
		{name: "enabled again", change: setEnabled(alice, "csv", true), call: get(alice, "csv"), want: "disabled=false"},
		{
			name: "a new version of the shared skill", change: put(skillstest.SharedPrefix+"csv/SKILL.md", skillstest.SkillMD("csv", "Clean CSV files well.", "body\n")),
			call: get(bob, "csv"), built: true, want: "Clean CSV files well.",
		},
		{name: "that version for another user", call: get(alice, "csv"), want: "Clean CSV files well."},
		{name: "a file added to it", change: put(skillstest.SharedPrefix+"csv/guide.md", "# Guide\n"), call: get(alice, "csv"), built: true, want: "files=guide.md,"},
		{
			name: "the user's own skill changed", change: put("alice/skills/notes/SKILL.md", skillstest.SkillMD("notes", "Take better notes.", "body\n")),
			call: get(alice, "notes"), built: true, want: "Take better notes.",
		},
		// Built again: the shared library changed since bob's last call,
		// and what a user's layer makes of it can change the notes.
		{name: "the other user's own skill unchanged", call: get(bob, "notes"), built: true, want: "Take meeting notes."},
		// A user's own skill's reply is kept from its second ask
		// (admission): with many users, most are asked for once.
		{name: "and again", call: get(bob, "notes"), built: true, want: "Take meeting notes."},
		{name: "and a third time", call: get(bob, "notes"), want: "Take meeting notes."},
	})
}

// TestPromptRepliesShared: users whose prompt blocks are the same, though
// their libraries are not, share one kept reply; each is told the digest
// of their own library. (A block lists a user's own skills first: the
// category leaves them out here.)
func TestPromptRepliesShared(t *testing.T) {
	lb := skillstest.New()
	lb.Shared().Skill("docs/a-first", "", "The one skill the block shows.", "body\n").Skill("docs/b-second", "", "Cut by max_skills.", "body\n")
	lb.User("alice").Skill("z-alice", "", "Alice's own.", "body\n")
	lb.User("bob").Skill("z-bob", "", "Bob's own.", "body\n")
	lib := skillstest.Library(t, lb.Bucket(t), skillstest.Indexed(time.Hour))
	h := NewSkills(lib, 256<<10)
	var replies [][]byte
	var digests []string
	for _, user := range []string{"alice", "bob"} {
		id := mounts.Default().MustIdentify(mounts.Identity{User: user, Thread: "t"})
		b, digest, err := h.promptReply(t.Context(), id, skillview.ListOptions{Category: "docs", FilterCategory: true}, skillmd.FormatOptions{MaxSkills: 1}, func(b skillview.Block) ([]byte, error) {
			if b.LibraryDigest != "" {
				t.Errorf("the block to encode carries the digest %q: the reply would be the caller's alone", b.LibraryDigest)
			}
			return []byte(b.Text), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		replies, digests = append(replies, b), append(digests, digest)
		if want := libraryDigest(t, lib, id); digest != want {
			t.Errorf("%s: digest %q, want the listing's %q", user, digest, want)
		}
	}
	if string(replies[0]) != string(replies[1]) || &replies[0][0] != &replies[1][0] {
		t.Errorf("the two users' replies are not the one kept reply:\n%s\n%s", replies[0], replies[1])
	}
	if digests[0] == digests[1] {
		t.Errorf("both users were told the digest %q", digests[0])
	}
}

// TestRepliesSharedAcrossReplicas: a reply one replica built is every
// replica's (through Redis), for the same library content and request
// only; a request of other options is built once, by whichever replica
// gets it first.
func TestRepliesSharedAcrossReplicas(t *testing.T) {
	rs := newReplicas(t, testserver.SharedRedis(t).Addr, time.Hour, 2)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	builds := 0
	prompt := func(r replica, f skillmd.FormatOptions) string {
		t.Helper()
		b, _, err := r.h.promptReply(t.Context(), alice, skillview.ListOptions{}, f, func(b skillview.Block) ([]byte, error) {
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
		b, err := r.h.pageReply(t.Context(), alice, skillview.ListOptions{}, 0, "", "", func(p skillview.Page) ([]byte, error) {
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

// TestRepliesBoundCatalog: a catalog's replies stay within
// --skills.reply-cache-bytes however many it is asked for.
func TestRepliesBoundCatalog(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("alice/skills/s%02d/SKILL.md", i)] = fmt.Sprintf("---\nname: s%02d\ndescription: Skill %d of a library.\n---\nbody\n", i, i)
	}
	cfg := skills.DefaultConfig()
	cfg.ReplyCacheBytes = 4 << 10
	lib, err := skills.New(objstoretest.NewBucket(t, files), mounts.Default(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := NewSkills(lib, 256<<10)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	for size := int32(1); size <= 40; size++ {
		if _, err := h.pageReply(t.Context(), alice, skillview.ListOptions{}, size, "", "", func(p skillview.Page) ([]byte, error) {
			return []byte(fmt.Sprint(p.Skills)), nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, bytes := h.replies.Held(); bytes > cfg.ReplyCacheBytes || n == 0 {
			t.Fatalf("after page size %d: %d replies of %d bytes, want some within %d", size, n, bytes, cfg.ReplyCacheBytes)
		}
	}
}

// libraryDigest is the digest of id's library, as a listing names it.
func libraryDigest(t *testing.T, lib *skills.Library, id mounts.Caller) string {
	t.Helper()
	p, err := catalogPage(t.Context(), lib.Catalog, id, skillview.ListOptions{}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.LibraryDigest, "sha256:") || len(p.LibraryDigest) != len("sha256:")+64 {
		t.Fatalf("library digest %q is not sha256:<hex>", p.LibraryDigest)
	}
	return p.LibraryDigest
}

// replica is one replica's skills handler over a bucket and a Redis shared
// with the others.
type replica struct{ h *Skills }

// newReplicas starts n replicas over one in-memory bucket holding alice's
// skill "one" and the shared skill "two", all on the Redis at addr, their
// replies shared there for ttl as the assembly shares them.
func newReplicas(t *testing.T, addr string, ttl time.Duration, n int) []replica {
	t.Helper()
	lb := skillstest.New()
	lb.User("alice").Skill("one", "", "First version.", "")
	lb.Shared().Skill("two", "", "Shared.", "")
	mem := lb.Bucket(t)
	keyPrefix := "test-" + rand.Text() + ":"
	rs := make([]replica, n)
	for i := range rs {
		cfg := cache.DefaultConfig()
		cfg.Redis.Addrs = []string{addr}
		cfg.Redis.KeyPrefix = keyPrefix
		c, err := cache.New(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		lib := skillstest.Library(t, objstoretest.NewFaulty(mem), skillstest.Indexed(ttl), skills.WithCache(c))
		rc := replies.New(lib.Catalog.ReplyCacheBytes(), nil)
		rc.Share(cache.Shared(c), ttl, libindex.NewCacheLog(slog.New(slog.DiscardHandler)))
		rs[i] = replica{h: NewSkills(lib, 256<<10, WithReplies(rc))}
	}
	return rs
}

// catalogPage is the caller's listing page as ListSkills asks the catalog
// for it: the request checked, then the page of one snapshot.
func catalogPage(ctx context.Context, cat *skills.Catalog, id mounts.Caller, opts skillview.ListOptions, size int32, token string) (skillview.Page, error) {
	q, err := cat.PageQuery(opts, size, token)
	if err != nil {
		return skillview.Page{}, err
	}
	s, err := cat.Snapshot(ctx, id)
	if err != nil {
		return skillview.Page{}, err
	}
	return s.Page(q), nil
}
