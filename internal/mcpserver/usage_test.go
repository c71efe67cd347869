package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// recorded is a usage.Recorder keeping every event.
type recorded struct {
	mu     sync.Mutex
	events []usage.Event
}

func (r *recorded) Record(_ context.Context, e usage.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorded) take() []usage.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// startUsage serves MCP as start does, with rec recording the uses of
// skills of both the handler and the filesystem's skills tree, as the
// binary wires one recorder into both.
func startUsage(t *testing.T, b *skillstest.Builder, rec usage.Recorder, opts ...mcpserver.Option) *env {
	t.Helper()
	bucket := b.Bucket(t)
	scfg := app.DefaultConfig()
	lib := skillstest.Library(t, bucket, func(c *skills.Config) { scfg.Skills = *c })
	services, err := app.NewServices(scfg, app.Parts{Bucket: bucket, Lib: lib, Usage: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(services.Close)
	var cfg mcpserver.Config
	cfg.RegisterFlags(flagSet())
	h, err := mcpserver.New(lib.Catalog, services.FS, auth.Metadata{}, cfg, slog.New(slog.DiscardHandler), append([]mcpserver.Option{mcpserver.WithUsage(rec)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		h.Close()
	})
	return &env{t: t, bucket: bucket, url: ts.URL, h: h}
}

// usageLibrary: a skill of alice's own, of her team eng and of the
// organization, each with another file.
func usageLibrary() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").Skill("notes/mine", "mine", "Alice's notes on invoices.", "Read ref.md.").File("notes/mine/ref.md", "ref\n")
	b.Team("eng").Skill("ops/deploy", "deploy", "Deploy the service to production.", "Run it.").File("ops/deploy/scripts/run.sh", "#!/bin/sh\necho run\n")
	b.Shared().Skill("docs/pdf", "pdf", "Extract text and tables from PDF files.", "Use scripts/x.py.").File("docs/pdf/scripts/x.py", "print(1)\n")
	return b
}

// TestUsageOverMCP: each MCP way of using a skill records one event with
// the skill's layer and version (its manifest digest, as skills/list's
// resources name it), the caller, and the surface "mcp", or "vfs" for the
// read_file tool, which reads through the /skills mount.
func TestUsageOverMCP(t *testing.T) {
	rec := &recorded{}
	e := startUsage(t, usageLibrary(), rec)
	h := identity("alice", "t1")
	h.Set(auth.TeamsKey, "eng")
	s := e.connect(h, nil)
	digest := map[string]string{}
	for _, sk := range listAll(t, s) {
		// The manifest digest is what GetSkill and ListSkills name; the
		// extension does not carry it, so ask skills/get's tool twin.
		digest[sk.Frontmatter["name"].(string)] = ""
	}
	if len(digest) != 3 {
		t.Fatalf("listed %v", digest)
	}
	rec.take()
	want := func(t *testing.T, kind usage.Kind, skill, layer, file, surface string) {
		t.Helper()
		got := rec.take()
		if len(got) != 1 {
			t.Fatalf("%d events, want 1: %+v", len(got), got)
		}
		ev := got[0]
		if ev.Kind != kind || ev.Skill != skill || ev.Layer != layer || ev.File != file || ev.Surface != surface ||
			ev.User != "alice" || ev.Thread != "t1" || !slices.Equal(ev.Teams, []string{"eng"}) || ev.Version == "" {
			t.Fatalf("event %+v, want one %s of %s (%s) %q through %s", ev, kind, skill, layer, file, surface)
		}
		// Every way names the same version of a skill.
		if digest[skill] == "" {
			digest[skill] = ev.Version
		} else if ev.Version != digest[skill] {
			t.Fatalf("version %s of %s, another way named %s", ev.Version, skill, digest[skill])
		}
	}
	for _, tc := range []struct{ skill, dir, layer, file string }{
		{"mine", "notes/mine", "user", "ref.md"},
		{"deploy", "ops/deploy", "team:eng", "scripts/run.sh"},
		{"pdf", "docs/pdf", "shared", "scripts/x.py"},
	} {
		t.Run(tc.skill, func(t *testing.T) {
			if text, isErr := callTool(t, s, "load_skill", map[string]any{"skill": tc.skill}); isErr {
				t.Fatal(text)
			}
			want(t, usage.Activation, tc.skill, tc.layer, "", skilluse.MCP)
			if text, isErr := callTool(t, s, "read_skill_file", map[string]any{"skill": tc.skill, "path": tc.file}); isErr {
				t.Fatal(text)
			}
			want(t, usage.FileRead, tc.skill, tc.layer, tc.file, skilluse.MCP)
			if _, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), s, "skills/get", &getParams{URI: "skill://" + tc.dir + "/SKILL.md"}); err != nil {
				t.Fatal(err)
			}
			want(t, usage.Activation, tc.skill, tc.layer, "", skilluse.MCP)
			if _, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://" + tc.dir + "/SKILL.md"}); err != nil {
				t.Fatal(err)
			}
			want(t, usage.Activation, tc.skill, tc.layer, "", skilluse.MCP)
			if _, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://" + tc.dir + "/" + tc.file}); err != nil {
				t.Fatal(err)
			}
			want(t, usage.FileRead, tc.skill, tc.layer, tc.file, skilluse.MCP)
			if text, isErr := callTool(t, s, "read_file", map[string]any{"path": "/skills/" + tc.dir + "/SKILL.md"}); isErr {
				t.Fatal(text)
			}
			want(t, usage.Activation, tc.skill, tc.layer, "", skilluse.VFS)
		})
	}
	t.Run("searches", func(t *testing.T) {
		callTool(t, s, "search_skills", map[string]any{"query": "extract tables from pdf"})
		got := rec.take()
		if len(got) != 1 || got[0].Kind != usage.Search || got[0].Query != "extract tables from pdf" || !slices.Contains(got[0].Results, "pdf") || got[0].Surface != skilluse.MCP {
			t.Fatalf("search_skills recorded %+v", got)
		}
		callTool(t, s, "list_skills", map[string]any{"query": "deploy the service"})
		got = rec.take()
		if len(got) != 1 || got[0].Kind != usage.Search || got[0].Query != "deploy the service" || !slices.Contains(got[0].Results, "deploy") {
			t.Fatalf("list_skills with a query recorded %+v", got)
		}
		callTool(t, s, "list_skills", nil)
		if _, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://docs/pdf/nope.py"}); err == nil {
			t.Fatal("read a missing file")
		}
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("a listing and a failed read recorded %+v", got)
		}
	})
}

