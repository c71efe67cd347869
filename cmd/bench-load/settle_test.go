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
