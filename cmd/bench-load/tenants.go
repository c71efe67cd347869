package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The many-tenants case (issue 22): one replica serving a shared library
// and many users with a few skills of their own, called as random users.
const (
	tenantShared   = 300 // skills in the shared library
	tenantPersonal = 5   // skills of each user; the first overrides a shared one by name
	tenantBucket   = "bench-tenants"
	repliesMetric  = "skillsvc_skills_replies_total"
	// tenantSkills is what each user sees: the shared skills, less the
	// one the user overrides, and the user's own.
	tenantSkills = tenantShared - 1 + tenantPersonal
	// tenantsLiftLimits is why the case runs without per-user limits.
	tenantsLiftLimits = "the many-tenants case measures what a replica costs per call, as issue 22's table does: " +
		"per-user limits off, so the one-user rows measure the service and not the limits"
)

func tenantName(u int) string { return fmt.Sprintf("tenant-%05d", u+1) }

// overridden is the shared skill user u overrides: a different one per
// user, spread over the library.
func overridden(u int) int { return (u * 7) % tenantShared }

// ownSkill is the name of user u's j-th skill.
func ownSkill(u, j int) string {
	if j == 0 {
		return skillName(overridden(u))
	}
	return fmt.Sprintf("own-%d", j)
}

// tenantSkill is the name of the i-th (0 ≤ i < tenantSkills) skill user u
// sees: the shared ones first, the user's own after them.
func tenantSkill(u, i int) string {
	if i < tenantShared-1 {
		if i >= overridden(u) {
			i++ // the user's own skill of that name comes later
		}
		return skillName(i)
	}
	return ownSkill(u, i-(tenantShared-1))
}

// tenantObjects are the shared library and every user's skills: the shared
// ones laid out as the library-size cases lay out theirs, each user's under
// own/ (so the overriding skill overrides by name, not by path).
func tenantObjects(users int) func(yield func(string, []byte) bool) {
	return func(yield func(string, []byte) bool) {
		for i := range tenantShared {
			base := sharedPrefix + skillFolder(i, tenantShared) + "/"
			if !yield(base+"SKILL.md", skillMD(i, tenantShared)) || !yield(base+guideFile, guideMD(skillName(i))) {
				return
			}
		}
		for u := range users {
			for j := range tenantPersonal {
				name := ownSkill(u, j)
				base := skillsPrefix(tenantName(u)) + "own/" + name + "/"
				if !yield(base+"SKILL.md", namedSkillMD(name, u*tenantPersonal+j, "own")) || !yield(base+guideFile, guideMD(name)) {
					return
				}
			}
		}
	}
}

// tenantCall is one RPC as user u; rng picks what it asks for.
type tenantCall func(ctx context.Context, c skillsvcv1.SkillsServiceClient, u int, rng *rand.Rand) error

// tenantCallCase is a call of the many-tenants table, by name.
type tenantCallCase struct {
	name string
	call tenantCall
}

// The rows of the many-tenants table: each call as one user, then as
// random users.
var tenantCalls = []tenantCallCase{
	{"GetSkill", func(ctx context.Context, c skillsvcv1.SkillsServiceClient, u int, rng *rand.Rand) error {
		return getSkillAs(ctx, c, tenantName(u), tenantSkill(u, rng.IntN(tenantSkills)))
	}},
	{"FormatSkills", func(ctx context.Context, c skillsvcv1.SkillsServiceClient, u int, _ *rand.Rand) error {
		ctx, cancel := context.WithTimeout(as(ctx, tenantName(u)), callTimeout)
		defer cancel()
		resp, err := c.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
		if err == nil && (resp.GetIncluded() == 0 || resp.GetIncluded()+resp.GetOmitted() != tenantSkills) {
			err = fmt.Errorf("FormatSkills as %s: %d skills included and %d omitted, want %d in all", tenantName(u), resp.GetIncluded(), resp.GetOmitted(), tenantSkills)
		}
		return err
	}},
	{"ListSkills", func(ctx context.Context, c skillsvcv1.SkillsServiceClient, u int, _ *rand.Rand) error {
		return listSkillsAs(ctx, c, tenantName(u), tenantSkills)
	}},
}

