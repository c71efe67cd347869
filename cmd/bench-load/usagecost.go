package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/loadbench"
)

// What counting usage costs (-usage-rounds): two replicas on the same
// bucket and Redis, one with --usage.enabled=true and one with false,
// measured alternately round by round, so a machine whose load drifts
// (a shared CI host) weighs on both alike. Separate runs of -usage=true
// and -usage=false differ by tens of percent on such a machine, far more
// than what is measured here.

// usageRow is one measured row of one replica.
type usageRow struct {
	name    string // the case: "one user, GetSkill throughput" or "random users, GetSkill"
	round   int    // from 1
	counted bool   // --usage.enabled
	rate    float64
	calls   int64
	cpu     time.Duration // skillsvc's user and system CPU during the row
	err     error
}

func (r usageRow) cpuPerCall() time.Duration {
	if r.calls <= 0 || r.cpu < 0 {
		return -1
	}
	return r.cpu / time.Duration(r.calls)
}

// usagePair is the two replicas of one case, index 0 counting usage.
type usagePair [2]*skillsvc

// startUsagePair starts both replicas of svc on bucket.
func (b *bench) startUsagePair(ctx context.Context, svc skillsvcConfig, bucket string) (usagePair, error) {
	var p usagePair
	for i, counted := range []bool{true, false} {
		c := svc
		// Last, so it wins over -usage and every -skillsvc-flag.
		c.extra = append(append([]string(nil), svc.extra...), fmt.Sprintf("--usage.enabled=%v", counted))
		s, err := startSkillsvc(ctx, c, bucket, b.cl)
		if err != nil {
			p.stop(b)
			return usagePair{}, err
		}
		p[i] = s
	}
	return p, nil
}

func (p usagePair) stop(b *bench) {
	for _, s := range p {
		b.stop(s)
	}
}

// settle waits for both replicas' background work (the scans of skills
// uploaded out of band) to end: it would weigh on whichever replica is
// still at it, not on counting usage.
func (p usagePair) settle(ctx context.Context, b *bench, after string) {
	for i, s := range p {
		b.settle(ctx, fmt.Sprintf("skillsvc (usage counted %v)", i == 0), after, s.proc.Pid())
	}
}

// usageRounds measures each replica opts.usageRounds times, alternating
// which goes first, with measure (one row of the case on one replica).
func (b *bench) usageRounds(name string, p usagePair, measure func(s *skillsvc, i int) usageRow) {
	for round := 1; round <= b.opts.usageRounds; round++ {
		order := []int{0, 1}
		if round%2 == 0 {
			order = []int{1, 0}
		}
		for _, i := range order {
			r := measure(p[i], i)
			r.name, r.round, r.counted = name, round, i == 0
			b.rep.usage = append(b.rep.usage, r)
			b.logf("usage cost: %s (round %d, usage counted %v): %s", name, round, r.counted, strings.Join(r.cells()[3:], ", "))
		}
	}
}

// runUsageCostOneUser measures GetSkill throughput of one user's library
// of size skills in bucket on both replicas, as the throughput row does.
func (b *bench) runUsageCostOneUser(ctx context.Context, bucket string, size int) {
	name := fmt.Sprintf("one user, GetSkill throughput, %s skills", loadbench.Count(float64(size)))
	p, err := b.startUsagePair(ctx, b.svc, bucket)
	if err != nil {
		b.rep.usage = append(b.rep.usage, usageRow{name: name, err: err})
		return
	}
	defer p.stop(b)
	var clients [2][]skillsvcv1.SkillsServiceClient
	for i, s := range p {
		cs, closeClients, err := tenantClients(ctx, s, b.opts.clients)
		defer closeClients()
		if err == nil {
			_, err = spreadGetSkill(ctx, cs, size, time.Time{}) // every skill read once, unmeasured
		}
		if err != nil {
			b.rep.usage = append(b.rep.usage, usageRow{name: name, err: err})
			return
		}
		clients[i] = cs
	}
	p.settle(ctx, b, "reading every skill")
	b.usageRounds(name, p, func(s *skillsvc, i int) usageRow {
		pids := b.cpuPids(s)
		before := readCPU(pids)
		start := time.Now()
		calls, err := spreadGetSkill(ctx, clients[i], size, start.Add(b.opts.duration))
		elapsed := time.Since(start)
		return usageRow{rate: float64(calls) / elapsed.Seconds(), calls: calls, cpu: readCPU(pids).since(before, elapsed).skillsvc, err: err}
	})
}

