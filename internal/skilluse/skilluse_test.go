package skilluse_test

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/usage"
)

type events []usage.Event

func (e *events) Record(_ context.Context, ev usage.Event) { *e = append(*e, ev) }

// TestRecorder: a SKILL.md read is an activation and any other file a
// file read; a search names its first ten results; the span offers the
// first fifty skills and counts them all; no event without a recorder.
func TestRecorder(t *testing.T) {
	id, err := mounts.Default().Identify(mounts.Identity{User: "alice", Thread: "t1", Teams: "eng,ops"})
	if err != nil {
		t.Fatal(err)
	}
	var got events
	r := skilluse.For(&got)
	sk := skilluse.Skill{Name: "pdf", Layer: "shared", Version: "sha256:1"}
	spans := tracetest.NewSpanRecorder()
	ctx, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("t").Start(t.Context(), "call")
	r.File(ctx, skilluse.VFS, id, sk, "SKILL.md")
	r.File(ctx, skilluse.VFS, id, sk, "scripts/x.py")
	var many []skilluse.Skill
	for i := range 70 {
		many = append(many, skilluse.Skill{Name: fmt.Sprint("s", i), Version: "v"})
	}
	r.Searched(ctx, skilluse.MCP, id, "a task", many, 80)
	span.End()
	if len(got) != 3 || got[0].Kind != usage.Activation || got[0].File != "" || got[1].Kind != usage.FileRead || got[1].File != "scripts/x.py" ||
		got[0].User != "alice" || got[0].Thread != "t1" || len(got[0].Teams) != 2 || got[0].Surface != "vfs" {
		t.Fatalf("events %+v", got)
	}
	if s := got[2]; s.Kind != usage.Search || s.Query != "a task" || len(s.Results) != 10 || s.Results[9] != "s9" || s.Skill != "" {
		t.Fatalf("search event %+v", s)
	}
	ended := spans.Ended()[0]
	var events int
	for _, ev := range ended.Events() {
		if ev.Name == skilluse.EventActivated {
			events++
		}
	}
	for _, a := range ended.Attributes() {
		switch a.Key {
		case skilluse.AttrOffered:
			if n := len(a.Value.AsStringSlice()); n != skilluse.MaxOffered || a.Value.AsStringSlice()[0] != "s0@v" {
				t.Fatalf("offered %d: %v", n, a.Value.AsStringSlice())
			}
		case skilluse.AttrOfferedCount:
			if a.Value.AsInt64() != 80 {
				t.Fatalf("offered count %d", a.Value.AsInt64())
			}
		}
	}
	if events != 1 {
		t.Fatalf("%d activation events, want 1", events)
	}
	got = nil
	skilluse.For(usage.Nop).File(ctx, skilluse.VFS, id, sk, "SKILL.md")
	skilluse.For(nil).File(ctx, skilluse.VFS, id, sk, "SKILL.md")
	if len(got) != 0 {
		t.Fatal(got)
	}
}
