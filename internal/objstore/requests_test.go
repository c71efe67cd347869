package objstore_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestAcceptanceWithRequestCounting proves the counting wrapper changes no
// behaviour, with and without a counter in the context.
func TestAcceptanceWithRequestCounting(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket {
		return objstore.WrapWithRequestCounting(memory.New())
	})
}

// TestRequestCounts: each request is counted by kind in the counter of the
// context it was made with (a context derived from it, even without its
// cancellation, counts too), whatever its outcome; a context without one
// counts nowhere, and an inner counter takes its own requests only.
func TestRequestCounts(t *testing.T) {
	b := objstore.WrapWithRequestCounting(memory.New())
	ctx, reqs := objstore.CountRequests(context.Background())
	if _, err := b.Put(ctx, "k", strings.NewReader("v"), 1, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := b.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, rc)
	rc.Close()
	if rc, _, err := b.GetRange(context.WithoutCancel(ctx), "k", 0, 1); err == nil {
		rc.Close()
	}
	_, _ = b.Stat(ctx, "missing") // not found, but a round trip all the same
	_, _ = b.List(ctx, objstore.ListOptions{})
	_ = b.Delete(ctx, "k")

	inner, innerReqs := objstore.CountRequests(ctx)
	_, _ = b.List(inner, objstore.ListOptions{})
	_, _ = b.List(context.Background(), objstore.ListOptions{})

	if got, want := reqs.Counts(), (objstore.RequestCounts{Reads: 3, Lists: 1, Writes: 2}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if got, want := innerReqs.Counts(), (objstore.RequestCounts{Lists: 1}); got != want {
		t.Errorf("inner counts %+v, want %+v", got, want)
	}
	if got := (*objstore.Requests)(nil).Counts(); got != (objstore.RequestCounts{}) {
		t.Errorf("nil counts %+v", got)
	}
}
