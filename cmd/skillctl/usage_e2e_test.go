package main

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestUsageEndToEnd: alice activates her skills with skillctl show (gRPC
// GetSkill) on one replica, which flushes the counts to Redis as it stops;
// against a second replica, usage top and unused list them (--json and as
// tables with the chart, in Unicode and ASCII), versions and searches and
// daily run, and the organization's usage is refused to her.
func TestUsageEndToEnd(t *testing.T) {
	red := testserver.SharedRedis(t)
	srv, bucket := putLibrary(t, e2eLibrary)
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--listen=127.0.0.1:0", "--http.listen=", "--cache.redis.addrs=" + red.Addr, "--cache.redis.key-prefix=ctl-" + rand.Text() + ":"}, srv.S3Flags(bucket)...)
	start := func() *testserver.Skillsvc {
		s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{Bin: bin, Args: args, Env: srv.SkillsvcEnv(), Dir: t.TempDir()}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		return s
	}
	first := start()
	env := map[string]string{"SKILLCTL_TARGET": first.Addrs["serving"], "SKILLCTL_USER": "alice"}
	for _, name := range []string{"pdf", "pdf", "pdf"} {
		mustRun(t, env, "show", name)
	}
	first.Stop() // SIGTERM: the replica flushes its counts

	env["SKILLCTL_TARGET"] = start().Addrs["serving"]
	var top struct {
		From, To string
		Skills   []struct {
			Name        string
			Layer       string
			Activations string // int64 in the protobuf JSON mapping
		}
		Unused []struct {
			Name    string
			AgeDays string
		}
	}
	out := mustRun(t, env, "usage", "top", "--json", "--days", "7")
	if err := json.Unmarshal([]byte(out.stdout), &top); err != nil {
		t.Fatalf("%v\n%s", err, out.stdout)
	}
	if len(top.Skills) != 1 || top.Skills[0].Name != "pdf" || top.Skills[0].Activations != "3" || top.Skills[0].Layer != "user" {
		t.Fatalf("usage top --json: %s", out.stdout)
	}
	out = mustRun(t, env, "usage", "unused", "--json")
	top.Unused = nil
	if err := json.Unmarshal([]byte(out.stdout), &top); err != nil {
		t.Fatalf("%v\n%s", err, out.stdout)
	}
	if len(top.Unused) != 1 || top.Unused[0].Name != "notes" {
		t.Fatalf("usage unused --json: %s", out.stdout)
	}

	// Tables, with the chart: Unicode in a UTF-8 locale, else ASCII.
	env["LANG"] = "C.UTF-8"
	text := mustRun(t, env, "usage", "top", "--days", "3").stdout
	if !strings.Contains(text, "pdf") || !strings.ContainsAny(text, "█") {
		t.Errorf("usage top:\n%s", text)
	}
	for top, args := range map[string][]string{"@": {"usage", "top", "--ascii"}, "#": {"usage", "daily", "--days", "3"}} {
		env["LANG"] = "C"
		text = mustRun(t, env, args...).stdout
		if strings.ContainsFunc(text, func(r rune) bool { return r > 0x7f }) || !strings.Contains(text, top) {
			t.Errorf("%s: not an ASCII chart with today's activations at the top:\n%s", strings.Join(args, " "), text)
		}
	}
	if text := mustRun(t, env, "usage", "unused").stdout; !strings.Contains(text, "notes") || strings.Contains(text, "pdf") {
		t.Errorf("usage unused:\n%s", text)
	}
	if text := mustRun(t, env, "usage", "versions", "pdf").stdout; !strings.Contains(text, "VERSION") || !strings.Contains(text, "3") {
		t.Errorf("usage versions pdf:\n%s", text)
	}
	mustRun(t, env, "usage", "searches")

	// The organization's usage is an admin's.
	r := runCtl(t, env, "usage", "top", "--library", "org")
	if r.code == exitOK || !strings.Contains(r.stderr, "admin") {
		t.Errorf("usage top --library org as alice: exit %d\n%s", r.code, r.stderr)
	}
}

// TestSparkline: levels scaled to the largest, zero the lowest.
func TestSparkline(t *testing.T) {
	if got := sparkline([]int64{0, 1, 4, 8}, false); got != "▁▂▅█" {
		t.Errorf("sparkline = %q", got)
	}
	if got := sparkline([]int64{0, 1, 4, 8}, true); got != "_.+@" {
		t.Errorf("ASCII sparkline = %q", got)
	}
	if got := sparkline([]int64{0, 0}, false); got != "▁▁" {
		t.Errorf("no use = %q", got)
	}
	if got := bar(5, 10, 30, true); got != strings.Repeat("#", 15) {
		t.Errorf("bar = %q", got)
	}
}

// TestUsageLibrary: --library as usage spells it.
func TestUsageLibrary(t *testing.T) {
	for in, want := range map[string]string{"": "<nil>", "own": "<nil>", "org": "shared:true", "shared": "shared:true", "team:legal": `team:"legal"`, "bob": `user:"bob"`} {
		a := &app{}
		a.set.Library = in
		if got := strings.Join(strings.Fields(a.usageLibrary().String()), " "); got != want && !(want == "<nil>" && a.usageLibrary() == nil) {
			t.Errorf("--library %q: %s, want %s", in, got, want)
		}
	}
}

// TestUsageSearchesTable: the searches withheld by the server (fewer
// users than --usage.query-min-users) print as one last row without text.
func TestUsageSearchesTable(t *testing.T) {
	var b strings.Builder
	searchesTable(&b, &skillsvcv1.GetUsageResponse{
		Searches:      []*skillsvcv1.SearchUsage{{Query: "contract review", Searches: 5, Empty: 5}},
		OtherSearches: &skillsvcv1.SearchUsage{Searches: 8, Empty: 6, Led: 1},
		QueryMinUsers: 5,
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "contract review") ||
		strings.Join(strings.Fields(lines[2]), " ") != "(other queries, each by fewer than 5 users) 8 6 1" {
		t.Errorf("searches table:\n%s", b.String())
	}
}
