package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestMCPEndToEndMinIO drives /mcp of the binary in jwt mode on MinIO with
// the SDK's client: the bearer token is the identity, as on gRPC, and a
// caller without one is refused.
func TestMCPEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/writing/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes. Use for changelogs.\n---\n# Release notes\nGroup changes. $ARGUMENTS\n")
	put("alice/skills/writing/release-notes/references/style.md", "# Style\nShort lines.\n")
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)

	connect := func(token string) (*mcp.ClientSession, error) {
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{
			Endpoint:   "http://" + p.httpAddr + "/mcp",
			HTTPClient: mcptest.Client(h),
		}
		return c.Connect(t.Context(), tr, nil)
	}
	if s, err := connect(""); err == nil {
		s.Close()
		t.Fatal("an MCP session without a token was opened")
	}

	s, err := connect(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://writing/release-notes/references/style.md"})
	if err != nil || r.Contents[0].Text != "# Style\nShort lines.\n" {
		t.Fatalf("read reference = %+v, %v", r, err)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{ // in order: read_file reads what write_file wrote
		{"load_skill", map[string]any{"skill": "release-notes", "arguments": "v2"}},
		{"write_file", map[string]any{"path": "/workspace/notes.md", "content": "v2 notes\n"}},
		{"read_file", map[string]any{"path": "/workspace/notes.md"}},
	} {
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil || res.IsError {
			t.Fatalf("%s = %+v, %v", call.name, res, err)
		}
	}
	// Callers the gRPC server would refuse are refused at /mcp before a
	// session exists: a forged token, identity headers without a token,
	// and an admin token (it names no user and thread).
	admin := agentClaims("", "", "")
	delete(admin, "user")
	delete(admin, "thread")
	admin["scope"] = "skillsvc:admin"
	refused := map[string]http.Header{
		"forged token": {"Authorization": {"Bearer " + signToken(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 48)), agentClaims("alice", "t1", ""))}},
		"headers only": grpctest.CallerHeader("alice", "t1", ""),
		"admin token":  {"Authorization": {"Bearer " + signToken(t, jwt.SigningMethodHS256, f.secret, admin)}},
	}
	for name, h := range refused {
		req, err := http.NewRequest(http.MethodPost, "http://"+p.httpAddr+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: initialize = %d (WWW-Authenticate %q, session %q), want 401 and no session",
				name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Mcp-Session-Id"))
		}
	}
}
