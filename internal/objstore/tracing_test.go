package objstore_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// spanned runs every call of b inside a span of tp, as a traced request
// would.
type spanned struct {
	b  objstore.Bucket
	tp trace.TracerProvider
}

func (s spanned) ctx(ctx context.Context) context.Context {
	ctx, span := s.tp.Tracer("test").Start(ctx, "request")
	span.End() // the span only needs to be in the context
	return ctx
}

func (s spanned) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	return s.b.Get(s.ctx(ctx), key)
}

func (s spanned) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, objstore.Attributes, error) {
	return s.b.GetRange(s.ctx(ctx), key, off, n)
}

func (s spanned) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	return s.b.Stat(s.ctx(ctx), key)
}

func (s spanned) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	return s.b.Put(s.ctx(ctx), key, r, size, opts)
}

func (s spanned) Delete(ctx context.Context, key string) error { return s.b.Delete(s.ctx(ctx), key) }

func (s spanned) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	return s.b.List(s.ctx(ctx), opts)
}

// TestAcceptanceWithTracing proves the tracing wrapper changes no
// behaviour, with every call traced.
func TestAcceptanceWithTracing(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	objstoretest.AcceptanceTest(t, func(*testing.T) objstore.Bucket {
		return spanned{objstore.WrapWithTracing(memory.New()), tp}
	})
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes() {
		m[a.Key] = a.Value
	}
	return m
}

// TestTracingSpans: each operation of a traced call is a client span under
// the caller's, with its key or prefix; a read's span lasts until its body
// is closed; not found is no error, a backend failure is; calls outside a
// span are not traced.
func TestTracingSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mem := objstoretest.NewBucket(t, map[string]string{"lib/a.md": "hello", "lib/b.md": "world"})
	faulty := objstoretest.NewFaulty(mem)
	b := objstore.WrapWithTracing(faulty)

	if _, err := b.Stat(context.Background(), "lib/a.md"); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans for a call outside any span, want none", n)
	}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	defer parent.End()
	rc, _, err := b.Get(ctx, "lib/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("the read's span ended before its body was read")
	}
	if _, err := io.ReadAll(rc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if _, err := b.List(ctx, objstore.ListOptions{Prefix: "lib/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stat(ctx, "lib/missing.md"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Stat of a missing key = %v", err)
	}
	faulty.Fail(objstore.OpPut, "lib/", objstore.ErrUnavailable)
	if _, err := b.Put(ctx, "lib/c.md", strings.NewReader("c"), 1, objstore.PutOptions{IfNoneMatch: true}); !errors.Is(err, objstore.ErrUnavailable) {
		t.Fatalf("Put = %v, want the injected failure", err)
	}

	want := []struct {
		name   string
		attrs  map[attribute.Key]attribute.Value
		status codes.Code
	}{
		{"objstore.get", map[attribute.Key]attribute.Value{"objstore.key": attribute.StringValue("lib/a.md"), "objstore.size": attribute.Int64Value(5)}, codes.Unset},
		{"objstore.list", map[attribute.Key]attribute.Value{"objstore.prefix": attribute.StringValue("lib/"), "objstore.objects": attribute.IntValue(2)}, codes.Unset},
		{"objstore.stat", map[attribute.Key]attribute.Value{"objstore.key": attribute.StringValue("lib/missing.md")}, codes.Unset},
		{"objstore.put", map[attribute.Key]attribute.Value{"objstore.key": attribute.StringValue("lib/c.md"), "objstore.if_none_match": attribute.BoolValue(true)}, codes.Error},
	}
	ended := rec.Ended()
	if len(ended) != len(want) {
		t.Fatalf("%d spans, want %d", len(ended), len(want))
	}
	for i, w := range want {
		s := ended[i]
		if s.Name() != w.name || s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %d = %q (kind %v, parent %v), want client span %q under the request", i, s.Name(), s.SpanKind(), s.Parent().SpanID(), w.name)
		}
		got := attrs(s)
		for k, v := range w.attrs {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", w.name, k, got[k].Emit(), v.Emit())
			}
		}
		if s.Status().Code != w.status {
			t.Errorf("%s: status %v, want %v", w.name, s.Status().Code, w.status)
		}
	}
}
