package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
)

var aliceID = mounts.Identity{User: "alice", Thread: "t1"}

const freshSkill = "---\nname: fresh\ndescription: A skill an operator just added.\n---\n# Fresh\n"

func listedPaths(t *testing.T, ctx context.Context, c client) []string {
	t.Helper()
	res, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{IncludeDisabled: true})
	if err != nil {
		t.Fatalf("ListSkills: %v", err)
	}
	return paths(res.GetSkills())
}

// TestAdminLibraryFiles: an operator writes and deletes library files,
// conditionally, and the change is listed at once; hostile paths and
// library references are refused without touching the bucket.
func TestAdminLibraryFiles(t *testing.T) {
	c, bucket := startSkills(t, options{})
	ctx := t.Context()
	alice := &skillsvcv1.LibraryRef{User: "alice"}
	shared := &skillsvcv1.LibraryRef{Shared: true}
	_ = listedPaths(t, asAlice(t), c) // warm the index, so only a drop can show the change

	put := func(lib *skillsvcv1.LibraryRef, path, data string, mutate func(*skillsvcv1.PutLibraryFileRequest)) (*skillsvcv1.PutLibraryFileResponse, error) {
		req := &skillsvcv1.PutLibraryFileRequest{Library: lib, Path: path, Data: []byte(data)}
		if mutate != nil {
			mutate(req)
		}
		return c.admin.PutLibraryFile(ctx, req)
	}
	res, err := put(alice, "fresh/SKILL.md", freshSkill, func(r *skillsvcv1.PutLibraryFileRequest) { r.MustNotExist = true })
	if err != nil || res.GetEtag() == "" || res.GetSize() != int64(len(freshSkill)) {
		t.Fatalf("PutLibraryFile = %v, %v", res, err)
	}
	if got := listedPaths(t, asAlice(t), c); !slices.Contains(got, "/skills/fresh") {
		t.Errorf("after PutLibraryFile alice lists %v, want /skills/fresh", got)
	}
	_, err = put(alice, "fresh/SKILL.md", freshSkill, func(r *skillsvcv1.PutLibraryFileRequest) { r.MustNotExist = true })
	wantCode(t, "PutLibraryFile must_not_exist over a file", err, codes.AlreadyExists)
	_, err = put(alice, "fresh/SKILL.md", freshSkill, func(r *skillsvcv1.PutLibraryFileRequest) { r.IfMatch = "stale" })
	wantCode(t, "PutLibraryFile with a stale etag", err, codes.FailedPrecondition)
	_, err = put(alice, "fresh/SKILL.md", freshSkill+"more\n", func(r *skillsvcv1.PutLibraryFileRequest) { r.IfMatch = res.GetEtag() })
	wantCode(t, "PutLibraryFile with the current etag", err, codes.OK)

	sharedSkill := strings.ReplaceAll(freshSkill, "fresh", "common")
	if _, err := put(shared, "tools/common/SKILL.md", sharedSkill, nil); err != nil {
		t.Fatalf("PutLibraryFile shared: %v", err)
	}
	if got := listedPaths(t, asAlice(t), c); !slices.Contains(got, "/skills/tools/common") {
		t.Errorf("after a shared PutLibraryFile alice lists %v, want /skills/tools/common", got)
	}

	if _, err := c.admin.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: alice, Path: "fresh/SKILL.md"}); err != nil {
		t.Fatalf("DeleteLibraryFile: %v", err)
	}
	if got := listedPaths(t, asAlice(t), c); slices.Contains(got, "/skills/fresh") {
		t.Errorf("after DeleteLibraryFile alice lists %v", got)
	}
	_, err = c.admin.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: alice, Path: "fresh/SKILL.md"})
	wantCode(t, "DeleteLibraryFile of a missing file", err, codes.NotFound)

	before := keys(t, bucket)
	for _, tc := range []struct {
		name string
		lib  *skillsvcv1.LibraryRef
		path string
	}{
		{"no library", nil, "x/SKILL.md"},
		{"both", &skillsvcv1.LibraryRef{User: "alice", Shared: true}, "x/SKILL.md"},
		{"user ..", &skillsvcv1.LibraryRef{User: ".."}, "x/SKILL.md"},
		{"user _shared", &skillsvcv1.LibraryRef{User: "_shared"}, "x/SKILL.md"},
		{"user a/b", &skillsvcv1.LibraryRef{User: "a/b"}, "x/SKILL.md"},
		{"empty path", alice, ""},
		{"dot-dot", alice, "../../bob/skills/x/SKILL.md"},
		{"inner dot-dot", alice, "x/../../bob/SKILL.md"},
		{"absolute", alice, "/x/SKILL.md"},
		{"double slash", alice, "x//SKILL.md"},
		{"trailing slash", alice, "x/"},
		{"dot", alice, "./x/SKILL.md"},
		{"not UTF-8", alice, "x/\xff.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := put(tc.lib, tc.path, "data", nil)
			wantCode(t, "PutLibraryFile", err, codes.InvalidArgument)
			_, err = c.admin.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: tc.lib, Path: tc.path})
			wantCode(t, "DeleteLibraryFile", err, codes.InvalidArgument)
		})
	}
	if after := keys(t, bucket); !slices.Equal(after, before) {
		t.Errorf("refused calls changed the bucket: %v, was %v", after, before)
	}
}

