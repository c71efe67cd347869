package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file check the audit trail the binary writes.

// TestAuditEndToEnd checks the audit file: one valid JSON line per change
// and per refusal, with who, what, where and the result, and no raw
// control bytes whatever the caller sent.
func TestAuditEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f, "--audit.output="+auditFile)...)...)
	bin := binary(t)
	mint := func(args ...string) string {
		out, err := exec.Command(bin, append([]string{"token", "--secret-file", f.file, "--ttl", "10m"}, args...)...).Output()
		if err != nil {
			t.Fatalf("skillsvc token %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	aliceTok := mint("--user", "alice", "--thread", "t1", "--subject", "alice-agent")
	opsTok := mint("--admin", "--subject", "ops")
	conn := dial(t, p.addr)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	adm := skillsvcv1.NewAdminServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Each call carries its own request ID, which its line must repeat.
	call := func(id, token string) context.Context {
		c := metadata.AppendToOutgoingContext(ctx, "x-request-id", id)
		if token != "" {
			c = grpctest.WithBearer(c, token)
		}
		return c
	}

	if _, err := fsc.Write(call("audit-write", aliceTok), &skillsvcv1.WriteRequest{Path: "/workspace/audit.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err := fsc.Write(call("audit-anonymous", ""), &skillsvcv1.WriteRequest{Path: "/workspace/denied.md", Content: "x"})
	grpctest.WantCode(t, err, codes.Unauthenticated)
	const forged = "forged-token-never-logged"
	_, err = fsc.Write(call("audit-forged", forged), &skillsvcv1.WriteRequest{Path: "/workspace/forged.md", Content: "x"})
	grpctest.WantCode(t, err, codes.Unauthenticated)
	if _, err := adm.PutLibraryFile(call("audit-admin", opsTok), &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "ops/tool/SKILL.md",
		Data: []byte("---\nname: tool\ndescription: Put by ops.\n---\nbody\n"),
	}); err != nil {
		t.Fatal(err)
	}
	_, err = adm.DropSkillIndex(call("audit-agent-admin", aliceTok), &skillsvcv1.DropSkillIndexRequest{User: "alice"})
	grpctest.WantCode(t, err, codes.PermissionDenied)
	const hostile = "/workspace/\x1b[31mred\n.md"
	_, hostileErr := fsc.Write(call("audit-hostile", aliceTok), &skillsvcv1.WriteRequest{Path: hostile, Content: "x"})
	if _, err := fsc.Read(call("audit-read", aliceTok), &skillsvcv1.ReadRequest{Path: "/workspace/audit.md"}); err != nil {
		t.Fatal(err)
	}

	// The line is written before the answer is sent: no waiting needed.
	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), forged) || strings.Contains(string(data), aliceTok) || strings.Contains(string(data), opsTok) {
		t.Errorf("the audit trail holds a token:\n%s", data)
	}
	lines := map[string][]map[string]any{}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if i := bytes.IndexFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
			t.Errorf("audit line %d has a raw control byte %#x: %q", i+1, line[i], line)
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Errorf("audit line %d is not JSON: %v: %q", i+1, err, line)
			continue
		}
		if rec["log"] != "audit" {
			t.Errorf("audit line %d: log = %v, want audit", i+1, rec["log"])
		}
		id, _ := rec["request_id"].(string)
		lines[id] = append(lines[id], rec)
	}
	one := func(id string) map[string]any {
		t.Helper()
		if len(lines[id]) != 1 {
			t.Errorf("%d audit lines for request %s, want 1:\n%s", len(lines[id]), id, data)
			return map[string]any{}
		}
		return lines[id][0]
	}
	fields := func(id string, want map[string]any) {
		t.Helper()
		rec := one(id)
		for k, v := range want {
			if rec[k] != v {
				t.Errorf("request %s: audit %s = %#v, want %#v (line %v)", id, k, rec[k], v, rec)
			}
		}
	}
	const fsRPC, admRPC = "/skillsvc.v1.FilesystemService/", "/skillsvc.v1.AdminService/"
	fields("audit-write", map[string]any{"rpc": fsRPC + "Write", "user": "alice", "thread": "t1", "subject": "alice-agent",
		"admin": false, "path": "/workspace/audit.md", "result": "OK"})
	fields("audit-anonymous", map[string]any{"rpc": fsRPC + "Write", "authenticated": false, "path": "/workspace/denied.md", "result": "Unauthenticated"})
	fields("audit-forged", map[string]any{"rpc": fsRPC + "Write", "authenticated": false, "path": "/workspace/forged.md", "result": "Unauthenticated"})
	fields("audit-admin", map[string]any{"rpc": admRPC + "PutLibraryFile", "subject": "ops", "admin": true, "path": "ops/tool/SKILL.md", "result": "OK"})
	fields("audit-agent-admin", map[string]any{"rpc": admRPC + "DropSkillIndex", "user": "alice", "subject": "alice-agent",
		"admin": false, "target_user": "alice", "result": "PermissionDenied"})
	for _, id := range []string{"audit-anonymous", "audit-forged"} {
		if u, ok := one(id)["user"]; ok {
			t.Errorf("request %s: an unauthenticated line names user %v", id, u)
		}
	}
	if len(lines["audit-read"]) != 0 {
		t.Errorf("a successful Read was audited: %v", lines["audit-read"])
	}

	// The hostile path: refused or not, its line is one line with the
	// control characters escaped, in the decoded value too.
	rec := one("audit-hostile")
	if want := status.Code(hostileErr).String(); rec["result"] != want {
		t.Errorf("hostile write: audit result %v, call got %v", rec["result"], hostileErr)
	}
	for _, k := range []string{"path", "error"} {
		s, _ := rec[k].(string)
		if strings.ContainsFunc(s, unicode.IsControl) {
			t.Errorf("hostile write: audit %s holds control characters: %q", k, s)
		}
	}
	if s, _ := rec["path"].(string); !strings.Contains(s, "red") || !strings.HasPrefix(s, "/workspace/") {
		t.Errorf("hostile write: audit path = %q, want the path escaped", s)
	}
}
