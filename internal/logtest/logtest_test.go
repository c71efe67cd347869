package logtest_test

import (
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
