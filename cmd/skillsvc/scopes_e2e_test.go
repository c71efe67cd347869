package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// scopesLibrary seeds the organization's library, team legal's and
// alice's: contract skills among others, two with a compatibility field.
func scopesLibrary(put func(key, body string)) {
	skill := func(name, desc, extra string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n# " + name + "\nBody of " + name + ".\n"
	}
	put("_shared/skills/legal/contracts/SKILL.md", skill("contracts", "Draft and review contracts.", "tags: [contracts]\n"))
	put("_shared/skills/legal/contracts/references/clauses.md", "indemnity clause text\n")
	put("_shared/skills/legal/nda-review/SKILL.md", skill("nda-review", "Review an NDA.", ""))
	put("_shared/skills/eng/deploy/SKILL.md", skill("deploy", "Deploy the service to production.", ""))
	put("_shared/skills/eng/deploy/runbook.md", "indemnity is not a deploy word\n")
	put("_shared/skills/draft-contract/SKILL.md", skill("draft-contract", "A contract draft in progress.", "keywords: Contracts, drafts\n"))
	put("_shared/skills/writing/release-notes/SKILL.md", skill("release-notes", "Write release notes.", "compatibility: Claude Code\n"))
	put("_shared/skills/data/csv-summary/SKILL.md", skill("csv-summary", "Summarize a CSV file.", "compatibility: codex\n"))
	put("_teams/legal/skills/clauses/SKILL.md", skill("clauses", "The legal team's clause library.", "metadata:\n  keywords: legal, Contracts\n"))
	put("alice/skills/alice-notes/SKILL.md", skill("alice-notes", "Alice's own notes.", ""))
}

// scopeDefs are the scopes the tests define: "contracts" (legal skills and
// those tagged contracts, no drafts), "agent" (skills compatible with the
// caller's harness) and "focus", defined by the organization, team legal
// and alice, each naming one skill of its own.
var scopeDefs = []struct {
	lib   *skillsvcv1.LibraryRef
	scope *skillsvcv1.SkillScope
}{
	{&skillsvcv1.LibraryRef{Shared: true}, &skillsvcv1.SkillScope{Name: "contracts",
		Include: &skillsvcv1.SkillScopeRule{Categories: []string{"legal"}, Tags: []string{"Contracts"}},
		Exclude: &skillsvcv1.SkillScopeRule{Names: []string{"draft-*"}}}},
	{&skillsvcv1.LibraryRef{Shared: true}, &skillsvcv1.SkillScope{Name: "agent",
		Exclude:       &skillsvcv1.SkillScopeRule{Categories: []string{"legal", "eng"}},
		Compatibility: skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS}},
	{&skillsvcv1.LibraryRef{Shared: true}, &skillsvcv1.SkillScope{Name: "focus", Include: &skillsvcv1.SkillScopeRule{Names: []string{"deploy"}}}},
	{&skillsvcv1.LibraryRef{Team: "legal"}, &skillsvcv1.SkillScope{Name: "focus", Include: &skillsvcv1.SkillScopeRule{Names: []string{"clauses"}}}},
	{&skillsvcv1.LibraryRef{User: "alice"}, &skillsvcv1.SkillScope{Name: "focus", Include: &skillsvcv1.SkillScopeRule{Names: []string{"alice-*"}}}},
}

// surfaces is what one caller sees through every listing surface of a
// binary, each as a sorted, comma-joined list of skill names (or paths).
type surfaces struct {
	list, categories, format, search, mount, glob, grep, watch, mcpList, mcpTool, mcpSearch string
}

