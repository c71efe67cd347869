package app_test

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/skilluse"
)

// TestSkillUsesOnTraces: on MinIO and Redis with the default limits, an
// activation through gRPC, the JSON API, MCP and a Read of /skills is
// marked once in its trace, by an activation event on the span that
// served it, which carries the skill's name, layer, version (the manifest
// digest listings name) and surface.
func TestSkillUsesOnTraces(t *testing.T) {
	s := startTraced(t)
	conn, err := grpc.NewClient(s.addrs["serving"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	alice := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	list, err := skillsvcv1.NewSkillsServiceClient(conn).ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	digest := map[string]string{}
	for _, sk := range list.GetSkills() {
		digest[sk.GetName()] = sk.GetManifestDigest()
	}
	if digest["notes"] == "" || digest["csv"] == "" {
		t.Fatalf("listed %v", digest)
	}
	var current atomic.Value
	client := headerClient(&current)

	// check finds the one activation event in c's trace, once the span
	// the caller's request made (its root here) has ended.
	check := func(t *testing.T, c caller, skill, layer, surface string) {
		t.Helper()
		s.rec.waitFor(t, "the request's", func(sp sdktrace.ReadOnlySpan) bool {
			return sp.SpanContext().TraceID() == c.traceID && sp.Parent().SpanID() == c.spanID
		})
		var marked []sdktrace.ReadOnlySpan
		for _, sp := range s.rec.trace(c.traceID) {
			for _, ev := range sp.Events() {
				if ev.Name == skilluse.EventActivated {
					marked = append(marked, sp)
				}
			}
		}
		if len(marked) != 1 {
			t.Fatalf("%d activation events in the trace, want 1; spans: %s", len(marked), s.rec.Describe())
		}
		sp := marked[0]
		if attr(sp, skilluse.AttrSkillName).AsString() != skill || attr(sp, skilluse.AttrSkillLayer).AsString() != layer ||
			attr(sp, skilluse.AttrSkillVersion).AsString() != digest[skill] || attr(sp, skilluse.AttrSurface).AsString() != surface {
			t.Fatalf("span %s: %v", sp.Name(), sp.Attributes())
		}
	}

	t.Run("gRPC", func(t *testing.T) {
		c := newCaller()
		ctx := metadata.AppendToOutgoingContext(alice, "traceparent", c.traceparent())
		if _, err := skillsvcv1.NewSkillsServiceClient(conn).GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "csv"}); err != nil {
			t.Fatal(err)
		}
		check(t, c, "csv", "shared", "grpc")
	})
	t.Run("JSON", func(t *testing.T) {
		c := newCaller()
		current.Store(c.traceparent())
		resp, err := client.Post("http://"+s.addrs["serving http"]+"/skillsvc.v1.SkillsService/RenderSkill", "application/json", bytes.NewReader([]byte(`{"path":"notes"}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("RenderSkill: %s", resp.Status)
		}
		check(t, c, "notes", "user", "json")
	})
	t.Run("MCP", func(t *testing.T) {
		current.Store("")
		session, err := mcp.NewClient(&mcp.Implementation{Name: "usage-test", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: "http://" + s.addrs["serving http"] + "/mcp", HTTPClient: client, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		c := newCaller()
		current.Store(c.traceparent())
		res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"skill": "csv"}})
		if err != nil || res.IsError {
			t.Fatalf("load_skill = %+v, %v", res, err)
		}
		check(t, c, "csv", "shared", "mcp")
	})
	t.Run("/skills", func(t *testing.T) {
		c := newCaller()
		ctx := metadata.AppendToOutgoingContext(alice, "traceparent", c.traceparent())
		if _, err := skillsvcv1.NewFilesystemServiceClient(conn).Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/notes/SKILL.md"}); err != nil {
			t.Fatal(err)
		}
		check(t, c, "notes", "user", "vfs")
	})
}
