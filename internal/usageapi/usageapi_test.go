package usageapi

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// caller is a validated caller of the default mount table.
func caller(t *testing.T, user, teams string) mounts.Caller {
	t.Helper()
	c, err := mounts.Default().Identify(mounts.Identity{User: user, Thread: "t1", Teams: teams})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthorize: whose usage each caller reads, decided in one place.
func TestAuthorize(t *testing.T) {
	ann, annAdmin := caller(t, "ann", "legal"), caller(t, "ann", "legal")
	for _, c := range []struct {
		name  string
		c     mounts.Caller
		admin bool
		ref   layout.LibraryRef
		want  string // the library read, or "" for PERMISSION_DENIED
	}{
		{"own, unnamed", ann, false, layout.LibraryRef{}, "user:ann"},
		{"own, named", ann, false, layout.LibraryRef{User: "ann"}, "user:ann"},
		{"another user's", ann, false, layout.LibraryRef{User: "bob"}, ""},
		{"team member", ann, false, layout.LibraryRef{Team: "legal"}, ""},
		{"team admin", annAdmin, true, layout.LibraryRef{Team: "legal"}, "team:legal"},
		{"another team", ann, false, layout.LibraryRef{Team: "eng"}, ""},
		{"organization", ann, false, layout.LibraryRef{Shared: true}, ""},
		{"admin, organization", annAdmin, true, layout.LibraryRef{Shared: true}, "org"},
		{"admin, another user's", annAdmin, true, layout.LibraryRef{User: "bob"}, "user:bob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, err := Authorize(c.c, c.admin, c.ref)
			switch {
			case c.want == "" && !errors.Is(err, errkind.PermissionDenied):
				t.Fatalf("Authorize = %v, %v; want PERMISSION_DENIED", lib, err)
			case c.want != "" && (err != nil || lib.String() != c.want):
				t.Fatalf("Authorize = %v, %v; want %s", lib, err, c.want)
			}
		})
	}
	if _, err := Authorize(ann, true, layout.LibraryRef{Team: "../x"}); !errors.Is(err, errkind.InvalidArgument) {
		t.Errorf("a malformed team: %v, want INVALID_ARGUMENT", err)
	}
}

// fakeSkills lists a fixed library.
type fakeSkills map[string][]skillview.LibrarySkill

func (f fakeSkills) LibrarySkills(_ context.Context, l layout.LibraryRef) ([]skillview.LibrarySkill, error) {
	switch {
	case l.Shared:
		return f["org"], nil
	case l.Team != "":
		return f["team:"+l.Team], nil
	}
	return f["user:"+l.User], nil
}

// newRedisStore is a replica's usage store on the Redis at addr, as the
// binary builds it.
func newRedisStore(t *testing.T, addr string, cfg usage.Config) usage.Store {
	t.Helper()
	rc := cache.DefaultConfig().Redis
	rc.Addrs = []string{addr}
	rc.Keyspace = cache.NewKeyspace("usageapi-test")
	red, err := cache.NewRedis(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = red.Close() })
	client, prefix := red.Commands("usage")
	return usage.NewRedisStore(client, prefix, cfg)
}

