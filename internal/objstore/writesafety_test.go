package objstore_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// ignoring drops the conditions of every write, as s3rver and Garage do.
type ignoring struct{ objstore.Bucket }

func (b ignoring) Put(ctx context.Context, key string, r io.Reader, size int64, _ objstore.PutOptions) (objstore.Attributes, error) {
	return b.Bucket.Put(ctx, key, r, size, objstore.PutOptions{})
}

// TestCheckWriteSafety: a store that honours conditions passes and keeps
// nothing; one that ignores them is named for each condition it ignored,
// and still keeps nothing; a store that fails otherwise gives its own
// error, not a verdict.
func TestCheckWriteSafety(t *testing.T) {
	const key = "_skillsvc/write-probe/k"
	t.Run("honoured", func(t *testing.T) {
		b := memory.New()
		if err := objstore.CheckWriteSafety(t.Context(), b, key); err != nil {
			t.Fatalf("CheckWriteSafety = %v, want nil", err)
		}
		assertEmpty(t, b)
	})
	t.Run("ignored", func(t *testing.T) {
		b := memory.New()
		err := objstore.CheckWriteSafety(t.Context(), ignoring{b}, key)
		var unsafe *objstore.UnsafeError
		if !errors.As(err, &unsafe) || !errors.Is(err, objstore.ErrUnsafeStore) || errkind.Of(err) != errkind.FailedPrecondition {
			t.Fatalf("CheckWriteSafety = %v, want an UnsafeError", err)
		}
		for _, want := range []string{"concurrent creates", "If-None-Match: *", "If-Match"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
		assertEmpty(t, b)
	})
	t.Run("failing", func(t *testing.T) {
		b := objstoretest.NewFaulty(memory.New())
		b.Fail(objstore.OpPut, "", objstore.ErrUnavailable)
		err := objstore.CheckWriteSafety(t.Context(), b, key)
		var unsafe *objstore.UnsafeError
		if !errors.Is(err, objstore.ErrUnavailable) || errors.As(err, &unsafe) {
			t.Fatalf("CheckWriteSafety = %v, want ErrUnavailable and no verdict", err)
		}
	})
}

func assertEmpty(t *testing.T, b objstore.Bucket) {
	t.Helper()
	page, err := b.List(t.Context(), objstore.ListOptions{})
	if err != nil || len(page.Objects) != 0 {
		t.Errorf("after the probe: %v, %v; want no objects left", page.Objects, err)
	}
}

// TestGuarded: while read-only every write is refused FAILED_PRECONDITION
// with the reason and reads pass; writes are taken again once cleared.
func TestGuarded(t *testing.T) {
	b := memory.New()
	g := objstore.NewGuarded(b)
	objstoretest.Put(t, g, "a", "x")
	g.SetReadOnly(&objstore.UnsafeError{Ignored: []string{"If-Match"}})
	if _, err := g.Put(t.Context(), "b", strings.NewReader("y"), 1, objstore.PutOptions{}); errkind.Of(err) != errkind.FailedPrecondition || !errors.Is(err, objstore.ErrUnsafeStore) {
		t.Errorf("Put while read-only = %v, want FAILED_PRECONDITION", err)
	}
	if err := g.Delete(t.Context(), "a"); errkind.Of(err) != errkind.FailedPrecondition {
		t.Errorf("Delete while read-only = %v, want FAILED_PRECONDITION", err)
	}
	if got := objstoretest.Get(t, g, "a"); got != "x" {
		t.Errorf("Get while read-only = %q", got)
	}
	g.SetReadOnly(nil)
	objstoretest.Put(t, g, "b", "y")
}
