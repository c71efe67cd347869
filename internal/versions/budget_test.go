package versions

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// TestBudget: takes beyond the budget wait, then are RESOURCE_EXHAUSTED
// with a retry delay; a release lets the next through; one request larger
// than the whole budget runs alone.
func TestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := NewBudget(10, 2*time.Second)
		a := b.Reserve()
		if err := a.Take(ctx, 8); err != nil {
			t.Fatal(err)
		}
		c := b.Reserve()
		start := time.Now()
		err := c.Take(ctx, 5)
		if errkind.Of(err) != errkind.ResourceExhausted || time.Since(start) != 2*time.Second {
			t.Fatalf("over the budget: %v after %v", err, time.Since(start))
		}
		if d, ok := errkind.RetryDelay(err); !ok || d <= 0 {
			t.Fatalf("no retry delay in %v", err)
		}
		done := make(chan error)
		go func() { done <- c.Take(ctx, 5) }()
		time.Sleep(time.Second)
		a.Release()
		if err := <-done; err != nil {
			t.Fatalf("after a release: %v", err)
		}
		c.Release()
		big := b.Reserve()
		if err := big.Take(ctx, 1<<30); err != nil {
			t.Fatalf("a request over the whole budget: %v", err)
		}
		if err := b.Reserve().Take(ctx, 1); errkind.Of(err) != errkind.ResourceExhausted {
			t.Fatalf("beside it: %v", err)
		}
		big.Release()
	})
}