// TestUsageSpansOverMCP: the span of an MCP message that serves a skill
// carries the skill's attributes and an activation event; a listing's
// carries the skills offered.
func TestUsageSpansOverMCP(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	e := startUsage(t, usageLibrary(), usage.Nop, mcpserver.WithTracerProvider(tp))
	s := e.connect(identity("alice", "t1"), nil)
	callTool(t, s, "load_skill", map[string]any{"skill": "pdf"})
	listAll(t, s)
	must(t, tp.ForceFlush(t.Context()))
	var load, list sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		for _, a := range sp.Attributes() {
			if a.Key == "gen_ai.tool.name" && a.Value.AsString() == "load_skill" {
				load = sp
			}
		}
		if sp.Name() == "skills/list" {
			list = sp
		}
	}
	if load == nil || list == nil {
		t.Fatal("no load_skill or skills/list span")
	}
	attrs := func(sp sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
		m := map[attribute.Key]attribute.Value{}
		for _, a := range sp.Attributes() {
			m[a.Key] = a.Value
		}
		return m
	}
	a := attrs(load)
	if a[skilluse.AttrSkillName].AsString() != "pdf" || a[skilluse.AttrSkillLayer].AsString() != "shared" || a[skilluse.AttrSkillVersion].AsString() == "" || a[skilluse.AttrSurface].AsString() != "mcp" {
		t.Fatalf("load_skill's span: %v", a)
	}
	if !slices.ContainsFunc(load.Events(), func(ev sdktrace.Event) bool { return ev.Name == skilluse.EventActivated }) {
		t.Fatalf("load_skill's span events: %+v", load.Events())
	}
	offered := attrs(list)[skilluse.AttrOffered].AsStringSlice()
	if !slices.Contains(offered, "pdf@"+a[skilluse.AttrSkillVersion].AsString()) {
		t.Fatalf("skills/list's span offered %v", offered)
	}
}
