package libindex

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/tracing"
)

// Span attributes of index loads and revalidations.
const (
	attrLibrary = attribute.Key("skillsvc.library")            // the layer's tag: a user, or SharedTag
	attrObjects = attribute.Key("skillsvc.library.objects")    // objects the index holds
	attrGen     = attribute.Key("skillsvc.library.gen")        // the index's generation
	attrHeads   = attribute.Key("skillsvc.library.heads_read") // SKILL.md heads the previous index lacked
	attrDigests = attribute.Key("skillsvc.library.digests_computed")
	attrCarried = attribute.Key("skillsvc.library.digests_carried")
)

// startSpan starts the span of index work on l under the caller's span
// (none without one: the warm path, served from memory, has no span).
func startSpan(ctx context.Context, name string, l Layer) (context.Context, trace.Span) {
	return tracing.Child(ctx, name, trace.WithAttributes(attrLibrary.String(l.Tag)))
}

// endSpan ends span with what the work found.
func endSpan(span trace.Span, x *Index, err error) {
	if x != nil && span.IsRecording() {
		span.SetAttributes(attrObjects.Int(len(x.Objs)), attrGen.String(strconv.FormatUint(x.Gen, 16)))
	}
	tracing.End(span, err, nil)
}

// traced runs f (a load) in a span named name.
func traced(ctx context.Context, name string, l Layer, f func(context.Context, Layer) (*Index, error)) (*Index, error) {
	ctx, span := startSpan(ctx, name, l)
	x, err := f(ctx, l)
	endSpan(span, x, err)
	return x, err
}

// noteRevalidation records on the revalidation's span what it had to read:
// the heads and digests the previous index did not hold, and the digests
// carried over from it.
func noteRevalidation(ctx context.Context, heads, digests, carried int) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attrHeads.Int(heads), attrDigests.Int(digests), attrCarried.Int(carried))
	}
}
