package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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
			HTTPClient: &http.Client{Transport: bearer{h, http.DefaultTransport}},
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
	// A forged token reaches the tools and is refused by the gRPC
	// interceptors, with the same code as over gRPC.
	forged, err := connect(signToken(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 48)), agentClaims("alice", "t1", "")))
	if err != nil {
		t.Fatal(err)
	}
	defer forged.Close()
	res, err := forged.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/workspace/notes.md"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Error (UNAUTHENTICATED)") {
		t.Fatalf("forged token: %+v, %v", res, err)
	}
}

type bearer struct {
	h    http.Header
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range b.h {
		r.Header[k] = v
	}
	return b.next.RoundTrip(r)
}