// tenantCalls are the calls the options ask to measure, in table order.
func (b *bench) tenantCalls() []tenantCallCase {
	if len(b.opts.tenantCalls) == 0 {
		return tenantCalls
	}
	var out []tenantCallCase
	for _, c := range tenantCalls {
		if slices.Contains(b.opts.tenantCalls, c.name) {
			out = append(out, c)
		}
	}
	return out
}

// tenantRow is one row of the many-tenants table.
type tenantRow struct {
	name     string
	round    int // of -tenant-rounds, from 1; 0 when there is one
	p50, p99 time.Duration
	rate     float64 // calls per second
	calls    int64
	requests int64 // storage requests the proxy saw during the calls
	// cpu is the CPU time each process used during the calls: skillsvc's
	// per call is what a call costs it, whatever else shares the machine
	// (the clients, MinIO, Redis), which throughput alone does not show.
	cpu      processCPU
	ops      map[string]float64
	keys     *keyKinds          // with -v: the requests by kind of key
	replies  map[string]float64 // skillsvc_skills_replies_total delta by label set
	cacheErr map[string]float64 // skillsvc_cache_errors_total delta: a loaded machine's Redis timeouts show here
	rss      int64
	err      error
}

// label is the row's name and round.
func (r tenantRow) label() string {
	if r.round == 0 {
		return r.name
	}
	return fmt.Sprintf("%s (round %d)", r.name, r.round)
}

func (r tenantRow) cells() []string {
	if r.err != nil {
		return []string{r.label(), "error: " + clip(oneLine(r.err.Error()), 60), "", "", "", ""}
	}
	perThousand := 0.0
	if r.calls > 0 {
		perThousand = float64(r.requests) / float64(r.calls) * 1000
	}
	perCall := "n/a"
	if r.calls > 0 && r.cpu.skillsvc >= 0 {
		perCall = loadbench.Duration(r.cpu.skillsvc / time.Duration(r.calls))
	}
	return []string{
		r.label(), loadbench.Duration(r.p50) + " / " + loadbench.Duration(r.p99), loadbench.Count(r.rate),
		perCall, fmt.Sprintf("%.1f", perThousand), loadbench.Bytes(r.rss),
	}
}

// runTenants seeds the shared library and opts.tenants users, starts one
// skillsvc with an empty Redis, and measures each call as one user and as
// random users, each row after every user it calls as was served once.
func (b *bench) runTenants(ctx context.Context) {
	n := b.opts.tenants
	row := func(r tenantRow) {
		b.rep.tenants = append(b.rep.tenants, r)
		msg := strings.Join(r.cells()[1:], ", ")
		if b.opts.verbose && r.ops != nil {
			msg += " [" + formatOps(r.ops) + "] [" + formatOps(r.replies) + "] [cache errors: " + formatOps(r.cacheErr) + "] [" + r.cpu.String() + "]"
			if r.keys != nil {
				msg += " [keys: " + r.keys.String() + "]"
			}
		}
		b.logf("%s users: %s: %s", loadbench.Count(float64(n)), r.label(), msg)
	}
	fail := func(err error) {
		for _, c := range b.tenantCalls() {
			row(tenantRow{name: "one user, " + c.name, err: err})
			row(tenantRow{name: "random users, " + c.name, err: err})
		}
	}
	if b.svcErr != nil {
		fail(b.svcErr)
		return
	}
	start := time.Now()
	if err := createBucket(ctx, b.direct, tenantBucket); err != nil {
		fail(fmt.Errorf("creating bucket %s: %w", tenantBucket, err))
		return
	}
	if err := putObjects(ctx, b.direct, tenantBucket, b.opts.seedWorkers, tenantObjects(n)); err != nil {
		fail(fmt.Errorf("seeding %s: %w", tenantBucket, err))
		return
	}
	b.logf("seeded a shared library of %d skills and %s users × %d skills (%s objects) in %s", tenantShared,
		loadbench.Count(float64(n)), tenantPersonal, loadbench.Count(float64(2*(tenantShared+n*tenantPersonal))), loadbench.Duration(time.Since(start)))

	b.settleMinIO(ctx)
	b.tenantPass(ctx, n, "", nil, row)
	if b.opts.usageRounds > 0 && slices.ContainsFunc(b.tenantCalls(), func(c tenantCallCase) bool { return c.name == "GetSkill" }) {
		b.runUsageCostTenants(ctx, n)
	}
	if !b.opts.tenantEvents {
		return
	}
	// With events: MinIO posts the bucket's notifications to the replica,
	// whose polling defaults are then events' (minutes).
	evRow := func(r tenantRow) {
		r.name += ", events"
		row(r)
	}
	flags, err := b.srv.relay.eventsFlags(b.svc.dir)
	if err == nil {
		err = notifyRelay(ctx, b.direct, tenantBucket)
	}
	if err != nil {
		for _, c := range b.tenantCalls() {
			evRow(tenantRow{name: "random users, " + c.name, err: err})
		}
		return
	}
	b.tenantPass(ctx, n, "events", flags, evRow)
}