// TestSetUserSkillEnabled: an operator disables a skill for a user, who
// sees it disabled; another user is unaffected.
func TestSetUserSkillEnabled(t *testing.T) {
	c, _ := startSkills(t, options{})
	res, err := c.admin.SetUserSkillEnabled(t.Context(), &skillsvcv1.SetUserSkillEnabledRequest{User: "alice", Path: "pdf", Enabled: false})
	if err != nil || !res.GetSkill().GetDisabled() {
		t.Fatalf("SetUserSkillEnabled = %v, %v", res, err)
	}
	got, err := c.skills.GetSkill(asAlice(t), &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil || !got.GetSkill().GetDisabled() {
		t.Errorf("alice's pdf after an admin disabled it: %v, %v", got, err)
	}
	_, err = c.admin.SetUserSkillEnabled(t.Context(), &skillsvcv1.SetUserSkillEnabledRequest{User: "../bob", Path: "pdf"})
	wantCode(t, "SetUserSkillEnabled for ../bob", err, codes.InvalidArgument)
}

// everyAdminRPC calls each AdminService method with a valid request.
var everyAdminRPC = []struct {
	name string
	call func(ctx context.Context, c skillsvcv1.AdminServiceClient) error
}{
	{"DropSkillIndex", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{User: "alice"})
		return err
	}},
	{"SetUserSkillEnabled", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.SetUserSkillEnabled(ctx, &skillsvcv1.SetUserSkillEnabledRequest{User: "alice", Path: "pdf", Enabled: true})
		return err
	}},
	{"PutLibraryFile", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "fresh/SKILL.md", Data: []byte(freshSkill)})
		return err
	}},
	{"DeleteLibraryFile", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "fresh/SKILL.md"})
		return err
	}},
	{"SetSkillProtected", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: &skillsvcv1.LibraryRef{Team: "legal"}, Name: "nda", Protected: true})
		return err
	}},
	{"ListProtectedSkills", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.ListProtectedSkills(ctx, &skillsvcv1.ListProtectedSkillsRequest{Library: &skillsvcv1.LibraryRef{Shared: true}})
		return err
	}},
	{"SetSkillScope", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.SetSkillScope(ctx, &skillsvcv1.SetSkillScopeRequest{Library: &skillsvcv1.LibraryRef{Team: "legal"}, Scope: &skillsvcv1.SkillScope{Name: "contracts"}})
		return err
	}},
	{"ListSkillScopes", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.ListSkillScopes(ctx, &skillsvcv1.ListSkillScopesRequest{Library: &skillsvcv1.LibraryRef{Shared: true}})
		return err
	}},
	{"DeleteSkillScope", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.DeleteSkillScope(ctx, &skillsvcv1.DeleteSkillScopeRequest{Library: &skillsvcv1.LibraryRef{Team: "legal"}, Name: "contracts"})
		return err
	}},
	{"CollectLibraryGarbage", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.CollectLibraryGarbage(ctx, &skillsvcv1.CollectLibraryGarbageRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, DryRun: true})
		return err
	}},
	{"DeleteSkillVersions", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.DeleteSkillVersions(ctx, &skillsvcv1.DeleteSkillVersionsRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Name: "nothere", Versions: []string{"sha256:" + strings.Repeat("0", 64)}})
		return err
	}},
	{"RejectProposals", func(ctx context.Context, c skillsvcv1.AdminServiceClient) error {
		_, err := c.RejectProposals(ctx, &skillsvcv1.RejectProposalsRequest{Library: &skillsvcv1.LibraryRef{Shared: true}})
		return err
	}},
}

