// Command bench-load measures the skills catalog end to end, as deployed: it
// starts its own MinIO, redis-server and skillsvc processes on loopback, puts
// a proxy that delays every S3 response between skillsvc and MinIO (so the
// numbers show what a remote S3 costs), seeds libraries of several sizes and
// prints a table of first calls, warm latencies, throughput, storage
// requests and memory, with the machine it ran on; then the many-tenants
// table (tenants.go): a shared library and thousands of users, called as one
// user and as random users. `make bench-load` runs it
// with the defaults; -help lists the knobs. Every process and temporary
// directory it starts is removed on exit, Ctrl-C included.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

type options struct {
	sizes         []int
	latency       time.Duration
	users         int
	iterations    int
	clients       int
	duration      time.Duration
	lruMaxBytes   int64
	skillsvcFlags []string
	skillsvcBin   string
	seedWorkers   int
	verbose       bool
	usage         bool // --usage.enabled of every skillsvc: recording's cost is the difference
	usageRounds   int  // rounds of the usage-cost rows (two replicas, usage on and off); 0 skips them
	tenants       int  // users of the many-tenants case; 0 skips it
	tenantClients int
	tenantEvents  bool          // the many-tenants case again with the bucket's events
	tenantSettle  time.Duration // libraries left quiet before the rows without events
	tenantRamp    time.Duration // random calls before each random-user row is measured
	tenantCalls   []string      // the calls measured; empty: all
	tenantRounds  int           // one-user and random-user rows of each call, alternating
}

func parseOptions(args []string) (options, error) {
	o := options{sizes: []int{10, 100, 1000}}
	f := flag.NewFlagSet("bench-load", flag.ContinueOnError)
	f.Func("sizes", "Comma-separated library sizes (skills per user) to measure (default 10,100,1000); empty measures none.", func(s string) error {
		o.sizes = nil
		if strings.TrimSpace(s) == "" {
			return nil
		}
		for _, part := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n <= 0 {
				return fmt.Errorf("size %q: want a positive number", part)
			}
			o.sizes = append(o.sizes, n)
		}
		return nil
	})
	f.DurationVar(&o.latency, "latency", 20*time.Millisecond, "Delay added to every S3 response by the proxy in front of MinIO; 0 disables it.")
	f.IntVar(&o.users, "users", 1, "With more than 1: also seed this many users with a library of the largest size each, list every user's skills once and report skillsvc's memory.")
	f.IntVar(&o.tenants, "tenants", 2000, "Users of the many-tenants case (a shared library of 300 skills, 5 skills of its own per user, calls as random users); 0 skips it.")
	f.BoolVar(&o.tenantEvents, "tenant-events", true, "Measure the many-tenants case again with MinIO's bucket notifications posted to skillsvc's event endpoint (polling then at its events defaults).")
	f.DurationVar(&o.tenantSettle, "tenant-settle", 0, "Without events: after every user is served once (as before every pass), leave the libraries quiet this long before the rows, so they are measured as libraries unchanged that long (their revalidation interval grows with it; 4m reaches the longest).")
	f.DurationVar(&o.tenantRamp, "tenant-ramp", 35*time.Second, "Random-user calls made, unmeasured, after each random-user row's warm-up and before it is measured: longer than skillsvc's max staleness (30s), so the row measures users who keep calling (each library revalidated in the background at its interval), not the first calls after the warm-up, which find their libraries older than the max staleness and list them first; 0 measures right after the warm-up.")
	f.Func("tenant-calls", "Comma-separated calls of the many-tenants case to measure (GetSkill, FormatSkills, ListSkills); default all.", func(v string) error {
		o.tenantCalls = nil
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if !slices.ContainsFunc(tenantCalls, func(c tenantCallCase) bool { return c.name == name }) {
				return fmt.Errorf("unknown call %q: want GetSkill, FormatSkills or ListSkills", name)
			}
			o.tenantCalls = append(o.tenantCalls, name)
		}
		return nil
	})
	f.IntVar(&o.tenantRounds, "tenant-rounds", 1, "Rounds of each call's pair of many-tenants rows, one user then random users, alternating on the same replica (warmed once; before each later random-user row, random users call unmeasured until each called about twice, at most -tenant-ramp, so the libraries that fell due while one user called are revalidated before it, as for users who keep calling); the ratio printed is the median of the rounds' (a single row of a few seconds on a shared machine varies by tens of percent between runs).")
	f.IntVar(&o.tenantClients, "tenant-clients", 16, "Concurrent clients (one connection each) of the many-tenants case.")
	f.IntVar(&o.iterations, "iterations", 200, "Calls behind each warm p50/p99.")
	f.IntVar(&o.clients, "clients", 32, "Concurrent clients (one connection each) of the throughput case.")
	f.DurationVar(&o.duration, "duration", 5*time.Second, "How long the throughput case runs.")
	f.Int64Var(&o.lruMaxBytes, "lru-max-bytes", 0, "Passed to skillsvc as --cache.lru.max-bytes; 0 keeps skillsvc's default.")
	f.Func("skillsvc-flag", "Extra flag passed to every skillsvc process, e.g. -skillsvc-flag=--skills.index-ttl=30s (repeatable).", func(s string) error {
		o.skillsvcFlags = append(o.skillsvcFlags, s)
		return nil
	})
	f.StringVar(&o.skillsvcBin, "skillsvc-bin", "", "skillsvc binary to run; empty builds ./cmd/skillsvc.")
	f.IntVar(&o.seedWorkers, "seed-workers", 32, "Parallel uploads while seeding.")
	f.BoolVar(&o.verbose, "v", false, "Log storage operations by kind for every case (the many-tenants rows: by kind of key too).")
	f.BoolVar(&o.usage, "usage", true, "Count skill usage in every skillsvc (--usage.enabled, skillsvc's default); run once with -usage=false and compare the GetSkill throughput and many-tenants rows for what recording costs.")
	f.IntVar(&o.usageRounds, "usage-rounds", 3, "Rounds of the usage-cost rows: one user's GetSkill throughput (the largest -sizes) and random users' GetSkill (-tenants), each on two replicas, usage counted and not, measured alternately; 0 skips them.")
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: go run ./cmd/bench-load [flags]\n\n"+
			"Starts MinIO ($SKILLSVC_MINIO_BIN, else .tools/bin/minio, else PATH; `make tools` builds it),\n"+
			"redis-server (PATH) and skillsvc (with per-user limits off: one user is the load),\n"+
			"and prints a table of catalog timings, then the many-tenants table.\n\n")
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if f.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", f.Args())
	}
	if o.users > 1 && len(o.sizes) == 0 {
		return o, errors.New("-users needs a library size (-sizes)")
	}
	if o.tenants < 0 || o.tenantClients < 1 || o.tenantRounds < 1 || o.usageRounds < 0 || o.tenantSettle < 0 || o.tenantRamp < 0 {
		return o, errors.New("tenants, usage-rounds, tenant-settle and tenant-ramp must not be negative, tenant-clients and tenant-rounds must be positive")
	}
	if o.users < 1 || o.iterations < 1 || o.clients < 1 || o.duration <= 0 || o.seedWorkers < 1 || o.latency < 0 || o.lruMaxBytes < 0 {
		return o, errors.New("users, iterations, clients, duration and seed-workers must be positive; latency and lru-max-bytes not negative")
	}
	return o, nil
}