// tenantPass starts one skillsvc with an empty Redis and flags (events:
// with the bucket's events relayed to it), serves every user once, and
// measures each call as one user, then as random users, back to back on
// that replica: each pass holds its own pair for the ratio.
func (b *bench) tenantPass(ctx context.Context, n int, events string, flags []string, row func(tenantRow)) {
	fail := func(err error) {
		for _, c := range b.tenantCalls() {
			row(tenantRow{name: "one user, " + c.name, err: err})
			row(tenantRow{name: "random users, " + c.name, err: err})
		}
	}
	if err := b.srv.flushRedis(ctx); err != nil {
		fail(fmt.Errorf("FLUSHALL: %w", err))
		return
	}
	svc := b.svc
	svc.liftLimits = tenantsLiftLimits
	svc.flags = flags
	if events != "" {
		svc.wait = []string{"serving http"}
	}
	s, err := startSkillsvc(ctx, svc, tenantBucket, b.cl)
	if err != nil {
		fail(err)
		return
	}
	defer b.stop(s)
	if events != "" {
		b.srv.relay.forward(s.httpAddr)
		defer b.srv.relay.forward("")
		if err := b.probeEvents(ctx); err != nil {
			fail(err)
			return
		}
	}
	clients, closeClients, err := tenantClients(ctx, s, b.opts.tenantClients)
	defer closeClients()
	if err != nil {
		fail(err)
		return
	}
	// Every user served once before any row, as the table was
	// measured: the one-user rows then run on the replica state the
	// random-user rows run on (every user's library held), so a row
	// differs from the other only in which users call, not in how many
	// the replica holds.
	start := time.Now()
	if err := parallel(clients, n, func(c skillsvcv1.SkillsServiceClient, u int) error {
		return tenantCalls[0].call(ctx, c, u, rand.New(rand.NewPCG(uint64(u), 3)))
	}); err != nil {
		fail(fmt.Errorf("serving every user once: %w", err))
		return
	}
	b.logf("every user served once in %s", loadbench.Duration(time.Since(start)))
	b.settle(ctx, "skillsvc", "serving every user once", s.proc.Pid())
	if settle := b.opts.tenantSettle; settle > 0 && events == "" {
		// Every library left quiet: its next listing finds it unchanged
		// for settle, and its interval grows (libindex.FreshFor).
		b.logf("libraries left quiet for %v", settle)
		time.Sleep(settle)
	}
	rounds := b.opts.tenantRounds
	for _, c := range b.tenantCalls() {
		for i := range rounds {
			// Later rounds start warm: the round before served every user
			// its rows call as, and each row is shorter than the max
			// staleness, so no library falls out of its cadence between.
			warm := i == 0
			one := b.tenantRow(ctx, s, clients, "one user, "+c.name, 1, c.call, warm)
			if rounds > 1 {
				one.round = i + 1
			}
			row(one)
			if !warm {
				// Only a call revalidates its library: those that fell due
				// while one user called are listed at random users' first
				// calls. Random users call again, unmeasured, until each
				// has called about twice (at most -tenant-ramp), so the row
				// measures users who keep calling, not a round's
				// revalidations in its 5 s.
				caught, calls := time.Now(), int64(0)
				for seed := uint64(6); calls < 2*int64(n) && time.Since(caught) < b.opts.tenantRamp; seed++ {
					m, err := drive(ctx, clients, n, time.Second, seed, c.call, nil)
					if calls += m; err != nil {
						b.logf("random users, %s (round %d): catch-up: %v", c.name, i+1, err)
						break
					}
				}
				b.logf("random users, %s (round %d): catch-up of %s calls in %s", c.name, i+1, loadbench.Count(float64(calls)), loadbench.Duration(time.Since(caught)))
			}
			random := b.tenantRow(ctx, s, clients, "random users, "+c.name, n, c.call, warm)
			if rounds > 1 {
				random.round = i + 1
			}
			row(random)
		}
	}
	if events != "" {
		b.logf("events: MinIO posted %d notifications to the replica", b.srv.relay.posts.Load())
	}
}

