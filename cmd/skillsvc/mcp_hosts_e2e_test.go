package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// What hosts need of /mcp beyond the protocol, through the binary on
// MinIO on both revisions: the skill://index.json discovery document,
// resource-not-found errors hosts recognise, annotated tools with
// single-type schemas, errors that name no tool the model lacks, no
// prompts capability, and log lines at the level their event deserves.
func TestMCPHostsEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/writing/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes. Use for changelogs.\n---\n# Release notes\n")
	put("alice/skills/writing/release-notes/references/style.md", "# Style\nShort lines.\n")
	put("alice/skills/writing/release-notes/assets/logo.png", "\x89PNG\x00\xff\xfe")
	put("alice/skills/data/csv-summary/SKILL.md", "---\nname: csv-summary\ndescription: Summarize a CSV file.\n---\nRun it.\n")
	put("bob/skills/ops/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the service.\n---\nDeploy.\n")
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--skills.index-refresh=1s")...)
	alice := grpctest.CallerHeader("alice", "t1", "")

	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
			s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://" + p.httpAddr + "/mcp", HTTPClient: mcptest.Client(alice)},
				&mcp.ClientSessionOptions{ProtocolVersion: revision})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if caps := s.InitializeResult().Capabilities; caps.Prompts != nil {
				t.Errorf("prompts declared (%+v), though none are served", caps.Prompts)
			}

			// The index lists alice's served skills, and only hers.
			r, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://index.json"})
			if err != nil {
				t.Fatal(err)
			}
			var index struct {
				Schema string `json:"$schema"`
				Skills []struct{ Name, Type, Description, URL string }
			}
			if r.Contents[0].MIMEType != "application/json" || json.Unmarshal([]byte(r.Contents[0].Text), &index) != nil {
				t.Fatalf("skill://index.json = %+v", r.Contents[0])
			}
			var got []string
			for _, e := range index.Skills {
				got = append(got, fmt.Sprintf("%s %s %s %s", e.Name, e.Type, e.URL, e.Description))
			}
			want := []string{
				"csv-summary skill-md skill://data/csv-summary/SKILL.md Summarize a CSV file.",
				"release-notes skill-md skill://writing/release-notes/SKILL.md Write release notes. Use for changelogs.",
			}
			if index.Schema != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" || !slices.Equal(got, want) {
				t.Errorf("index %s %q, want %q", index.Schema, got, want)
			}

			// Every missing resource is the SDK's not-found: -32602 with
			// data {"uri": …}.
			for _, uri := range []string{
				"skill://writing/release-notes/references/missing.md",
				"skill://nowhere/ghost/SKILL.md",
				"skill://ops/deploy/SKILL.md", // bob's
			} {
				_, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				wantNotFound(t, "resources/read "+uri, err, uri)
			}

			tools, err := s.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range tools.Tools {
				a := tl.Annotations
				if a == nil || a.Title == "" || tl.Title != a.Title || a.DestructiveHint == nil || a.OpenWorldHint == nil || *a.OpenWorldHint {
					t.Errorf("%s: annotations %+v, title %q", tl.Name, a, tl.Title)
					continue
				}
				if writes := tl.Name == "write_file" || tl.Name == "edit_file"; a.ReadOnlyHint == writes || *a.DestructiveHint != writes {
					t.Errorf("%s: readOnlyHint %v destructiveHint %v", tl.Name, a.ReadOnlyHint, *a.DestructiveHint)
				}
				b, _ := json.Marshal(tl.InputSchema)
				var schema struct{ Properties map[string]struct{ Type any } }
				json.Unmarshal(b, &schema)
				for name, prop := range schema.Properties {
					if _, one := prop.Type.(string); !one {
						t.Errorf("%s.%s: type %v, want one type", tl.Name, name, prop.Type)
					}
				}
			}

			// A binary file refused as text names no tool the model lacks.
			res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/skills/writing/release-notes/assets/logo.png"}})
			if err != nil || !res.IsError {
				t.Fatalf("read_file of a PNG = %+v, %v", res, err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "Download") || !strings.Contains(text, "not UTF-8 text") {
				t.Errorf("read_file of a PNG: %q", text)
			}
		})
	}

	// resources/subscribe on the sessionless revision is the client's
	// mistake, answered -32601, and no ERROR in the server's log.
	raw := newMCPRaw(t, p)
	modern := alice.Clone()
	modern.Set("Mcp-Protocol-Version", "2026-07-28")
	modern.Set("Mcp-Method", "resources/subscribe")
	resp, msg := raw.post(modern, "", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"skill://writing/release-notes/SKILL.md",`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if msg == nil || msg.Error == nil || msg.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("resources/subscribe on 2026-07-28 = %d %+v, want -32601", resp.StatusCode, msg.Error)
	}
	if !waitLogged(p, `"msg":"method removed in the new protocol"`) {
		t.Fatalf("the refusal is not logged at all:\n%s", p.output())
	}
	for line := range strings.Lines(p.output()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("logged at ERROR: %s", line)
		}
	}

	// A library change with three sessions of one identity that hold no
	// stream for notifications: one line for the identity, and the SDK's
	// per-session "undelivered" lines at DEBUG, not WARN.
	bobH := grpctest.CallerHeader("bob", "t9", "")
	for range 3 {
		resp, msg := raw.post(bobH, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" || msg == nil || msg.Error != nil {
			t.Fatalf("initialize: %d %+v", resp.StatusCode, msg)
		}
		h := bobH.Clone()
		h.Set("Mcp-Session-Id", sid)
		h.Set("Mcp-Protocol-Version", "2025-11-25")
		raw.postRaw(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	put("bob/skills/ops/rollback/SKILL.md", "---\nname: rollback\ndescription: Roll back a deploy.\n---\nRoll back.\n")
	if !waitLogged(p, `"msg":"mcp: library changed, sessions notified"`, `"sessions":3`) {
		t.Errorf("no change line for bob's identity:\n%s", p.output())
	}
	if !waitLogged(p, `"level":"DEBUG"`, `calling notifications/resources/list_changed`) {
		t.Errorf("the undelivered notifications are not logged at DEBUG:\n%s", p.output())
	}
	for line := range strings.Lines(p.output()) {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "calling notifications/") {
			t.Errorf("a per-session WARN: %s", line)
		}
	}
}

func wantNotFound(t *testing.T, op string, err error, uri string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("%s: %v, want -32602", op, err)
		return
	}
	var data map[string]any
	if json.Unmarshal(je.Data, &data) != nil || len(data) != 1 || data["uri"] != uri {
		t.Errorf("%s: data %s, want {\"uri\": %q}", op, je.Data, uri)
	}
}

// waitLogged reports whether a line of p's log holds every part, waiting
// for the server to write it (within a deadline for a server that never
// does).
func waitLogged(p *proc, parts ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return p.logs.Wait(ctx, func(log string) bool {
		for line := range strings.Lines(log) {
			if !slices.ContainsFunc(parts, func(s string) bool { return !strings.Contains(line, s) }) {
				return true
			}
		}
		return false
	})
}
