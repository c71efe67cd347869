package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// countingAuth counts the verifications of the authenticator it wraps.
type countingAuth struct {
	auth.Authenticator
	n atomic.Int64
}

func (c *countingAuth) Authenticate(ctx context.Context, h auth.Headers) (auth.Principal, error) {
	c.n.Add(1)
	return c.Authenticator.Authenticate(ctx, h)
}

// TestTokenVerifiedOncePerRequest: in jwt mode an MCP request verifies its
// token once, at the edge, however many catalog and filesystem calls its
// handler makes (a listing page, a skill, a directory of several pages, a
// write): the layers below take the checked principal.
func TestTokenVerifiedOncePerRequest(t *testing.T) {
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
	counted := &countingAuth{Authenticator: a}
	e := startAuth(t, library().Bucket(t), counted, func(c *mcpserver.Config) { c.SkillsPageSize = 2 }, nil, nil)
	tok, err := auth.MintHS256(cfg.JWT, file, auth.Principal{Identity: mounts.Identity{User: "alice", Thread: "t1"}}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	alice := http.Header{"Authorization": {"Bearer " + tok}}
	sid := openSession(t, e.h, alice)
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":%d,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"skills/get","params":{"uri":"skill://writing/release-notes/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://writing/release-notes/references/style.md"}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ls","arguments":{"path":"/skills/writing"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/workspace/a.md","content":"a"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"load_skill","arguments":{"skill":"release-notes"}}}`,
	} {
		body = fmt.Sprintf(body, i+2)
		before := counted.n.Load()
		rec := rawPost(e.h, t.Context(), alice, sid, body)
		msg, err := reply(rec)
		if err != nil || msg == nil || msg.Error != nil || strings.Contains(string(msg.Result), `"isError":true`) {
			t.Fatalf("%s: HTTP %d, %v, %v", body, rec.Code, msg, err)
		}
		if n := counted.n.Load() - before; n != 1 {
			t.Errorf("%s verified the token %d times, want once", body, n)
		}
	}
}

// TestSkillsListPagesAreFull: skills the extension does not serve (named
// unlike their folders) are left out before the catalog cuts a page, so
// every skills/list and resources/list page but the last holds a full page
// of served skills, and none is empty.
func TestSkillsListPagesAreFull(t *testing.T) {
	b := skillstest.New()
	alice := b.User("alice")
	for i := range 5 { // first in path order
		alice.File(fmt.Sprintf("a/folder-%d/SKILL.md", i), skillstest.SkillMD(fmt.Sprintf("other-%d", i), "Named unlike its folder.", "Body.\n"))
	}
	for i := range 5 {
		name := fmt.Sprintf("served-%d", i)
		alice.Skill("b/"+name, name, "Served over MCP.", "Body.\n")
	}
	e := start(t, b.Bucket(t), func(c *mcpserver.Config) { c.SkillsPageSize = 2 })
	s := e.connect(identity("alice", "t1"), nil)
	var sizes []int
	p := &listParams{}
	for {
		r, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), s, "skills/list", p)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(r.Skills))
		for _, sk := range r.Skills {
			if !strings.HasPrefix(sk.URI, "skill://b/served-") {
				t.Errorf("listed %s, which is not served", sk.URI)
			}
		}
		if r.NextCursor == "" {
			break
		}
		p = &listParams{Cursor: r.NextCursor}
	}
	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Errorf("skills/list page sizes %v, want [2 2 1]", sizes)
	}
	res, err := s.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 2 {
		t.Errorf("resources/list's first page holds %d resources, want 2", len(res.Resources))
	}
}
