package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/workspace/a.md", "/workspace/a.md"},
		{"é ü 中文", "é ü 中文"},
		{"a\nb", `a\x0ab`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"tab\there", `tab\x09here`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"rtl\u202eexe.md", `rtl\u202eexe.md`},
		{"isolate\u2066x", `isolate\u2066x`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash`, `back\\slash`},
	} {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := clean(strings.Repeat("\n", 5000))
	if len(long) > maxValue+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("clean of 5000 newlines: %d bytes, want at most %d and marked", len(long), maxValue)
	}
}

// TestRecordSelects: changes and denials get a line, reads do not, and a
// nil Logger writes nothing.
func TestRecordSelects(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	ctx := context.Background()
	denied := status.Error(codes.PermissionDenied, "no")
	l.Record(ctx, "/skillsvc.v1.FilesystemService/Read", &skillsvcv1.ReadRequest{Path: "/workspace/a"}, time.Now(), nil)
	if buf.Len() != 0 {
		t.Fatalf("a read was audited: %s", buf.String())
	}
	l.Record(ctx, "/skillsvc.v1.FilesystemService/Read", &skillsvcv1.ReadRequest{Path: "/workspace/a"}, time.Now(), denied)
	l.Record(ctx, "/skillsvc.v1.FilesystemService/Delete", &skillsvcv1.DeleteRequest{Path: "/workspace/a"}, time.Now(), errors.New("boom"))
	l.Record(ctx, "/skillsvc.v1.AdminService/DropSkillIndex", &skillsvcv1.DropSkillIndexRequest{Shared: true}, time.Now(), nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %s", len(lines), buf.String())
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &last); err != nil || last["shared"] != true || last["authenticated"] != false {
		t.Errorf("admin line %v, %v", last, err)
	}
	var nilLogger *Logger
	nilLogger.Record(ctx, "/skillsvc.v1.FilesystemService/Delete", nil, time.Now(), nil) // must not panic
}

// TestRefusedAlwaysWrites: an edge's refusal is a line whatever its code,
// with the verified principal when there is one.
func TestRefusedAlwaysWrites(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	ctx := auth.NewContext(context.Background(), auth.Principal{Identity: mounts.Identity{User: "alice", Thread: "t1"}, Subject: "sub"})
	l.Refused(ctx, "/mcp", time.Now(), status.Error(codes.ResourceExhausted, "too many MCP sessions"))
	l.Refused(context.Background(), "/mcp", time.Now(), status.Error(codes.NotFound, "session not found"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(lines), buf.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first["rpc"] != "/mcp" || first["user"] != "alice" || first["result"] != "ResourceExhausted" || first["error"] != "too many MCP sessions" {
		t.Errorf("first line %v", first)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil || second["authenticated"] != false || second["result"] != "NotFound" {
		t.Errorf("second line %v, %v", second, err)
	}
	var nilLogger *Logger
	nilLogger.Refused(ctx, "/mcp", time.Now(), nil) // must not panic
}