// tenantClients connects each client on its own connection, before any
// clock starts; close closes the connections.
func tenantClients(ctx context.Context, s *skillsvc, n int) (clients []skillsvcv1.SkillsServiceClient, close func(), err error) {
	var conns []*grpc.ClientConn
	close = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for range n {
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, close, err
		}
		conns = append(conns, conn)
		if err := testserver.WaitServing(ctx, conn); err != nil {
			return nil, close, err
		}
		clients = append(clients, skillsvcv1.NewSkillsServiceClient(conn))
	}
	return clients, close, nil
}

// tenantRow serves each of the first users users once with call (for one
// user, GetSkill of each of its skills), then has every client call as
// random users among them for opts.duration, and measures the calls.
// Without warm it measures at once: a row just before served them.
func (b *bench) tenantRow(ctx context.Context, s *skillsvc, clients []skillsvcv1.SkillsServiceClient, name string, users int, call tenantCall, warm bool) tenantRow {
	r := tenantRow{name: name}
	if warm {
		if err := b.warmTenants(ctx, clients, name, users, call); err != nil {
			r.err = err
			return r
		}
	}
	before, _ := s.scrape(ctx)
	if b.opts.verbose {
		r.keys = &keyKinds{}
		defer r.keys.count(b.srv.proxy)()
	}
	proxyBefore := b.srv.proxy.Requests()
	pids := b.cpuPids(s)
	cpuBefore := readCPU(pids)
	start := time.Now()
	var all []time.Duration
	_, firstErr := drive(ctx, clients, users, b.opts.duration, 2, call, &all)
	elapsed := time.Since(start)
	r.cpu = readCPU(pids).since(cpuBefore, elapsed)
	r.requests = b.srv.proxy.Requests() - proxyBefore
	if after, err := s.scrape(ctx); err == nil && before != nil {
		r.ops, r.replies = delta(before, after, opsMetric), delta(before, after, repliesMetric)
		r.cacheErr = delta(before, after, "skillsvc_cache_errors_total")
	}
	if firstErr != nil {
		r.err = firstErr
		return r
	}
	slices.Sort(all)
	r.calls = int64(len(all))
	r.rate = float64(r.calls) / elapsed.Seconds()
	r.p50, r.p99 = loadbench.Percentile(all, 50), loadbench.Percentile(all, 99)
	r.rss, r.err = s.rss()
	return r
}