// jwtServer starts the skills library in jwt mode and returns tokens.
func jwtServer(t *testing.T, o options) (client, func(p auth.Principal) context.Context) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := auth.DefaultConfig()
	cfg.Mode, cfg.JWT.SecretFile = auth.ModeJWT, file
	a, err := auth.New(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close(a) })
	o.auth = a
	c, _ := startSkills(t, o)
	return c, func(p auth.Principal) context.Context {
		tok, err := auth.MintHS256(cfg.JWT, file, p, time.Hour, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return grpctest.WithBearer(t.Context(), tok)
	}
}

// TestAdminRoles: with tokens, every AdminService call needs the admin
// scope: an agent token (even for the user named) is PERMISSION_DENIED,
// no token UNAUTHENTICATED; an admin token may act for a named user.
func TestAdminRoles(t *testing.T) {
	c, token := jwtServer(t, options{})
	agent := token(auth.Principal{Identity: aliceID})
	admin := token(auth.Principal{Admin: true, Subject: "ops@example.com"})
	for _, r := range everyAdminRPC {
		t.Run(r.name, func(t *testing.T) {
			wantCode(t, "no token", r.call(t.Context(), c.admin), codes.Unauthenticated)
			wantCode(t, "identity metadata", r.call(asAlice(t), c.admin), codes.Unauthenticated)
			wantCode(t, "alice's agent token", r.call(agent, c.admin), codes.PermissionDenied)
			wantCode(t, "admin token", r.call(admin, c.admin), codes.OK)
		})
	}
	// An admin token that names an identity also works as that agent.
	both := token(auth.Principal{Identity: aliceID, Admin: true})
	if _, err := c.skills.ListSkills(both, &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Errorf("ListSkills with an admin token naming alice: %v", err)
	}
}

