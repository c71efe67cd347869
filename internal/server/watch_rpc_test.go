package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

type watchStream = grpc.ServerStreamingClient[skillsvcv1.WatchSkillsResponse]

func watchSkills(t *testing.T, c client, ctx context.Context, since string) watchStream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	st, err := c.skills.WatchSkills(ctx, &skillsvcv1.WatchSkillsRequest{SinceDigest: since})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// recvWithin is the stream's next message; the bound only a lost change
// reaches.
func recvWithin(t *testing.T, st watchStream) *skillsvcv1.WatchSkillsResponse {
	t.Helper()
	type result struct {
		m   *skillsvcv1.WatchSkillsResponse
		err error
	}
	got := make(chan result, 1)
	go func() { m, err := st.Recv(); got <- result{m, err} }()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Recv: %v", r.err)
		}
		return r.m
	case <-time.After(20 * time.Second):
		t.Fatal("no WatchSkills message")
	}
	return nil
}

func changeKinds(m *skillsvcv1.WatchSkillsResponse) []string {
	var out []string
	for _, c := range m.GetChanges() {
		out = append(out, strings.TrimPrefix(c.GetKind().String(), "KIND_")+" "+c.GetName())
	}
	return out
}

func wantChanges(t *testing.T, m *skillsvcv1.WatchSkillsResponse, want ...string) {
	t.Helper()
	if got := changeKinds(m); !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

// TestWatchResumesFromAListing: a listing's digest resumes a watch though
// no watch was open when the caller listed (WatchSkillsRequest's
// contract; skillctl's ls --json then watch --since).
func TestWatchResumesFromAListing(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	list, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "lint", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	m := recvWithin(t, watchSkills(t, c, ctx, list.GetLibraryDigest()))
	if m.GetReset_() {
		t.Fatalf("resumed from a listing's digest: reset")
	}
	wantChanges(t, m, "DISABLED lint")
}

func TestWatchSkills(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	list, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	st := watchSkills(t, c, ctx, "")
	first := recvWithin(t, st)
	if first.GetLibraryDigest() != list.GetLibraryDigest() || first.GetReset_() || len(first.GetChanges()) != 0 {
		t.Fatalf("first message %v, want the listing's digest %s alone", first, list.GetLibraryDigest())
	}

	if _, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "lint", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	m := recvWithin(t, st)
	wantChanges(t, m, "DISABLED lint")
	ch := m.GetChanges()[0]
	if ch.GetPath() != "/skills/lint" || ch.GetLayer() != "user" || !strings.HasPrefix(ch.GetManifestDigest(), "sha256:") {
		t.Errorf("change %v: want the skill's path, layer and manifest digest", ch)
	}
	if _, err := c.admin.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "haiku/SKILL.md",
		Data: []byte(skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n")),
	}); err != nil {
		t.Fatal(err)
	}
	last := recvWithin(t, st)
	wantChanges(t, last, "ADDED haiku")
	if after, _ := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); after.GetLibraryDigest() != last.GetLibraryDigest() {
		t.Errorf("message digest %s, listing's %s", last.GetLibraryDigest(), after.GetLibraryDigest())
	}

	for _, tc := range []struct {
		name, since string
		reset       bool
		want        []string
	}{
		{"from the first digest", first.GetLibraryDigest(), false, []string{"ADDED haiku", "DISABLED lint"}},
		{"from the newest", last.GetLibraryDigest(), false, nil},
		{"from a digest no replica keeps", "sha256:" + strings.Repeat("0", 64), true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := recvWithin(t, watchSkills(t, c, ctx, tc.since))
			if m.GetReset_() != tc.reset || m.GetLibraryDigest() != last.GetLibraryDigest() {
				t.Fatalf("resumed: %v, want reset %t at %s", m, tc.reset, last.GetLibraryDigest())
			}
			wantChanges(t, m, tc.want...)
		})
	}
}

func TestWatchSkillsChecksSinceDigest(t *testing.T) {
	c, _ := startSkills(t, options{})
	for _, since := range []string{"latest", "sha256:" + strings.Repeat("A", 64), strings.Repeat("a", 1<<16)} {
		_, err := watchSkills(t, c, asAlice(t), since).Recv()
		wantCode(t, "since_digest "+since[:min(len(since), 12)], err, codes.InvalidArgument)
	}
}

// TestWatchSkillsBounded: a user holds at most --watch.max-per-user (8)
// watches; another user is not affected.
func TestWatchSkillsBounded(t *testing.T) {
	c, _ := startSkills(t, options{})
	for range 8 {
		recvWithin(t, watchSkills(t, c, asAlice(t), ""))
	}
	_, err := watchSkills(t, c, asAlice(t), "").Recv()
	wantCode(t, "a ninth watch", err, codes.ResourceExhausted)
	recvWithin(t, watchSkills(t, c, as(t, "x-skillsvc-user", "bob", "x-skillsvc-thread", "t1"), ""))
}

// TestWatchHoldsNoInFlightSlot: an open watch leaves the user's in-flight
// slots to their other calls, here the only one.
func TestWatchHoldsNoInFlightSlot(t *testing.T) {
	cfg := quota.DefaultConfig()
	cfg.Concurrency = 1
	l, err := quota.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	c, _ := startSkills(t, options{limits: l})
	ctx := asAlice(t)
	recvWithin(t, watchSkills(t, c, ctx, ""))
	if _, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Fatalf("ListSkills with a watch open and one in-flight slot: %v", err)
	}
}