// scopedSurfaces reads every surface as the caller ctx (gRPC) and h (MCP)
// name; scope is the request field of ListSkills, FormatSkills and
// SearchSkills.
func scopedSurfaces(t *testing.T, ctx context.Context, conn *grpc.ClientConn, m mcpRaw, h http.Header, scope string) (surfaces, string) {
	t.Helper()
	sc, fs := skillsvcv1.NewSkillsServiceClient(conn), skillsvcv1.NewFilesystemServiceClient(conn)
	var out surfaces
	join := func(names []string) string { slices.Sort(names); return strings.Join(slices.Compact(names), ",") }
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	ls, err := sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000, Scope: scope})
	check("ListSkills", err)
	var names []string
	for _, s := range ls.GetSkills() {
		names = append(names, s.GetName())
	}
	out.list = join(names)
	if scope == "" {
		cats, err := sc.ListCategories(ctx, &skillsvcv1.ListCategoriesRequest{})
		check("ListCategories", err)
		names = nil
		for _, c := range cats.GetCategories() {
			names = append(names, c.GetName())
		}
		out.categories = join(names)
	}
	f, err := sc.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Scope: scope})
	check("FormatSkills", err)
	names = nil
	for _, n := range []string{"contracts", "nda-review", "deploy", "draft-contract", "release-notes", "csv-summary", "clauses", "alice-notes"} {
		if strings.Contains(f.GetText(), "<name>"+n+"</name>") {
			names = append(names, n)
		}
	}
	out.format = join(names)
	sr, err := sc.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "contracts deploy notes csv nda clause review", Limit: 50, Scope: scope})
	check("SearchSkills", err)
	names = nil
	for _, r := range sr.GetResults() {
		names = append(names, r.GetSkill().GetName())
	}
	out.search = join(names)
	if scope != "" {
		return out, ls.GetLibraryDigest()
	}
	// The /skills mount: every skill folder listed, globbed and grepped.
	names = nil
	for _, dir := range []string{"/skills", "/skills/legal", "/skills/eng", "/skills/writing", "/skills/data"} {
		l, err := fs.List(ctx, &skillsvcv1.ListRequest{Path: dir})
		if status.Code(err) == codes.NotFound {
			continue
		}
		check("List "+dir, err)
		for _, e := range l.GetEntries() {
			if e.GetIsDir() && !slices.Contains([]string{"/skills/legal", "/skills/eng", "/skills/writing", "/skills/data"}, e.GetPath()) {
				names = append(names, e.GetPath()[strings.LastIndexByte(e.GetPath(), '/')+1:])
			}
		}
	}
	out.mount = join(names)
	g, err := fs.Glob(ctx, &skillsvcv1.GlobRequest{Pattern: "**/SKILL.md", Path: "/skills"})
	check("Glob", err)
	names = nil
	for _, e := range g.GetMatches() {
		p := strings.TrimSuffix(e.GetPath(), "/SKILL.md")
		names = append(names, p[strings.LastIndexByte(p, '/')+1:])
	}
	out.glob = join(names)
	gr, err := fs.Grep(ctx, &skillsvcv1.GrepRequest{Pattern: "indemnity", Path: "/skills"})
	check("Grep", err)
	names = nil
	for _, e := range gr.GetMatches() {
		names = append(names, e.GetPath())
	}
	out.grep = join(names)
	// WatchSkills: its first message names the view's digest.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := sc.WatchSkills(wctx, &skillsvcv1.WatchSkillsRequest{})
	check("WatchSkills", err)
	msg, err := st.Recv()
	check("WatchSkills Recv", err)
	out.watch = "digest of another view"
	if msg.GetLibraryDigest() == ls.GetLibraryDigest() {
		out.watch = "digest of ListSkills"
	}
	// MCP: skills/list, the list_skills and search_skills tools.
	sid := m.open(h)
	_, res := m.post(h, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	if res == nil || res.Error != nil {
		t.Fatalf("MCP skills/list: %+v", res)
	}
	var list struct {
		Skills []struct {
			Frontmatter struct {
				Name string `json:"name"`
			} `json:"frontmatter"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(res.Result, &list); err != nil {
		t.Fatalf("MCP skills/list %s: %v", res.Result, err)
	}
	names = nil
	for _, s := range list.Skills {
		names = append(names, s.Frontmatter.Name)
	}
	out.mcpList = join(names)
	tool := func(name, args string) string {
		t.Helper()
		_, res := m.post(h, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
		if res == nil || res.Error != nil {
			t.Fatalf("MCP %s: %+v", name, res)
		}
		var names []string
		for _, n := range []string{"contracts", "nda-review", "deploy", "draft-contract", "release-notes", "csv-summary", "clauses", "alice-notes"} {
			if strings.Contains(string(res.Result), `\u003cname\u003e`+n+`\u003c`) || strings.Contains(string(res.Result), "- "+n+" (") {
				names = append(names, n)
			}
		}
		return join(names)
	}
	out.mcpTool = tool("list_skills", `{}`)
	out.mcpSearch = tool("search_skills", `{"query":"contracts deploy notes csv nda clause review"}`)
	return out, ls.GetLibraryDigest()
}

// TestScopesEndToEnd runs the binary with production defaults on MinIO in
// insecure mode: scopes defined with AdminService in the organization's,
// team legal's and alice's libraries; a scope chosen by the
// x-skillsvc-scope header narrows ListSkills, ListCategories,
// FormatSkills, SearchSkills, the /skills mount (List, Glob, Grep, Stat,
// Read), WatchSkills, GetSkill, MCP's skills/list, resources and tools;
// the request field narrows alike; the library digest differs per scope;
// an unknown scope is NOT_FOUND naming it; the nearest library's scope of
// a name wins (alice > team legal > organization); "agent" keeps skills
// compatible with the x-skillsvc-harness; bad definitions are
// INVALID_ARGUMENT.
func TestScopesEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	scopesLibrary(s3Put(t, srv, bucket))
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn := dial(t, p.addr)
	admin := skillsvcv1.NewAdminServiceClient(conn)
	sc, fs := skillsvcv1.NewSkillsServiceClient(conn), skillsvcv1.NewFilesystemServiceClient(conn)
	for _, d := range scopeDefs {
		if _, err := admin.SetSkillScope(ctx, &skillsvcv1.SetSkillScopeRequest{Library: d.lib, Scope: d.scope}); err != nil {
			t.Fatalf("SetSkillScope(%v, %s): %v", d.lib, d.scope.GetName(), err)
		}
	}
	got, err := admin.ListSkillScopes(ctx, &skillsvcv1.ListSkillScopesRequest{Library: &skillsvcv1.LibraryRef{Shared: true}})
	if err != nil || len(got.GetScopes()) != 3 || got.GetScopes()[1].GetName() != "contracts" || got.GetScopes()[1].GetExclude().GetNames()[0] != "draft-*" {
		t.Fatalf("ListSkillScopes(shared) = %v, %v", got, err)
	}
	m := newMCPRaw(t, p)
	caller := func(user, teams, scope, harness string) (context.Context, http.Header) {
		h := grpctest.CallerHeader(user, "t1", "")
		c := grpctest.InTeams(grpctest.AsCaller(ctx, user, "t1", ""), teams)
		h.Set(auth.TeamsKey, teams)
		for k, v := range map[string]string{auth.ScopeKey: scope, auth.HarnessKey: harness} {
			if v != "" {
				h.Set(k, v)
				c = metadata.AppendToOutgoingContext(c, k, v)
			}
		}
		return c, h
	}

	all, allHeader := caller("ann", "legal", "", "")
	everything, allDigest := scopedSurfaces(t, all, conn, m, allHeader, "")
	if everything.list != "alice-notes,clauses,contracts,csv-summary,deploy,draft-contract,nda-review,release-notes" && everything.list != "clauses,contracts,csv-summary,deploy,draft-contract,nda-review,release-notes" {
		t.Fatalf("ann's unscoped ListSkills = %q", everything.list)
	}

	t.Run("header narrows every surface", func(t *testing.T) {
		c, h := caller("ann", "legal", "contracts", "")
		got, digest := scopedSurfaces(t, c, conn, m, h, "")
		want := surfaces{
			list: "clauses,contracts,nda-review", categories: ",legal", format: "clauses,contracts,nda-review",
			search: "clauses,contracts,nda-review", mount: "clauses,contracts,nda-review", glob: "clauses,contracts,nda-review",
			grep: "/skills/legal/contracts/references/clauses.md", watch: "digest of ListSkills",
			mcpList: "clauses,contracts,nda-review", mcpTool: "clauses,contracts,nda-review", mcpSearch: "clauses,contracts,nda-review",
		}
		if got != want {
			t.Errorf("scope contracts by header:\n got %+v\nwant %+v", got, want)
		}
		if digest == allDigest || digest == "" {
			t.Errorf("library digest %q under scope contracts, %q without: a client caching by digest would mix them", digest, allDigest)
		}
		// Out-of-scope skills and files are not there to read either.
		for _, path := range []string{"/skills/eng/deploy/SKILL.md", "/skills/eng/deploy/runbook.md", "/skills/draft-contract/SKILL.md"} {
			if _, err := fs.Stat(c, &skillsvcv1.StatRequest{Path: path}); status.Code(err) != codes.NotFound {
				t.Errorf("Stat %s under scope contracts: %v, want NotFound", path, err)
			}
			if _, err := fs.Read(c, &skillsvcv1.ReadRequest{Path: path}); status.Code(err) != codes.NotFound {
				t.Errorf("Read %s under scope contracts: %v, want NotFound", path, err)
			}
		}
		if _, err := fs.Read(c, &skillsvcv1.ReadRequest{Path: "/skills/legal/contracts/references/clauses.md"}); err != nil {
			t.Errorf("Read of an in-scope file: %v", err)
		}
		for _, ref := range []string{"deploy", "/skills/eng/deploy", "draft-contract"} {
			if _, err := sc.GetSkill(c, &skillsvcv1.GetSkillRequest{Path: ref}); status.Code(err) != codes.NotFound {
				t.Errorf("GetSkill %s under scope contracts: %v, want NotFound", ref, err)
			}
		}
		sid := m.open(h)
		for uri, ok := range map[string]bool{"skill://legal/contracts/SKILL.md": true, "skill://eng/deploy/SKILL.md": false} {
			_, res := m.post(h, sid, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
			if res == nil || (res.Error == nil) != ok {
				t.Errorf("MCP resources/read %s under scope contracts: %+v, want ok=%t", uri, res, ok)
			}
		}
		_, res := m.post(h, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"deploy"}}}`)
		if res == nil || res.Error == nil && !strings.Contains(string(res.Result), `"isError":true`) {
			t.Errorf("MCP load_skill deploy under scope contracts: %+v, want an error", res)
		}
		// A watch under the scope hears of a change to an in-scope skill
		// and of none out of it (the out-of-scope one is made first).
		w := watchOn(t, c, sc, "")
		w.next() // the view as it is
		for path, body := range map[string]string{"eng/ops/SKILL.md": "---\nname: ops\ndescription: Ops.\n---\n", "legal/lease/SKILL.md": "---\nname: lease\ndescription: Leases.\n---\n"} {
			if _, err := admin.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{Library: &skillsvcv1.LibraryRef{Shared: true}, Path: path, Data: []byte(body)}); err != nil {
				t.Fatal(err)
			}
		}
		for seen := ""; !strings.Contains(seen, "lease"); {
			for _, ch := range w.next().GetChanges() {
				seen += " " + ch.GetName()
			}
			if strings.Contains(seen, "ops") {
				t.Fatalf("a watch under scope contracts heard of %q", seen)
			}
		}
		for _, path := range []string{"eng/ops/SKILL.md", "legal/lease/SKILL.md"} {
			if _, err := admin.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: &skillsvcv1.LibraryRef{Shared: true}, Path: path}); err != nil {
				t.Fatal(err)
			}
		}
		// The same identity with another scope is another MCP session.
		if resp, _ := m.post(allHeader, sid, `{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{}}`); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a scoped session used without the scope: HTTP %d, want 404", resp.StatusCode)
		}
	})

	t.Run("request field narrows", func(t *testing.T) {
		got, digest := scopedSurfaces(t, all, conn, m, allHeader, "contracts")
		want := surfaces{list: "clauses,contracts,nda-review", format: "clauses,contracts,nda-review", search: "clauses,contracts,nda-review"}
		if got != want {
			t.Errorf("scope contracts by request field:\n got %+v\nwant %+v", got, want)
		}
		if digest == allDigest {
			t.Errorf("library digest under the scope field is the unscoped one")
		}
	})

	t.Run("pinned thread", func(t *testing.T) {
		// A thread pinned to its library sees the scopes as they were when
		// it pinned, and the scope narrows the pinned view alike.
		c, _ := caller("ann", "legal", "contracts", "")
		c = metadata.AppendToOutgoingContext(c, auth.PinKey, auth.PinLibrary)
		if got, err := skillNames(c, sc); err != nil || got != "clauses,contracts,nda-review" {
			t.Errorf("a pinned thread's ListSkills under scope contracts = %q, %v", got, err)
		}
		if _, err := fs.Stat(c, &skillsvcv1.StatRequest{Path: "/skills/eng/deploy/SKILL.md"}); status.Code(err) != codes.NotFound {
			t.Errorf("a pinned thread's Stat of an out-of-scope file: %v, want NotFound", err)
		}
	})

	t.Run("unknown scope", func(t *testing.T) {
		c, h := caller("ann", "legal", "nope", "")
		_, err := sc.ListSkills(c, &skillsvcv1.ListSkillsRequest{})
		if status.Code(err) != codes.NotFound || !strings.Contains(status.Convert(err).Message(), `"nope"`) {
			t.Errorf("ListSkills with scope nope: %v, want NotFound naming it", err)
		}
		if _, err := sc.FormatSkills(all, &skillsvcv1.FormatSkillsRequest{Scope: "nope"}); status.Code(err) != codes.NotFound {
			t.Errorf("FormatSkills with scope field nope: %v, want NotFound", err)
		}
		if _, err := fs.List(c, &skillsvcv1.ListRequest{Path: "/skills"}); status.Code(err) != codes.NotFound {
			t.Errorf("List /skills with scope nope: %v, want NotFound", err)
		}
		if _, err := sc.SearchSkills(all, &skillsvcv1.SearchSkillsRequest{Query: "x", Scope: "../x"}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("SearchSkills with scope field ../x: %v, want InvalidArgument", err)
		}
		sid := m.open(h)
		if _, res := m.post(h, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`); res == nil || res.Error == nil || !strings.Contains(res.Error.Message, "nope") {
			t.Errorf("MCP skills/list with scope nope: %+v, want an error naming it", res)
		}
	})

	t.Run("nearest library's scope wins", func(t *testing.T) {
		for _, tc := range []struct{ user, teams, want string }{
			{"alice", "legal", "alice-notes"}, // alice's own
			{"ann", "legal", "clauses"},       // team legal's
			{"carl", "", "deploy"},            // the organization's
		} {
			c, _ := caller(tc.user, tc.teams, "", "")
			if got, err := sc.ListSkills(c, &skillsvcv1.ListSkillsRequest{Scope: "focus"}); err != nil || len(got.GetSkills()) != 1 || got.GetSkills()[0].GetName() != tc.want {
				t.Errorf("%s (teams %q) scope focus: %v, %v; want only %s", tc.user, tc.teams, got.GetSkills(), err, tc.want)
			}
		}
	})

	t.Run("compatibility against the harness", func(t *testing.T) {
		for harness, want := range map[string]string{
			"codex":  "alice-notes,clauses,csv-summary,draft-contract",
			"claude": "alice-notes,clauses,draft-contract,release-notes",
			"":       "alice-notes,clauses,draft-contract",
		} {
			c, _ := caller("alice", "legal", "agent", harness)
			if got, err := skillNames(c, sc); err != nil || sortedCSV(got) != want {
				t.Errorf("scope agent, harness %q: %q, %v; want %q", harness, sortedCSV(got), err, want)
			}
		}
	})

	t.Run("definitions are validated", func(t *testing.T) {
		shared := &skillsvcv1.LibraryRef{Shared: true}
		long := make([]string, 201)
		for i := range long {
			long[i] = "n"
		}
		for name, tc := range map[string]struct {
			lib   *skillsvcv1.LibraryRef
			scope *skillsvcv1.SkillScope
			want  codes.Code
		}{
			"bad name":            {shared, &skillsvcv1.SkillScope{Name: "../x"}, codes.InvalidArgument},
			"no name":             {shared, &skillsvcv1.SkillScope{}, codes.InvalidArgument},
			"bad glob":            {shared, &skillsvcv1.SkillScope{Name: "g", Include: &skillsvcv1.SkillScopeRule{Names: []string{"a["}}}, codes.InvalidArgument},
			"too many entries":    {shared, &skillsvcv1.SkillScope{Name: "g", Exclude: &skillsvcv1.SkillScopeRule{Names: long}}, codes.InvalidArgument},
			"entry too long":      {shared, &skillsvcv1.SkillScope{Name: "g", Include: &skillsvcv1.SkillScopeRule{Tags: []string{strings.Repeat("t", 129)}}}, codes.InvalidArgument},
			"unknown rule":        {shared, &skillsvcv1.SkillScope{Name: "g", Compatibility: 9}, codes.InvalidArgument},
			"no library":          {nil, &skillsvcv1.SkillScope{Name: "g"}, codes.InvalidArgument},
			"two libraries":       {&skillsvcv1.LibraryRef{Shared: true, Team: "legal"}, &skillsvcv1.SkillScope{Name: "g"}, codes.InvalidArgument},
			"bad team":            {&skillsvcv1.LibraryRef{Team: "../legal"}, &skillsvcv1.SkillScope{Name: "g"}, codes.InvalidArgument},
			"user entry too long": {&skillsvcv1.LibraryRef{User: "alice"}, &skillsvcv1.SkillScope{Name: "g", Include: &skillsvcv1.SkillScopeRule{Categories: []string{" legal"}}}, codes.InvalidArgument},
		} {
			if _, err := admin.SetSkillScope(ctx, &skillsvcv1.SetSkillScopeRequest{Library: tc.lib, Scope: tc.scope}); status.Code(err) != tc.want {
				t.Errorf("%s: SetSkillScope = %v, want %v", name, err, tc.want)
			}
		}
		if _, err := admin.DeleteSkillScope(ctx, &skillsvcv1.DeleteSkillScopeRequest{Library: shared, Name: "nope"}); status.Code(err) != codes.NotFound {
			t.Errorf("DeleteSkillScope of no scope: %v, want NotFound", err)
		}
		// Nothing above was stored: the organization's scopes are as set.
		if got, err := admin.ListSkillScopes(ctx, &skillsvcv1.ListSkillScopesRequest{Library: shared}); err != nil || len(got.GetScopes()) != 3 {
			t.Errorf("ListSkillScopes after refused definitions = %v, %v", got, err)
		}
		// Deleting alice's focus falls back to her team's.
		if _, err := admin.DeleteSkillScope(ctx, &skillsvcv1.DeleteSkillScopeRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Name: "focus"}); err != nil {
			t.Fatal(err)
		}
		c, _ := caller("alice", "legal", "focus", "")
		if got, err := skillNames(c, sc); err != nil || got != "clauses" {
			t.Errorf("alice's focus after deleting her own: %q, %v; want team legal's (clauses)", got, err)
		}
	})
}

// sortedCSV sorts a comma-joined list.
func sortedCSV(s string) string {
	parts := strings.Split(s, ",")
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// TestScopesJWTEndToEnd runs the binary in jwt mode with its defaults on
// MinIO, the scopes stored as the side object the organization's library
// keeps them in: a token's skill_scope claim narrows ListSkills, the
// /skills mount and MCP's skills/list; a request field or header naming
// another scope is PERMISSION_DENIED, the same one is served; the
// harness claim is matched against compatibility, and a header may not
// change it either.
func TestScopesJWTEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	scopesLibrary(put)
	put("_shared/settings/protected.json", `{"names":[],"scopes":[
		{"name":"contracts","include":{"categories":["legal"],"tags":["contracts"]},"exclude":{"names":["draft-*"]}},
		{"name":"agent","exclude":{"categories":["legal","eng"]},"compatibility":"empty-or-harness"}]}`)
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := dial(t, p.addr)
	sc, fs := skillsvcv1.NewSkillsServiceClient(conn), skillsvcv1.NewFilesystemServiceClient(conn)
	token := func(scope, harness string) string {
		c := agentClaims("ann", "t1", "")
		c["teams"] = "legal"
		if scope != "" {
			c["skill_scope"] = scope
		}
		if harness != "" {
			c["harness"] = harness
		}
		return signToken(t, jwt.SigningMethodHS256, f.secret, c)
	}
	scoped := grpctest.WithBearer(ctx, token("contracts", ""))

	if got, err := skillNames(scoped, sc); err != nil || got != "clauses,contracts,nda-review" {
		t.Errorf("ListSkills with a contracts token = %q, %v", got, err)
	}
	l, err := fs.List(scoped, &skillsvcv1.ListRequest{Path: "/skills"})
	var paths []string
	for _, e := range l.GetEntries() {
		paths = append(paths, e.GetPath())
	}
	if err != nil || strings.Join(paths, ",") != "/skills/clauses,/skills/legal" {
		t.Errorf("List /skills with a contracts token = %q, %v", paths, err)
	}
	if _, err := fs.Read(scoped, &skillsvcv1.ReadRequest{Path: "/skills/eng/deploy/SKILL.md"}); status.Code(err) != codes.NotFound {
		t.Errorf("Read of an out-of-scope file with a contracts token: %v, want NotFound", err)
	}
	// The token binds: a request field or header may repeat its scope,
	// never name another (or none: no field is the token's scope).
	if got, err := sc.ListSkills(scoped, &skillsvcv1.ListSkillsRequest{Scope: "contracts"}); err != nil || len(got.GetSkills()) != 3 {
		t.Errorf("ListSkills naming the token's own scope: %v, %v", got.GetSkills(), err)
	}
	for name, call := range map[string]func() error{
		"ListSkills field": func() error {
			_, err := sc.ListSkills(scoped, &skillsvcv1.ListSkillsRequest{Scope: "agent"})
			return err
		},
		"FormatSkills field": func() error {
			_, err := sc.FormatSkills(scoped, &skillsvcv1.FormatSkillsRequest{Scope: "agent"})
			return err
		},
		"SearchSkills field": func() error {
			_, err := sc.SearchSkills(scoped, &skillsvcv1.SearchSkillsRequest{Query: "deploy", Scope: "agent"})
			return err
		},
		"scope header": func() error {
			_, err := sc.ListSkills(metadata.AppendToOutgoingContext(scoped, auth.ScopeKey, "agent"), &skillsvcv1.ListSkillsRequest{})
			return err
		},
		"harness header": func() error {
			c := grpctest.WithBearer(ctx, token("agent", "codex"))
			_, err := sc.ListSkills(metadata.AppendToOutgoingContext(c, auth.HarnessKey, "claude"), &skillsvcv1.ListSkillsRequest{})
			return err
		},
	} {
		if err := call(); status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s widening a token's scope: %v, want PermissionDenied", name, err)
		}
	}
	// A token without a scope may choose one per call.
	free := grpctest.WithBearer(ctx, token("", ""))
	if got, err := sc.ListSkills(free, &skillsvcv1.ListSkillsRequest{Scope: "contracts"}); err != nil || len(got.GetSkills()) != 3 {
		t.Errorf("ListSkills with scope field and an unscoped token: %v, %v", got.GetSkills(), err)
	}
	if got, err := skillNames(grpctest.WithBearer(ctx, token("agent", "codex")), sc); err != nil || got != "clauses,csv-summary,draft-contract" {
		t.Errorf("scope agent with harness claim codex: %q, %v", got, err)
	}
	if _, err := sc.ListSkills(grpctest.WithBearer(ctx, token("nope", "")), &skillsvcv1.ListSkillsRequest{}); status.Code(err) != codes.NotFound {
		t.Errorf("a token naming an unknown scope: %v, want NotFound", err)
	}

	// MCP takes the token the same way.
	m := newMCPRaw(t, p)
	h := bearerHeader(token("contracts", ""))
	sid := m.open(h)
	_, res := m.post(h, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	if res == nil || res.Error != nil || !strings.Contains(string(res.Result), `"contracts"`) || strings.Contains(string(res.Result), "deploy") {
		t.Errorf("MCP skills/list with a contracts token: %+v", res)
	}
	h.Set(auth.ScopeKey, "agent")
	if resp, _ := m.postRaw(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("MCP with a header widening the token's scope: HTTP %d, want 403", resp.StatusCode)
	}
}
