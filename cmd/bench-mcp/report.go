package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/quota"
)

// minForPercentiles is the fewest requests a row needs for p50/p99.
const minForPercentiles = 10

// print writes the table, the errors and the parameters of the run.
func (b *bench) print(w io.Writer) {
	rows := [][]string{{"phase", "MCP requests", "time", "p50", "p99", "errors (refused)", "S3 requests", "S3 by operation", "Redis commands"}}
	for _, p := range b.phases {
		rows = append(rows, p.row())
	}
	loadbench.WriteTable(w, rows)

	var errs []string
	for _, p := range b.phases {
		for _, m := range p.messages {
			errs = append(errs, fmt.Sprintf("%s: %s", p.name, oneLine(m)))
		}
		if more := p.failures - len(p.messages); more > 0 {
			errs = append(errs, fmt.Sprintf("%s: %d more failures", p.name, more))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintln(w, "\nErrors:")
		for _, e := range errs {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}

	files, size := libraryBytes(b.lib)
	lim := quota.DefaultConfig()
	pageSize := 0
	for _, p := range b.phases {
		if p.pageSize > 0 {
			pageSize = p.pageSize
			break
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Library: %s skills (%d categories × %d) in one user's library, %s files, %s",
		loadbench.Count(float64(len(b.lib))), b.opts.categories, b.opts.perCategory, loadbench.Count(float64(files)), loadbench.Bytes(size))
	if pageSize > 0 {
		fmt.Fprintf(w, "; skills/list pages of %d skills (the server's page size)", pageSize)
	}
	fmt.Fprintln(w, ".")
	fmt.Fprintf(w, "skillsvc: the binary with its defaults (per-user limits %g units/s, burst %d, %d in flight, a request from memory 0.1; insecure mode, identity headers) "+
		"except --probe.interval=1h, so readiness probes stay out of the counts", lim.Rate, lim.Burst, lim.Concurrency)
	if len(b.opts.skillsvcFlags) > 0 {
		fmt.Fprintf(w, "; extra flags: %s", strings.Join(b.opts.skillsvcFlags, " "))
	}
	fmt.Fprintln(w, ".")
	fmt.Fprintf(w, "Storage: MinIO behind a proxy adding %v to every S3 response; Redis: one redis-server, flushed before phase 1 only.\n", b.opts.latency)
	fmt.Fprintf(w, "Host: MCP %s (as negotiated) over Streamable HTTP, one session per process, one request at a time, paced to at most %g req/s after a burst of %d; "+
		"a refusal by the rate limit (-32000) counts as an error and is retried after its retryAfterMs. "+
		"time is the row's wall time; p50/p99 are per request (rows of %d or more).\n", b.protocol(), b.opts.rate, b.opts.burst, minForPercentiles)
	fmt.Fprintln(w, "S3 requests and Redis commands: all those made while the row ran, background work included "+
		"(the catalog's index revalidation after --skills.index-refresh, the MCP library watcher every --mcp.watch-interval).")
	fmt.Fprintf(w, "Machine: %s; MinIO, redis-server and skillsvc on the same machine. Run: %s.\n", loadbench.Machine(), time.Now().Format("2006-01-02"))
}

// protocol is the version the server agreed to, or the one asked for
// when no session was opened.
func (b *bench) protocol() string {
	if b.negotiated != "" {
		return b.negotiated
	}
	return b.opts.protocol
}

func (p *phase) row() []string {
	sorted := slices.Sorted(slices.Values(p.latencies))
	p50, p99 := "", ""
	if len(sorted) >= minForPercentiles {
		p50, p99 = loadbench.Duration(loadbench.Percentile(sorted, 50)), loadbench.Duration(loadbench.Percentile(sorted, 99))
	}
	redis := loadbench.Count(float64(p.redis))
	if p.redis < 0 {
		redis = "?"
	}
	return []string{
		p.name, p.requests, loadbench.Duration(p.wall), p50, p99,
		fmt.Sprintf("%s (%s)", loadbench.Count(float64(p.failures+p.refusals)), loadbench.Count(float64(p.refusals))),
		loadbench.Count(float64(p.storage.Total())), formatOps(p.storage), redis,
	}
}

// formatOps lists operations by count, most first.
func formatOps(ops map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(ops), func(a, b string) int {
		return cmp.Or(cmp.Compare(ops[b], ops[a]), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, loadbench.Count(float64(ops[k]))))
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