// auditLines parses the audit log.
func auditLines(t *testing.T, buf *syncBuffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestAudit: one line per change (whatever its outcome) and per denied
// request, none for reads; who, which RPC, which path, the result and the
// request ID; control characters escaped.
func TestAudit(t *testing.T) {
	var buf syncBuffer
	c, token := jwtServer(t, options{audit: audit.New(&buf)})
	alice := token(auth.Principal{Identity: aliceID, Subject: "svc-agent"})
	admin := token(auth.Principal{Admin: true, Subject: "ops"})
	withID := func(ctx context.Context, id string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "x-request-id", id)
	}
	steps := []struct {
		name string
		call func() error
		want map[string]any // fields of the line; nil: no line
	}{
		{"write", func() error {
			_, err := c.fs.Write(withID(alice, "req-1"), &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "x"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.FilesystemService/Write", "user": "alice", "thread": "t1", "subject": "svc-agent", "path": "/workspace/a.md", "result": "OK", "request_id": "req-1", "admin": false}},
		{"read", func() error {
			_, err := c.fs.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/a.md"})
			return err
		}, nil},
		{"edit", func() error {
			_, err := c.fs.Edit(alice, &skillsvcv1.EditRequest{Path: "/workspace/a.md", OldString: "x", NewString: "y"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.FilesystemService/Edit", "path": "/workspace/a.md", "result": "OK"}},
		{"upload", func() error {
			_, err := upload(alice, c.fs, header("/workspace/b.bin"), chunk([]byte{1, 2}))
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.FilesystemService/Upload", "path": "/workspace/b.bin", "result": "OK"}},
		{"delete", func() error {
			_, err := c.fs.Delete(alice, &skillsvcv1.DeleteRequest{Path: "/workspace/b.bin"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.FilesystemService/Delete", "path": "/workspace/b.bin", "result": "OK"}},
		{"write to the read-only skills mount", func() error {
			_, err := c.fs.Write(alice, &skillsvcv1.WriteRequest{Path: "/skills/x.md", Content: "x"})
			return err
		}, map[string]any{"path": "/skills/x.md", "result": "PermissionDenied"}},
		{"hostile path", func() error {
			_, err := c.fs.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/\x1b[2J\nfake line \u202e", Content: "x"})
			return err
		}, map[string]any{"path": `/workspace/\x1b[2J\x0afake line \u202e`, "result": "InvalidArgument"}},
		{"settings", func() error {
			_, err := c.skills.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.SkillsService/SetSkillEnabled", "path": "pdf", "enabled": false, "result": "OK"}},
		{"admin drop", func() error {
			_, err := c.admin.DropSkillIndex(admin, &skillsvcv1.DropSkillIndexRequest{User: "bob"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.AdminService/DropSkillIndex", "subject": "ops", "admin": true, "target_user": "bob", "result": "OK"}},
		{"agent denied admin", func() error {
			_, err := c.admin.DropSkillIndex(alice, &skillsvcv1.DropSkillIndexRequest{User: "bob"})
			return err
		}, map[string]any{"user": "alice", "admin": false, "result": "PermissionDenied"}},
		{"no token", func() error {
			_, err := c.fs.List(withID(t.Context(), "bad id <script>"), &skillsvcv1.ListRequest{Path: "/workspace"})
			return err
		}, map[string]any{"rpc": "/skillsvc.v1.FilesystemService/List", "authenticated": false, "result": "Unauthenticated"}},
	}
	for _, s := range steps {
		before := len(auditLines(t, &buf))
		_ = s.call()
		lines := auditLines(t, &buf)
		if s.want == nil {
			if len(lines) != before {
				t.Errorf("%s: wrote audit lines %v", s.name, lines[before:])
			}
			continue
		}
		if len(lines) != before+1 {
			t.Fatalf("%s: %d audit lines, want 1: %v", s.name, len(lines)-before, lines[before:])
		}
		got := lines[before]
		if got["log"] != "audit" || got["request_id"] == "" {
			t.Errorf("%s: line %v lacks log=audit or a request_id", s.name, got)
		}
		for k, v := range s.want {
			if got[k] != v {
				t.Errorf("%s: %s = %#v, want %#v (line %v)", s.name, k, got[k], v, got)
			}
		}
	}
	// A request ID the caller cannot be trusted with is replaced.
	last := auditLines(t, &buf)
	if id := last[len(last)-1]["request_id"].(string); strings.ContainsAny(id, " \n") || len(id) != 32 {
		t.Errorf("request_id %q was not replaced", id)
	}
	if strings.Count(buf.String(), "\n") != len(last) {
		t.Errorf("a value broke a line: %q", buf.String())
	}
}

// TestLimitsThroughChain: a user over its rate gets RESOURCE_EXHAUSTED
// with RetryInfo through the real interceptor chain; another user does not.
func TestLimitsThroughChain(t *testing.T) {
	cfg := quota.DefaultConfig()
	// Ten calls at a tenth of a unit each (this bucket's requests are not
	// counted, so no storage is charged), then a long wait.
	cfg.Rate, cfg.Burst = 0.001, 1
	l, err := quota.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	c, _ := startSkills(t, options{limits: l})
	list := func(ctx context.Context) error {
		_, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		return err
	}
	for i := range 10 {
		if err := list(asAlice(t)); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	err = list(asAlice(t))
	wantCode(t, "eleventh call", err, codes.ResourceExhausted)
	if delay, _ := retryinfo.Delay(err); delay < time.Second {
		t.Errorf("RetryInfo delay = %v, want the time to the next token (over a second)", delay)
	}
	if err := list(as(t, auth.UserKey, "bob", auth.ThreadKey, "t1")); err != nil {
		t.Errorf("bob limited by alice's calls: %v", err)
	}
}

// TestRequestIDAndCallLog: the call's request ID comes back in the
// response header (the caller's when well-formed), and the service log's
// rpc line names the request ID and the authenticated user, which the
// logging interceptor, outside authentication, learns through auth.Track.
func TestRequestIDAndCallLog(t *testing.T) {
	var logs syncBuffer
	c, _ := startSkills(t, options{log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	var hdr metadata.MD
	ctx := metadata.AppendToOutgoingContext(asAlice(t), "x-request-id", "trace-42")
	if _, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"}, grpc.Header(&hdr)); err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("x-request-id"); len(got) != 1 || got[0] != "trace-42" {
		t.Errorf("x-request-id header = %q, want the caller's trace-42", got)
	}
	if _, err := c.fs.List(asAlice(t), &skillsvcv1.ListRequest{Path: "/workspace"}, grpc.Header(&hdr)); err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("x-request-id"); len(got) != 1 || len(got[0]) != 32 {
		t.Errorf("x-request-id header = %q, want a new 32-digit ID", got)
	}
	var found bool
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "rpc" && rec["request_id"] == "trace-42" {
			found = true
			if rec["user"] != "alice" || rec["thread"] != "t1" {
				t.Errorf("rpc log line %v does not name alice in t1", rec)
			}
		}
	}
	if !found {
		t.Errorf("no rpc log line with request_id trace-42 in %s", logs.String())
	}
}