// extraFlags are the flags every skillsvc gets beyond the harness's own:
// -usage, then each -skillsvc-flag (which wins, coming later).
func (o options) extraFlags() []string {
	return append([]string{"--usage.enabled=" + strconv.FormatBool(o.usage)}, o.skillsvcFlags...)
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-load:", err)
		os.Exit(2)
	}
	loadbench.Main("bench-load", func(cl *loadbench.Cleanups) int { return run(context.Background(), o, cl) })
}

// run starts the shared servers, runs every size and prints the table. It
// returns the exit code: 1 when any case failed.
func run(ctx context.Context, o options, cl *loadbench.Cleanups) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "bench-load:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "skillsvc-bench-load-")
	if err != nil {
		return fail(err)
	}
	cl.Add(func() { os.RemoveAll(dir) })

	b := &bench{opts: o, cl: cl, rep: newReport(o.sizes), log: os.Stderr}
	b.logf("starting MinIO, redis-server and the latency proxy (%v)", o.latency)
	b.srv, err = startServers(o.latency, cl)
	if err != nil {
		return fail(err)
	}
	b.direct = newS3Client(b.srv.minio, b.srv.minio.Endpoint, seedConnections)
	b.viaProxy = newS3Client(b.srv.minio, b.srv.proxy.URL, 4)

	bin := o.skillsvcBin
	if bin == "" {
		b.logf("building ./cmd/skillsvc")
		bin, b.svcErr = testserver.BuildSkillsvc(ctx, dir)
		if b.svcErr != nil {
			b.logf("%v", b.svcErr)
			// One line per cell; the full output went to the log above.
			b.svcErr = errors.New("go build ./cmd/skillsvc failed")
		}
	}
	b.svc = skillsvcConfig{bin: bin, dir: dir, servers: b.srv, lruMaxBytes: o.lruMaxBytes, extra: o.extraFlags(), liftLimits: oneUserIsTheLoad}

	for _, size := range o.sizes {
		b.runSize(ctx, size)
	}
	if o.users > 1 {
		b.runUsers(ctx, o.users, slices.Max(o.sizes))
	}
	if o.tenants > 0 {
		b.runTenants(ctx)
	}
	b.rep.print(os.Stdout, o)
	if len(b.rep.errors()) > 0 {
		return 1
	}
	return 0
}
