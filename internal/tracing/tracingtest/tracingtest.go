// Package tracingtest records ended spans for tests and waits for one to
// end: a gRPC server span ends after its answer is sent, so a test that
// reads spans right after a call races the server's goroutine.
package tracingtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Recorder keeps the ended spans and says when one more has ended.
type Recorder struct {
	*tracetest.SpanRecorder
	ended chan struct{}
}

// NewRecorder returns an empty Recorder; register it with
// sdktrace.WithSpanProcessor.
func NewRecorder() *Recorder {
	return &Recorder{SpanRecorder: tracetest.NewSpanRecorder(), ended: make(chan struct{}, 1)}
}

// OnEnd records s and wakes a waiter.
func (r *Recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.SpanRecorder.OnEnd(s)
	select {
	case r.ended <- struct{}{}:
	default:
	}
}

// WaitFor returns the first ended span for which match holds, waiting for
// it to end. The timeout only bounds a failing test; a passing one returns
// as soon as the span has ended.
func (r *Recorder) WaitFor(t testing.TB, what string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		for _, s := range r.Ended() {
			if match(s) {
				return s
			}
		}
		select {
		case <-r.ended:
		case <-timeout:
			t.Fatalf("no %s span ended; spans: %s", what, r.Describe())
		}
	}
}

// WaitForName is WaitFor of the first span named name.
func (r *Recorder) WaitForName(t testing.TB, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	return r.WaitFor(t, name, func(s sdktrace.ReadOnlySpan) bool { return s.Name() == name })
}

// Describe lists the ended spans, one per line, for a failure message.
func (r *Recorder) Describe() string {
	var b strings.Builder
	for _, s := range r.Ended() {
		fmt.Fprintf(&b, "\n  %s %s parent %s: %s", s.SpanContext().TraceID(), s.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
	}
	return b.String()
}
