package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The benchmark runs end to end on a small library against the real
// binary: every phase completes with every answer checked against the
// seeded files, skills/list is followed over several pages, and requests
// refused by a per-user rate limit lowered for the test are counted and
// retried rather than failed.
func TestSmallRun(t *testing.T) {
	testserver.Integration(t, "MinIO, redis-server and the skillsvc binary")
	o, err := parseOptions([]string{
		"-categories=2", "-skills-per-category=5", "-latency=1ms", "-gets=10", "-reads=10", "-rate=1000",
		"-skillsvc-flag=--mcp.skills-page-size=4", "-skillsvc-flag=--limits.rate=2", "-skillsvc-flag=--limits.burst=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	cl := &loadbench.Cleanups{}
	t.Cleanup(cl.Run)
	var log bytes.Buffer
	b, err := runBench(t.Context(), o, cl, &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	want := []string{
		"1. cold, empty Redis: initialize", "1. cold, empty Redis: skills/list, all pages",
		"2. new process, warm Redis: initialize", "2. new process, warm Redis: skills/list, all pages",
		"3. warm: skills/list, all pages", "4. skills/get", "4. resources/read",
	}
	if len(b.phases) != len(want) {
		t.Fatalf("%d phases, want %d", len(b.phases), len(want))
	}
	refusals := 0
	for i, p := range b.phases {
		if p.name != want[i] || p.failures != 0 {
			t.Errorf("phase %d: %q with %d failures %v, want %q without", i, p.name, p.failures, p.messages, want[i])
		}
		if strings.HasSuffix(p.name, "all pages") && p.requests != "3 skills/list pages" {
			t.Errorf("%s: %s, want 3 pages of 4 skills", p.name, p.requests)
		}
		refusals += p.refusals
	}
	if refusals == 0 {
		t.Error("no request was refused at 2 units/s (20 requests from memory a second) with a burst of 1: the retry path went untested")
	}
	if cold := b.phases[0].storage.Total() + b.phases[1].storage.Total(); cold == 0 {
		t.Error("the cold phases made no storage requests: the proxy is not in the path")
	}
	var out bytes.Buffer
	b.print(&out)
	for _, s := range append(want, "Machine: ", "2025-11-25", "pages of 4 skills") {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}