// TestGetUsageReport: events fed to the real recorder, flushed to Redis,
// read back through the service (roll-ups in MinIO for finished days):
// per skill, version, surface, users and threads, daily totals, searches
// that found nothing or led nowhere, and the library's unused skills with
// their age; another user's usage is refused.
func TestGetUsageReport(t *testing.T) {
	testserver.Integration(t, "Redis and MinIO")
	addr := testserver.StartRedis(t).Addr
	minio := testserver.SharedMinIO(t)
	bucket := s3.NewWithClient(minio.Client(t), minio.NewBucket(t))
	cfg := usage.DefaultConfig()
	store := newRedisStore(t, addr, cfg)
	rec := usage.NewRecorder(cfg, store)
	ctx := t.Context()

	act := func(user, thread, skill, version, surface string) usage.Event {
		return usage.Event{Kind: usage.Activation, Skill: skill, Layer: skillview.LayerUser, Version: version, User: user, Thread: thread, Surface: surface}
	}
	rec.Record(ctx, act("ann", "t1", "pdf", "v1", "grpc"))
	rec.Record(ctx, act("ann", "t1", "pdf", "v1", "mcp"))
	rec.Record(ctx, act("ann", "t2", "pdf", "v2", "grpc"))
	rec.Record(ctx, usage.Event{Kind: usage.FileRead, Skill: "pdf", Layer: skillview.LayerUser, Version: "v2", File: "forms.md", User: "ann", Thread: "t2", Surface: "vfs"})
	rec.Record(ctx, act("ann", "t3", "notes", "v9", "json"))
	rec.Record(ctx, act("bob", "t1", "secret", "v1", "grpc")) // bob's own library
	// Searches: one led to an activation in its thread, one led nowhere,
	// one found nothing.
	rec.Record(ctx, usage.Event{Kind: usage.Search, Query: "PDF  forms", Results: []string{"pdf"}, User: "ann", Thread: "t4", Surface: "grpc"})
	rec.Record(ctx, act("ann", "t4", "pdf", "v2", "grpc"))
	rec.Record(ctx, usage.Event{Kind: usage.Search, Query: "spreadsheets", Results: []string{"csv"}, User: "ann", Thread: "t5", Surface: "grpc"})
	rec.Record(ctx, usage.Event{Kind: usage.Search, Query: "tax forms", User: "ann", Thread: "t6", Surface: "mcp"})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	added := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	skills := fakeSkills{"user:ann": {
		{Dir: "docs/pdf", Name: "pdf", Added: added},
		{Dir: "notes", Name: "notes", Added: added},
		{Dir: "data/csv", Name: "csv", Added: added},
		{Dir: "old", Name: "old"},
	}}
	roots := layout.DefaultVersionRoots()
	svc := New(usage.NewReader(cfg, store, usage.NewRollup(bucket, roots, store, cfg)), skills)
	annCtx := auth.NewContext(ctx, auth.Principal{Caller: caller(t, "ann", "")})
	today := usage.DayOf(time.Now())

	resp, err := svc.GetUsage(annCtx, &skillsvcv1.GetUsageRequest{Days: 7})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetFrom() != (today-6).String() || resp.GetTo() != today.String() {
		t.Errorf("range %s..%s, want %s..%s", resp.GetFrom(), resp.GetTo(), today-6, today)
	}
	if got := names(resp.GetSkills()); !slices.Equal(got, []string{"pdf", "notes"}) {
		t.Fatalf("skills %v, want pdf, notes (not bob's)", got)
	}
	pdf := resp.GetSkills()[0]
	if pdf.GetActivations() != 4 || pdf.GetFileReads() != 1 || pdf.GetUsers() != 1 || pdf.GetThreads() != 3 || pdf.GetLayer() != "user" {
		t.Errorf("pdf = %v; want 4 activations, 1 file read, 1 user, 3 threads, layer user", pdf)
	}
	if s := pdf.GetSurfaces(); s["grpc"] != 3 || s["mcp"] != 1 || s["vfs"] != 1 {
		t.Errorf("pdf's surfaces %v", s)
	}
	if v := pdf.GetVersions(); len(v) != 2 || v[0].GetVersion() != "v1" || v[0].GetActivations() != 2 || v[1].GetVersion() != "v2" || v[1].GetActivations() != 2 || v[1].GetFileReads() != 1 {
		t.Errorf("pdf's versions %v", v)
	}
	if pdf.GetFirstDay() != today.String() || pdf.GetLastDay() != today.String() {
		t.Errorf("pdf's days %s..%s", pdf.GetFirstDay(), pdf.GetLastDay())
	}
	if d := resp.GetDays(); len(d) != 1 || d[0].GetDay() != today.String() || d[0].GetActivations() != 5 || d[0].GetFileReads() != 1 || d[0].GetSearches() != 3 || d[0].GetUsers() != 1 {
		t.Errorf("days %v", d)
	}
	// "pdf forms" led to pdf: not listed; the others are.
	want := map[string][3]int64{"spreadsheets": {1, 0, 0}, "tax forms": {1, 1, 0}}
	if len(resp.GetSearches()) != len(want) {
		t.Errorf("searches %v, want %v", resp.GetSearches(), want)
	}
	for _, q := range resp.GetSearches() {
		if w, ok := want[q.GetQuery()]; !ok || w != [3]int64{q.GetSearches(), q.GetEmpty(), q.GetLed()} {
			t.Errorf("search %v, want %v", q, want)
		}
	}
	// Unused: csv and old; old has no known age.
	if got := unusedNames(resp.GetUnused()); !slices.Equal(got, []string{"csv", "old"}) {
		t.Fatalf("unused %v, want csv, old", got)
	}
	csv := resp.GetUnused()[0]
	if !csv.GetAdded().AsTime().Equal(added) || csv.GetAgeDays() != int64(today-usage.DayOf(added)) || csv.GetLastUsedDay() != "" || csv.GetDir() != "data/csv" {
		t.Errorf("csv = %v", csv)
	}

	// One skill: its usage and versions alone.
	resp, err = svc.GetUsage(annCtx, &skillsvcv1.GetUsageRequest{Skill: "notes"})
	if err != nil || len(resp.GetSkills()) != 1 || resp.GetSkills()[0].GetVersions()[0].GetVersion() != "v9" || len(resp.GetUnused()) != 0 {
		t.Fatalf("notes alone: %v, %v", resp, err)
	}

	// Ten days on, a range of the last 5 days: every skill is unused; pdf
	// and notes were last used today, found in the days before the range.
	svc.now = func() time.Time { return today.Start().Add(10*24*time.Hour + time.Hour) }
	resp, err = svc.GetUsage(annCtx, &skillsvcv1.GetUsageRequest{Days: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetSkills()) != 0 || len(resp.GetUnused()) != 4 {
		t.Fatalf("later: skills %v, unused %v", resp.GetSkills(), resp.GetUnused())
	}
	for _, u := range resp.GetUnused() {
		if (u.GetName() == "pdf" || u.GetName() == "notes") && (u.GetLastUsedDay() != today.String() || u.GetAgeDays() != 10) {
			t.Errorf("later: %v, want last used %s, 10 days ago", u, today)
		}
	}

	// Bob reads his own, never ann's.
	bobCtx := auth.NewContext(ctx, auth.Principal{Caller: caller(t, "bob", "")})
	resp, err = svc.GetUsage(bobCtx, &skillsvcv1.GetUsageRequest{})
	if err != nil || !slices.Equal(names(resp.GetSkills()), []string{"secret"}) {
		t.Fatalf("bob's own: %v, %v", resp, err)
	}
	_, err = svc.GetUsage(bobCtx, &skillsvcv1.GetUsageRequest{Library: &skillsvcv1.LibraryRef{User: "ann"}})
	if !errors.Is(err, errkind.PermissionDenied) {
		t.Fatalf("bob reading ann's: %v, want PERMISSION_DENIED", err)
	}
}

// TestGetUsageRequests: bad ranges are INVALID_ARGUMENT, a caller without
// identity UNAUTHENTICATED, and usage turned off FAILED_PRECONDITION.
func TestGetUsageRequests(t *testing.T) {
	cfg := usage.DefaultConfig()
	svc := New(usage.NewReader(cfg, usage.NewMemoryStore(cfg), nil), fakeSkills{})
	ctx := auth.NewContext(t.Context(), auth.Principal{Caller: caller(t, "ann", "")})
	for _, req := range []*skillsvcv1.GetUsageRequest{
		{Days: -1},
		{Days: 3, From: "2026-01-01"},
		{To: "2026-01-01"},
		{From: "2026-13-01"},
		{From: "2026-01-02", To: "2026-01-01"},
	} {
		if _, err := svc.GetUsage(ctx, req); !errors.Is(err, errkind.InvalidArgument) {
			t.Errorf("%v: %v, want INVALID_ARGUMENT", req, err)
		}
	}
	if resp, err := svc.GetUsage(ctx, &skillsvcv1.GetUsageRequest{From: "2026-01-01", To: "2026-01-03"}); err != nil || resp.GetFrom() != "2026-01-01" || resp.GetTo() != "2026-01-03" {
		t.Errorf("from and to: %v, %v", resp, err)
	}
	if _, err := svc.GetUsage(t.Context(), &skillsvcv1.GetUsageRequest{}); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("no identity: %v", err)
	}
	if _, err := New(nil, fakeSkills{}).GetUsage(ctx, &skillsvcv1.GetUsageRequest{}); !errors.Is(err, errkind.FailedPrecondition) {
		t.Errorf("usage off: %v", err)
	}
}