// warmTenants serves what the row name measures before it is measured:
// each of the first users users once with call (for one user, GetSkill of
// each of its skills; for random users' GetSkill, every file a call may
// pick), then, for random users, opts.tenantRamp of unmeasured calls.
func (b *bench) warmTenants(ctx context.Context, clients []skillsvcv1.SkillsServiceClient, name string, users int, call tenantCall) error {
	warm := users
	if users == 1 {
		warm = tenantSkills // every skill the calls may pick
	}
	readsFiles := strings.HasSuffix(name, "GetSkill")
	if users > 1 && readsFiles {
		// Every file a call may pick read once, so the row measures warm
		// calls, not the first read of each user's files: every skill as
		// the first two users (between them they see every shared one),
		// each other user's own.
		warm = 2*tenantSkills + (users-2)*tenantPersonal
	}
	warmStart := time.Now()
	if err := parallel(clients, warm, func(c skillsvcv1.SkillsServiceClient, i int) error {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		switch {
		case users > 1 && readsFiles && i < 2*tenantSkills:
			return getSkillAs(ctx, c, tenantName(i/tenantSkills), tenantSkill(i/tenantSkills, i%tenantSkills))
		case users > 1 && readsFiles:
			i -= 2 * tenantSkills
			u := 2 + i/tenantPersonal
			return getSkillAs(ctx, c, tenantName(u), ownSkill(u, i%tenantPersonal))
		case users > 1:
			return call(ctx, c, i, rng)
		}
		if err := getSkillAs(ctx, c, tenantName(0), tenantSkill(0, i)); err != nil || i > 0 {
			return err
		}
		return call(ctx, c, 0, rng)
	}); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if users > 1 && readsFiles {
		// Reading every file may take longer than the max staleness on a
		// slow machine: serve every user once more, so the row starts, as
		// the others do, right after each user was served.
		if err := parallel(clients, users, func(c skillsvcv1.SkillsServiceClient, i int) error {
			return call(ctx, c, i, rand.New(rand.NewPCG(uint64(i), 4)))
		}); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		warm += users
	}
	b.logf("%s: warm-up of %s calls in %s", name, loadbench.Count(float64(warm)), loadbench.Duration(time.Since(warmStart)))

	if ramp := b.opts.tenantRamp; users > 1 && ramp > 0 {
		// Users who keep calling, not a first call after a pause: the rows
		// start once every library has been through its revalidation
		// cadence under this load (a pause longer than the max staleness
		// makes the next call list the library first, by design).
		rampStart := time.Now()
		n, err := drive(ctx, clients, users, ramp, 5, call, nil)
		if err != nil {
			return fmt.Errorf("ramp: %w", err)
		}
		b.logf("%s: ramp of %s random calls in %s", name, loadbench.Count(float64(n)), loadbench.Duration(time.Since(rampStart)))
	}

	return nil
}

