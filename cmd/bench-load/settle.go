package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
)

// MinIO keeps working for a while after a large upload (its scanner, the
// metadata it writes behind): up to a core of the two a row is measured on;
// so does a new skillsvc after its first listings (the background scans of
// skills uploaded out of band, --library.scan). settle waits, at most
// settleMax, until a process's CPU use stays under settleQuiet of a core
// for settleWindow, so a row measures the calls and not that housekeeping;
// it logs what it found.
const (
	settleWindow = 2 * time.Second
	settleQuiet  = 0.10
	settleMax    = 2 * time.Minute
)

func (b *bench) settleMinIO(ctx context.Context) {
	b.settle(ctx, "MinIO", "seeding", b.srv.minio.PID())
}

func (b *bench) settle(ctx context.Context, what, after string, pid int) {
	if pid == 0 {
		return
	}
	start := time.Now()
	last, err := cpuTime(pid)
	if err != nil {
		b.logf("%s's CPU is not readable (%v): measuring without waiting for it to settle", what, err)
		return
	}
	t := time.NewTicker(settleWindow)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := cpuTime(pid)
		if err != nil {
			return
		}
		used := float64(now-last) / float64(settleWindow)
		last = now
		switch {
		case used < settleQuiet:
			b.logf("%s settled after %s in %s", what, after, loadbench.Duration(time.Since(start)))
			return
		case time.Since(start) >= settleMax:
			b.logf("%s still uses %.0f%% of a core %s after %s: measuring anyway", what, 100*used, loadbench.Duration(time.Since(start)), after)
			return
		}
	}
}

// cpuTime is the user and system CPU time of process pid so far, from
// /proc (Linux, where bench-load's figures are taken).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, fields[11], fields[12])
	}
	// Clock ticks of USER_HZ, 100 a second on every Linux port Go runs on.
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// processCPU is the CPU time of the processes a row runs on, over one
// window; a negative value is one that could not be read.
type processCPU struct {
	skillsvc, minio, bench time.Duration
	window                 time.Duration
}

// cpuPids are the processes whose CPU a row reads, in processCPU's order.
type cpuPids struct{ skillsvc, minio, bench int }

func (b *bench) cpuPids(s *skillsvc) cpuPids {
	return cpuPids{skillsvc: s.proc.Pid(), minio: b.srv.minio.PID(), bench: os.Getpid()}
}

// readCPU reads each process's CPU time so far (-1 where it cannot).
func readCPU(p cpuPids) processCPU {
	read := func(pid int) time.Duration {
		if pid == 0 {
			return -1
		}
		d, err := cpuTime(pid)
		if err != nil {
			return -1
		}
		return d
	}
	return processCPU{skillsvc: read(p.skillsvc), minio: read(p.minio), bench: read(p.bench)}
}

// since is the CPU used from before to c, over window.
func (c processCPU) since(before processCPU, window time.Duration) processCPU {
	sub := func(now, was time.Duration) time.Duration {
		if now < 0 || was < 0 {
			return -1
		}
		return now - was
	}
	return processCPU{
		skillsvc: sub(c.skillsvc, before.skillsvc),
		minio:    sub(c.minio, before.minio),
		bench:    sub(c.bench, before.bench),
		window:   window,
	}
}

// String is each process's CPU in cores over the window.
func (c processCPU) String() string {
	cores := func(d time.Duration) string {
		if d < 0 || c.window <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", float64(d)/float64(c.window))
	}
	return fmt.Sprintf("cores: skillsvc %s, MinIO %s, bench-load %s", cores(c.skillsvc), cores(c.minio), cores(c.bench))
}
