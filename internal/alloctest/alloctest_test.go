package alloctest_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/alloctest"
)

var sink []byte

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		min, max uint64
	}{
		{"nothing", 0, 0, 64 << 10},
		{"one MiB", 1 << 20, 1 << 20, 2 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := alloctest.Bytes(func() {
				if tc.size > 0 {
					sink = make([]byte, tc.size)
				}
			})
			if got < tc.min || got > tc.max {
				t.Errorf("Bytes = %d, want %d to %d", got, tc.min, tc.max)
			}
		})
	}
}