// drive has every client call as random users among users until d has
// passed, and returns the number of calls and the first error; with all,
// it also collects each call's latency. seed picks the random sequence.
func drive(ctx context.Context, clients []skillsvcv1.SkillsServiceClient, users int, d time.Duration, seed uint64, call tenantCall, all *[]time.Duration) (int64, error) {
	deadline := time.Now().Add(d)
	var (
		mu       sync.Mutex
		calls    int64
		firstErr error
		wg       sync.WaitGroup
	)
	for g, c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), seed))
			var ds []time.Duration
			var n int64
			var err error
			for time.Now().Before(deadline) {
				t := time.Now()
				if err = call(ctx, c, rng.IntN(users), rng); err != nil {
					break
				}
				n++
				if all != nil {
					ds = append(ds, time.Since(t))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			calls += n
			if all != nil {
				*all = append(*all, ds...)
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return calls, firstErr
}

// delta is every sample of the metric name by label set, after less
// before.
func delta(before, after metrics, name string) map[string]float64 {
	out := map[string]float64{}
	was := before.byLabel(name)
	for k, v := range after.byLabel(name) {
		out[k] = v - was[k]
	}
	return out
}

// parallel calls f(c, i) for every i below n, spread over the clients, and
// returns the first error.
func parallel(clients []skillsvcv1.SkillsServiceClient, n int, f func(c skillsvcv1.SkillsServiceClient, i int) error) error {
	var (
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for g, c := range clients {
		wg.Go(func() {
			for i := g; i < n; i += len(clients) {
				if err := f(c, i); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// printTenants writes the many-tenants table and what it measured.
func (r *report) printTenants(w io.Writer, o options) {
	if len(r.tenants) == 0 {
		return
	}
	fmt.Fprintf(w, "\nMany tenants: a shared library of %d skills and %s users with %d skills each (one overriding a shared skill), "+
		"one skillsvc, Redis flushed first, every user served once before the first row; %d clients for %v per row, every user the row calls as served once before it, "+
		"and random-user rows measured after %v of unmeasured random calls (-tenant-ramp):\n\n",
		tenantShared, loadbench.Count(float64(o.tenants)), tenantPersonal, o.tenantClients, o.duration, o.tenantRamp)
	rows := [][]string{{"", "p50 / p99", "req/s", "skillsvc CPU per call", "storage requests per 1,000 calls", "RSS"}}
	for _, t := range r.tenants {
		rows = append(rows, t.cells())
	}
	loadbench.WriteTable(w, rows)
	if ratios := tenantRatios(r.tenants); len(ratios) > 0 {
		how := "each pair back to back on one replica"
		if o.tenantRounds > 1 {
			how = fmt.Sprintf("%d rounds of one user then random users on one replica (from the second, random users calling unmeasured before their row until each called about twice), each round's pair compared", o.tenantRounds)
		}
		fmt.Fprintf(w, "\nRandom users' throughput over one user's, %s: %s.\n", how, strings.Join(ratios, "; "))
	}
	fmt.Fprintf(w, "\nLatency under the load of every client. GetSkill picks one of the caller's %d skills at random; FormatSkills "+
		"is the default prompt block; ListSkills lists all %d skills in one page. skillsvc CPU per call: its user and system CPU time "+
		"during the row (from /proc) over the calls, what a call costs it whatever else shares the machine. Storage requests: seen by the latency proxy. "+
		"RSS: skillsvc's, after the row. Rows marked events: a second skillsvc, Redis flushed again and every user served once again, with MinIO's bucket notifications "+
		"posted to its event endpoint and polling at the events defaults (--skills.index-refresh 5m, --skills.index-max-stale 15m).\n", tenantSkills, tenantSkills)
}

// tenantRatios is each random-user row's throughput over the one-user row
// of the same call, pass and round ("GetSkill, events 87%"), for the pairs
// both measured; over several rounds, their median and each round's
// ("GetSkill, events 87% (median of 80%, 87%, 95%)").
func tenantRatios(rows []tenantRow) []string {
	type pair struct {
		call  string
		round int
	}
	one := map[pair]tenantRow{}
	ratios := map[string][]float64{}
	var calls []string
	for _, r := range rows {
		if rest, ok := strings.CutPrefix(r.name, "one user, "); ok {
			one[pair{rest, r.round}] = r
			continue
		}
		rest, ok := strings.CutPrefix(r.name, "random users, ")
		o, paired := one[pair{rest, r.round}]
		if !ok || !paired || r.err != nil || o.err != nil || o.rate <= 0 {
			continue
		}
		if _, seen := ratios[rest]; !seen {
			calls = append(calls, rest)
		}
		ratios[rest] = append(ratios[rest], r.rate/o.rate)
	}
	var out []string
	for _, c := range calls {
		rs := ratios[c]
		if len(rs) == 1 {
			out = append(out, fmt.Sprintf("%s %.0f%%", c, 100*rs[0]))
			continue
		}
		each := make([]string, len(rs))
		for i, r := range rs {
			each[i] = fmt.Sprintf("%.0f%%", 100*r)
		}
		out = append(out, fmt.Sprintf("%s %.0f%% (median of %s)", c, 100*median(rs), strings.Join(each, ", ")))
	}
	return out
}

// median of xs, not empty; xs is left as it was.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
