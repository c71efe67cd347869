package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// teamsLibrary seeds the organization's library, two teams' and alice's.
func teamsLibrary(put func(key, body string)) {
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
	}
	put("_shared/skills/contracts/SKILL.md", skill("contracts", "Org contract basics."))
	put("_teams/legal/skills/nda/SKILL.md", skill("nda", "Legal team NDA review."))
	put("_teams/legal/skills/clauses/SKILL.md", skill("clauses", "Legal team clause library."))
	put("_teams/eng/skills/deploy/SKILL.md", skill("deploy", "Eng team deploys."))
	put("alice/skills/my-nda/SKILL.md", skill("nda", "Alice's own NDA checklist."))
}

// TestTeamsEndToEnd runs two binaries with production defaults on one
// bucket and one Redis: ann (team legal) and carl (team eng) each see their
// own team's skills and not the other's, through ListSkills, FormatSkills,
// the /skills mount, MCP's skills/list and the JSON gateway; alice's own
// skill hides legal's of its name and says so; a change to legal's
// library through A is seen by legal's members on both replicas (B told
// over Redis: a watcher of ann's on B hears of it), and not by carl.
func TestTeamsEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	teamsLibrary(s3Put(t, srv, bucket))
	args := s3Flags(srv, bucket, redisFlags(red, newKeyPrefix())...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connA, connB := dial(t, a.addr), dial(t, b.addr)
	scA, scB := skillsvcv1.NewSkillsServiceClient(connA), skillsvcv1.NewSkillsServiceClient(connB)
	fsA := skillsvcv1.NewFilesystemServiceClient(connA)
	as := func(user, teams string) context.Context {
		return grpctest.InTeams(grpctest.AsCaller(ctx, user, "t1", ""), teams)
	}
	ann, carl, alice := as("ann", "legal"), as("carl", "eng"), as("alice", "legal")
	header := func(user, teams string) http.Header {
		h := grpctest.CallerHeader(user, "t1", "")
		h.Set(auth.TeamsKey, teams)
		return h
	}
	m := newMCPRaw(t, a)

	for _, tc := range []struct {
		user, teams string
		ctx         context.Context
		names       string // ListSkills, in path order
		see, notSee string
	}{
		{"ann", "legal", ann, "clauses,contracts,nda", "Legal team", "Eng team"},
		{"carl", "eng", carl, "contracts,deploy", "Eng team", "Legal team"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			if got, err := skillNames(tc.ctx, scA); err != nil || got != tc.names {
				t.Errorf("ListSkills = %q, %v; want %q", got, err, tc.names)
			}
			f, err := scA.FormatSkills(tc.ctx, &skillsvcv1.FormatSkillsRequest{})
			if err != nil || !strings.Contains(f.GetText(), tc.see) || strings.Contains(f.GetText(), tc.notSee) {
				t.Errorf("FormatSkills = %q, %v; want %q and not %q", f.GetText(), err, tc.see, tc.notSee)
			}
			ls, err := fsA.List(tc.ctx, &skillsvcv1.ListRequest{Path: "/skills"})
			var paths []string
			for _, e := range ls.GetEntries() {
				paths = append(paths, e.GetPath())
			}
			wantPaths := map[string][]string{"ann": {"/skills/clauses", "/skills/contracts", "/skills/nda"}, "carl": {"/skills/contracts", "/skills/deploy"}}[tc.user]
			if err != nil || !slices.Equal(paths, wantPaths) {
				t.Errorf("List /skills = %q, %v; want %q", paths, err, wantPaths)
			}
			// JSON over the gateway.
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+a.httpAddr+"/skillsvc.v1.SkillsService/ListSkills", strings.NewReader(`{}`))
			req.Header = header(tc.user, tc.teams)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.see) || strings.Contains(string(body), tc.notSee) {
				t.Errorf("JSON ListSkills = %s %s; want %q and not %q", resp.Status, body, tc.see, tc.notSee)
			}
			// MCP's skills/list.
			h := header(tc.user, tc.teams)
			sid := m.open(h)
			_, msg := m.post(h, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
			if msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), tc.see) || strings.Contains(string(msg.Result), tc.notSee) {
				t.Errorf("MCP skills/list = %+v; want %q and not %q", msg, tc.see, tc.notSee)
			}
		})
	}
	// The same user with other teams gets another MCP session: the teams
	// are part of the identity it is keyed on.
	sid := m.open(header("ann", "legal"))
	if resp, _ := m.post(header("ann", "eng"), sid, `{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("ann's legal session used with teams eng: HTTP %d, want 404", resp.StatusCode)
	}

	// alice's own nda hides legal's, and says so.
	list, err := scA.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var nda *skillsvcv1.SkillSummary
	for _, s := range list.GetSkills() {
		if s.GetName() == "nda" {
			if nda != nil {
				t.Errorf("nda listed twice: %v and %v", nda, s)
			}
			nda = s
		}
	}
	if nda == nil || nda.GetPath() != "/skills/my-nda" || nda.GetLayer() != "user" ||
		!slices.ContainsFunc(nda.GetWarnings(), func(w string) bool { return strings.Contains(w, `hides the team:legal skill "nda" at /skills/nda`) }) {
		t.Errorf("alice's nda = %v; want her own, saying it hides legal's", nda)
	}

	// A change to legal's library through A: a watcher of ann's on B hears
	// of it, then every member lists it on both replicas; carl does not.
	w := watchOn(t, ann, scB, "")
	w.next()
	adminA := skillsvcv1.NewAdminServiceClient(connA)
	if _, err := adminA.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{Team: "legal"}, Path: "handbook/SKILL.md",
		Data: []byte("---\nname: handbook\ndescription: Legal team handbook.\n---\nRead it.\n"),
	}); err != nil {
		t.Fatal(err)
	}
	w.until(time.Now(), "legal's handbook on B", "ADDED handbook")
	for name, c := range map[string]struct {
		ctx  context.Context
		sc   skillsvcv1.SkillsServiceClient
		want string
	}{
		"ann on A":   {ann, scA, "clauses,contracts,handbook,nda"},
		"ann on B":   {ann, scB, "clauses,contracts,handbook,nda"},
		"alice on B": {alice, scB, "clauses,contracts,handbook,nda"},
		"carl on B":  {carl, scB, "contracts,deploy"},
	} {
		if got, err := skillNames(c.ctx, c.sc); err != nil || got != c.want {
			t.Errorf("%s: ListSkills = %q, %v; want %q", name, got, err, c.want)
		}
	}
}

// TestProtectedEndToEnd: once an admin protects the organization's
// contracts skill, alice's namesake (at the same path, and at another)
// no longer replaces it; hers is listed with a warning saying why and is
// reachable by its path; the audit log records the protection.
func TestProtectedEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	teamsLibrary(put)
	put("alice/skills/contracts/SKILL.md", "---\nname: contracts\ndescription: Alice's contracts at the org's path.\n---\nmine\n")
	auditFile := filepath.Join(t.TempDir(), "audit.log")
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--audit.output="+auditFile)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := dial(t, p.addr)
	sc, admin := skillsvcv1.NewSkillsServiceClient(conn), skillsvcv1.NewAdminServiceClient(conn)
	alice := grpctest.InTeams(grpctest.AsCaller(ctx, "alice", "t1", ""), "legal")
	get := func(ref string) string {
		t.Helper()
		g, err := sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: ref})
		if err != nil {
			t.Fatalf("GetSkill(%s): %v", ref, err)
		}
		return g.GetSkill().GetLayer() + " " + g.GetSkill().GetDescription()
	}
	if got := get("contracts"); got != "user Alice's contracts at the org's path." {
		t.Fatalf("before protection contracts = %q, want alice's", got)
	}
	if _, err := admin.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Name: "nda", Protected: true}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("protecting a user's skill: %v, want INVALID_ARGUMENT", err)
	}
	for _, lib := range []*skillsvcv1.LibraryRef{{Shared: true}, {Team: "legal"}} {
		name := map[bool]string{true: "contracts", false: "nda"}[lib.GetShared()]
		r, err := admin.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: lib, Name: name, Protected: true})
		if err != nil || !slices.Equal(r.GetNames(), []string{name}) {
			t.Fatalf("SetSkillProtected(%v, %s) = %v, %v", lib, name, r, err)
		}
	}
	if got := get("contracts"); got != "shared Org contract basics." {
		t.Errorf("protected contracts = %q, want the organization's", got)
	}
	if got := get("nda"); got != "team:legal Legal team NDA review." {
		t.Errorf("protected nda = %q, want legal's", got)
	}
	if got := get("/skills/my-nda"); got != "user Alice's own NDA checklist." {
		t.Errorf("alice's nda by its path = %q", got)
	}
	list, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var mine *skillsvcv1.SkillSummary
	for _, s := range list.GetSkills() {
		if s.GetPath() == "/skills/my-nda" {
			mine = s
		}
	}
	if mine == nil || !slices.ContainsFunc(mine.GetWarnings(), func(w string) bool { return strings.Contains(w, "is protected by an administrator") }) {
		t.Errorf("alice's nda = %v; want it listed, saying legal's is protected", mine)
	}
	audit, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"rpc":"/skillsvc.v1.AdminService/SetSkillProtected"`) || !strings.Contains(string(audit), `"target_team":"legal","skill":"nda","protected":true`) {
		t.Errorf("the audit log does not record the protection:\n%s", audit)
	}
}
