package logtest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/skillsvc/skillsvc/internal/logtest"
)

func TestBufferConcurrentWriters(t *testing.T) {
	for _, writers := range []int{1, 8} {
		t.Run(fmt.Sprint(writers, " writers"), func(t *testing.T) {
			var b logtest.Buffer
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for range 100 {
						fmt.Fprintln(&b, "line")
						_ = b.String()
					}
				})
			}
			wg.Wait()
			if n := strings.Count(b.String(), "line\n"); n != writers*100 {
				t.Errorf("%d lines, want %d", n, writers*100)
			}
		})
	}
}

// Wait wakes on the write that satisfies it, and gives up when its context
// ends.
func TestBufferWait(t *testing.T) {
	var b logtest.Buffer
	go func() {
		b.Write([]byte("one\n"))
		b.Write([]byte("two\n"))
	}()
	if !b.Wait(t.Context(), func(log string) bool { return strings.Contains(log, "two") }) {
		t.Fatal("Wait missed the write")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if b.Wait(ctx, func(string) bool { return false }) {
		t.Fatal("Wait reported a condition never met")
	}
}