func names(ss []*skillsvcv1.SkillUsage) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.GetName())
	}
	return out
}

func unusedNames(us []*skillsvcv1.UnusedSkill) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.GetName())
	}
	return out
}

// TestSearchesKAnonymous: in a report other than the searcher's own, a
// query's text is shown only once minUsers distinct users searched it;
// the rest are summed into one row without text, whatever their outcome.
// In one's own report every query that found nothing or led nowhere shows.
func TestSearchesKAnonymous(t *testing.T) {
	qs := []usage.SearchUsage{
		{Query: "pdf forms", Searches: 9, Empty: 2, Led: 3, Users: 5},
		{Query: "acme merger sk-live-123", Searches: 4, Empty: 4, Users: 4},
		{Query: "led always", Searches: 2, Led: 2, Users: 1},
		{Query: "widely led", Searches: 6, Led: 6, Users: 5},
	}
	texts := func(ss []*skillsvcv1.SearchUsage) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.GetQuery())
		}
		return out
	}
	shown, other := searches(qs, false, 5)
	if got := texts(shown); !slices.Equal(got, []string{"pdf forms"}) {
		t.Errorf("shared report shows %v, want pdf forms alone", got)
	}
	if other.GetQuery() != "" || other.GetSearches() != 6 || other.GetEmpty() != 4 || other.GetLed() != 2 {
		t.Errorf("other searches %v, want 6 searches, 4 empty, 2 led, no text", other)
	}
	shown, other = searches(qs, true, 5)
	if got := texts(shown); !slices.Equal(got, []string{"pdf forms", "acme merger sk-live-123"}) || other != nil {
		t.Errorf("own report shows %v and other %v, want every query that found nothing or led nowhere, no other row", got, other)
	}
}
