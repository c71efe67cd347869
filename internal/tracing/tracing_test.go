package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/tracing"
)

func newProvider(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

// TestChild: a child span exists only under a span, on that span's
// provider; without one the context is returned as it is.
func TestChild(t *testing.T) {
	tp, rec := newProvider(t)
	ctx := context.Background()
	got, span := tracing.Child(ctx, "orphan")
	if got != ctx || span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("Child without a parent started a span (recording %v) or changed the context", span.IsRecording())
	}
	span.End()

	ctx, parent := tp.Tracer("test").Start(ctx, "parent")
	cctx, child := tracing.Child(ctx, "child")
	if trace.SpanFromContext(cctx) != child {
		t.Error("the child's context does not carry the child")
	}
	child.End()
	parent.End()
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "child" {
		t.Fatalf("ended spans %d, want child then parent", len(ended))
	}
	if ended[0].Parent().SpanID() != parent.SpanContext().SpanID() || ended[0].SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Error("the child is not in its parent's trace under it")
	}
	if ended[0].InstrumentationScope().Name != tracing.Scope {
		t.Errorf("scope %q, want %q", ended[0].InstrumentationScope().Name, tracing.Scope)
	}
}

var errExpected = errors.New("not found")

// TestEnd: failures mark the span, expected outcomes and cancellations
// do not.
func TestEnd(t *testing.T) {
	tp, rec := newProvider(t)
	expected := func(err error) bool { return errors.Is(err, errExpected) }
	for _, tc := range []struct {
		name   string
		err    error
		status codes.Code
	}{
		{"ok", nil, codes.Unset},
		{"failure", errors.New("boom"), codes.Error},
		{"expected", errExpected, codes.Unset},
		{"cancelled", context.Canceled, codes.Unset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, span := tp.Tracer("test").Start(context.Background(), tc.name)
			tracing.End(span, tc.err, expected)
			ended := rec.Ended()
			got := ended[len(ended)-1]
			if got.Name() != tc.name || got.Status().Code != tc.status {
				t.Errorf("span %q status %v, want %v", got.Name(), got.Status().Code, tc.status)
			}
			outcome := false
			for _, a := range got.Attributes() {
				outcome = outcome || a.Key == "skillsvc.outcome"
			}
			if want := tc.err != nil && tc.status == codes.Unset; outcome != want {
				t.Errorf("skillsvc.outcome recorded %v, want %v", outcome, want)
			}
		})
	}
}

type key struct{}

// TestDetached: work detached from a request keeps its span and nothing
// else of its context.
func TestDetached(t *testing.T) {
	tp, _ := newProvider(t)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx, span := tp.Tracer("test").Start(ctx, "request")
	defer span.End()
	cancel()
	d := tracing.Detached(ctx)
	if d.Err() != nil || d.Value(key{}) != nil {
		t.Errorf("detached context: err %v, value %v; want neither", d.Err(), d.Value(key{}))
	}
	if trace.SpanFromContext(d) != span {
		t.Error("detached context lost the span")
	}
}

// TestLogHandler: a record logged in a span carries its trace and span
// IDs, through WithAttrs and WithGroup; one logged outside carries none.
func TestLogHandler(t *testing.T) {
	tp, _ := newProvider(t)
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	ctx, span := tp.Tracer("test").Start(context.Background(), "request")
	defer span.End()
	sc := span.SpanContext()

	line := func(f func()) map[string]any {
		t.Helper()
		buf.Reset()
		f()
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", buf.String(), err)
		}
		return m
	}
	if m := line(func() { log.InfoContext(ctx, "traced", "k", "v") }); m[tracing.TraceIDKey] != sc.TraceID().String() || m[tracing.SpanIDKey] != sc.SpanID().String() || m["component"] != "test" || m["k"] != "v" {
		t.Errorf("traced line = %v, want trace_id %s and span_id %s with its own attributes", m, sc.TraceID(), sc.SpanID())
	}
	if m := line(func() { log.WithGroup("g").InfoContext(ctx, "grouped", "k", "v") }); m["g"].(map[string]any)[tracing.TraceIDKey] != sc.TraceID().String() {
		t.Errorf("grouped line = %v, want the trace ID", m)
	}
	if m := line(func() { log.Info("untraced") }); m[tracing.TraceIDKey] != nil || m[tracing.SpanIDKey] != nil {
		t.Errorf("untraced line = %v, want no trace or span ID", m)
	}
	if tracing.LogHandler(log.Handler()) != log.Handler() {
		t.Error("LogHandler wrapped its own handler again")
	}
}
