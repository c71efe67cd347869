package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestCPUTime reads this process's CPU time from /proc: it grows by what a
// busy loop spends, no faster than the machine's cores could (read from the
// right fields, in the right unit).
func TestCPUTime(t *testing.T) {
	start := time.Now()
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for time.Since(start) < 20*time.Second {
		for i := range 1_000_000 {
			x += i
		}
		now, err := cpuTime(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if grew := now - before; grew >= 50*time.Millisecond {
			if limit := time.Duration(runtime.NumCPU())*time.Since(start) + 20*time.Millisecond; grew > limit {
				t.Fatalf("CPU time grew by %v in %v of wall time on %d cores", grew, time.Since(start), runtime.NumCPU())
			}
			return
		}
	}
	t.Fatalf("CPU time grew by less than 50ms over 20s of a busy loop (%d)", x)
}