// runUsageCostTenants measures random users' GetSkill over the many-tenants
// bucket (seeded by runTenants) on both replicas, warmed as the random-user
// rows are.
func (b *bench) runUsageCostTenants(ctx context.Context, n int) {
	const name = "random users, GetSkill"
	if err := b.srv.flushRedis(ctx); err != nil {
		b.rep.usage = append(b.rep.usage, usageRow{name: name, err: err})
		return
	}
	svc := b.svc
	svc.liftLimits = tenantsLiftLimits
	p, err := b.startUsagePair(ctx, svc, tenantBucket)
	if err != nil {
		b.rep.usage = append(b.rep.usage, usageRow{name: name, err: err})
		return
	}
	defer p.stop(b)
	call := tenantCalls[0].call
	var clients [2][]skillsvcv1.SkillsServiceClient
	for i, s := range p {
		cs, closeClients, err := tenantClients(ctx, s, b.opts.tenantClients)
		defer closeClients()
		if err == nil {
			err = b.warmTenants(ctx, cs, name, n, call)
		}
		if err != nil {
			b.rep.usage = append(b.rep.usage, usageRow{name: name, err: err})
			return
		}
		clients[i] = cs
	}
	p.settle(ctx, b, "warming every user")
	// Both replicas called at once, unmeasured, for -tenant-ramp: the rows
	// then measure users who keep calling on both (see -tenant-ramp).
	var wg sync.WaitGroup
	for _, cs := range clients {
		wg.Go(func() { _, _ = drive(ctx, cs, n, b.opts.tenantRamp, 6, call, nil) })
	}
	wg.Wait()
	b.usageRounds(name, p, func(s *skillsvc, i int) usageRow {
		r := b.tenantRow(ctx, s, clients[i], name, n, call, false)
		return usageRow{rate: r.rate, calls: r.calls, cpu: r.cpu.skillsvc, err: r.err}
	})
}

func (r usageRow) cells() []string {
	counted := "not counted"
	if r.counted {
		counted = "counted"
	}
	if r.err != nil {
		return []string{r.name, fmt.Sprint(r.round), counted, "error: " + clip(oneLine(r.err.Error()), 60), ""}
	}
	perCall := "n/a"
	if d := r.cpuPerCall(); d >= 0 {
		perCall = loadbench.Duration(d)
	}
	return []string{r.name, fmt.Sprint(r.round), counted, loadbench.Count(r.rate) + " req/s", perCall}
}

// usageCosts is, per case, the median over rounds of the counted
// replica's throughput over the other's, and of their CPU per call.
func usageCosts(rows []usageRow) []string {
	type key struct {
		name  string
		round int
	}
	byKey := map[key][2]*usageRow{}
	var names []string
	for i := range rows {
		r := &rows[i]
		if r.err != nil {
			continue
		}
		k := key{r.name, r.round}
		pair, seen := byKey[k]
		if !seen && !slices.Contains(names, r.name) {
			names = append(names, r.name)
		}
		if r.counted {
			pair[0] = r
		} else {
			pair[1] = r
		}
		byKey[k] = pair
	}
	var out []string
	for _, name := range names {
		var rates, cpus []float64
		for k, pair := range byKey {
			if k.name != name || pair[0] == nil || pair[1] == nil || pair[1].rate <= 0 {
				continue
			}
			rates = append(rates, pair[0].rate/pair[1].rate)
			if on, off := pair[0].cpuPerCall(), pair[1].cpuPerCall(); on > 0 && off > 0 {
				cpus = append(cpus, float64(on)/float64(off))
			}
		}
		if len(rates) == 0 {
			continue
		}
		s := fmt.Sprintf("%s: throughput %+.1f%%", name, 100*(median(rates)-1))
		if len(cpus) > 0 {
			s += fmt.Sprintf(", skillsvc CPU per call %+.1f%%", 100*(median(cpus)-1))
		}
		out = append(out, s+fmt.Sprintf(" (medians of %d rounds)", len(rates)))
	}
	return out
}

// printUsage writes the usage-cost table and its medians.
func (r *report) printUsage(w io.Writer, o options) {
	if len(r.usage) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWhat counting usage costs: two replicas on the same bucket and Redis, --usage.enabled=true and false, "+
		"measured alternately for %v per row (%d rounds, which replica goes first alternating):\n\n", o.duration, o.usageRounds)
	rows := [][]string{{"case", "round", "usage", "req/s", "skillsvc CPU per call"}}
	for _, u := range r.usage {
		rows = append(rows, u.cells())
	}
	loadbench.WriteTable(w, rows)
	if costs := usageCosts(r.usage); len(costs) > 0 {
		fmt.Fprintf(w, "\nCounted over not counted: %s.\n", strings.Join(costs, "; "))
	}
}
