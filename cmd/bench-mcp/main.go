// Command bench-mcp measures the MCP skills extension end to end, as a host
// uses it: it starts MinIO behind a proxy that adds a fixed latency to every
// S3 response and counts the requests by operation, a redis-server as the
// shared cache and the real skillsvc binary with its default settings (the
// per-user limits as shipped), seeds a generated library of skills, and
// drives /mcp over Streamable HTTP: a cold full skills/list on a new
// replica with an empty Redis, the same on a restarted replica with Redis
// warm, a warm full listing, then skills/get and resources/read over many
// skills and files. It prints a markdown table of times, latencies, errors
// (refusals by the rate limit included), storage requests and Redis
// commands per phase, with the machine it ran on. `make bench-mcp` runs it;
// -help lists the knobs. Every process and directory it starts is removed
// on exit, Ctrl-C included.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
)

type options struct {
	categories    int
	perCategory   int
	latency       time.Duration
	rate          float64
	burst         int
	gets          int
	reads         int
	protocol      string
	skillsvcBin   string
	skillsvcFlags []string
	seedWorkers   int
}

func parseOptions(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("bench-mcp", flag.ContinueOnError)
	f.IntVar(&o.categories, "categories", 50, "Category folders in the generated library.")
	f.IntVar(&o.perCategory, "skills-per-category", 20, "Skills in each category (each a SKILL.md and 2 or 3 files under references/ and scripts/).")
	f.DurationVar(&o.latency, "latency", 20*time.Millisecond, "Delay the proxy in front of MinIO adds to every S3 response; 0 disables it.")
	f.Float64Var(&o.rate, "rate", 90, "Requests per second the host sends at most (skillsvc's default per-user limit is 100/s); a refusal is counted as an error and retried after the delay the server gives.")
	f.IntVar(&o.burst, "burst", 100, "Requests the host sends back to back before pacing (skillsvc's default per-user burst is 1,000 units, 10,000 requests served from memory): a full listing of 20 pages goes at once, as a host listing on connect sends it.")
	f.IntVar(&o.gets, "gets", 1000, "skills/get requests, spread over the library.")
	f.IntVar(&o.reads, "reads", 1000, "resources/read requests, spread over every file of the library.")
	f.StringVar(&o.protocol, "protocol", "2025-11-25", "MCP protocol version the host asks for in initialize.")
	f.StringVar(&o.skillsvcBin, "skillsvc-bin", "", "skillsvc binary to run; empty builds ./cmd/skillsvc.")
	f.Func("skillsvc-flag", "Extra flag for skillsvc, e.g. -skillsvc-flag=--mcp.skills-page-size=100 (repeatable); flags that lift the per-user limits are refused.", func(s string) error {
		o.skillsvcFlags = append(o.skillsvcFlags, s)
		return nil
	})
	f.IntVar(&o.seedWorkers, "seed-workers", 32, "Parallel uploads while seeding (straight to MinIO, not measured).")
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: go run ./cmd/bench-mcp [flags]\n\n"+
			"Starts MinIO ($SKILLSVC_MINIO_BIN, else .tools/bin/minio, else PATH; `make tools` builds it),\n"+
			"redis-server (PATH) and skillsvc with its default limits, and prints a table of MCP\n"+
			"skills extension timings.\n\n")
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if f.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", f.Args())
	}
	if o.categories < 1 || o.perCategory < 1 || o.rate <= 0 || o.burst < 1 || o.gets < 0 || o.reads < 0 || o.seedWorkers < 1 || o.latency < 0 {
		return o, errors.New("categories, skills-per-category, rate, burst and seed-workers must be positive; gets, reads and latency not negative")
	}
	if o.categories*o.perCategory > 100_000 {
		return o, errors.New("at most 100,000 skills")
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-mcp:", err)
		os.Exit(2)
	}
	loadbench.Main("bench-mcp", func(cl *loadbench.Cleanups) int { return run(context.Background(), o, cl, os.Stdout, os.Stderr) })
}
