package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestCPUTime reads this process's CPU time from /proc (the right fields, in
// the right unit): after a busy loop has spent a tenth of a second, it
// agrees with what getrusage says this process spent, to within a clock
// tick or two. Both are CPU time, which a loaded machine only spreads over
// more wall time.
func TestCPUTime(t *testing.T) {
	rusage := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	x := 0
	for rusage() < 100*time.Millisecond {
		for i := range 1_000_000 {
			x += i
		}
	}
	low := rusage()
	got, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	high := rusage()
	// /proc counts in ticks of 10ms; allow two either side.
	const tick = 10 * time.Millisecond
	if got < low-2*tick || got > high+2*tick {
		t.Fatalf("cpuTime = %v, want between %v and %v as getrusage says (%d)", got, low, high, x)
	}
}

// TestProcessCPU: a row's CPU is each process's growth over the window, a
// process that could not be read stays unread, and the table's column is
// skillsvc's CPU over the calls.
func TestProcessCPU(t *testing.T) {
	before := processCPU{skillsvc: 2 * time.Second, minio: -1, bench: time.Second}
	after := processCPU{skillsvc: 5 * time.Second, minio: 4 * time.Second, bench: 2 * time.Second}
	got := after.since(before, 2*time.Second)
	want := processCPU{skillsvc: 3 * time.Second, minio: -1, bench: time.Second, window: 2 * time.Second}
	if got != want {
		t.Fatalf("since = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "cores: skillsvc 1.50, MinIO n/a, bench-load 0.50" {
		t.Errorf("String = %q", s)
	}
	r := tenantRow{name: "random users, GetSkill", calls: 30_000, rate: 6_000, cpu: got}
	if c := r.cells(); c[3] != "100 µs" {
		t.Errorf("CPU per call cell = %q, want 100 µs (3 s over 30,000 calls); row %q", c[3], c)
	}
	r.cpu.skillsvc = -1
	if c := r.cells(); c[3] != "n/a" {
		t.Errorf("CPU per call cell without a reading = %q, want n/a", c[3])
	}
}
