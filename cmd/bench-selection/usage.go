package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"html"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
)

// With -usage-history the benchmark models recorded use: the requests are
// split (seeded, deterministic) into an earlier half and a measured half;
// before the measured pass each earlier request's target is activated once
// through GetSkill as the benchmark's user (the request led to its skill),
// and other users activate skills no request is about (background use,
// seeded, Zipf-distributed: a few skills used often, most rarely). The
// measured half is then run on a server that orders and breaks ties by that
// use (the binary's defaults) and on one that does not
// (--skills.search-use-prior=false --skills.order-by-use=false), each with
// the same history recorded. A measured request's own target is never
// activated because of it: the history knows only the earlier requests.

// The variants of a library measured with -usage-history.
const (
	useOff = "off"
	useOn  = "on"
)

// useOffArgs are the flags of the server that ignores use.
var useOffArgs = []string{"--skills.search-use-prior=false", "--skills.order-by-use=false"}

// backgroundUsers activate the background skills: other users of the
// organization's library, as its use is shared.
const backgroundUsers = 8

// zipfS is the exponent of the background use's Zipf distribution.
const zipfS = 1.1

// splitRequests splits qs into the earlier half (the history) and the
// measured half, by a seeded hash of each request's id: the same seed gives
// the same split whatever the order of qs. Both keep qs' order.
func splitRequests(qs []query, seed uint64) (earlier, measured []query) {
	key := func(id string) uint64 {
		sum := sha256.Sum256(append(binary.LittleEndian.AppendUint64(nil, seed), id...))
		return binary.LittleEndian.Uint64(sum[:8])
	}
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(key(a), key(b)), strings.Compare(a, b)) })
	first := map[string]bool{}
	for _, id := range ids[:len(ids)/2] {
		first[id] = true
	}
	for _, q := range qs {
		if first[q.ID] {
			earlier = append(earlier, q)
		} else {
			measured = append(measured, q)
		}
	}
	return earlier, measured
}

// activation is one GetSkill of the history: a skill folder and who.
type activation struct {
	Dir    string `json:"dir"`
	User   string `json:"user"`
	Thread string `json:"thread"`
}

// history is the use recorded before the measured pass.
type history struct {
	Requests    int          `json:"earlier_requests"`
	Activations []activation `json:"-"`
	Targets     int          `json:"target_activations"`     // of the earlier requests' targets
	Background  int          `json:"background_activations"` // of skills no request is about
	Skills      int          `json:"skills_used"`            // distinct folders activated
	// Recorded is what GetUsage reported for the library before the
	// measured pass: activations, all of the history's.
	Recorded int64 `json:"recorded_activations"`
}

// makeHistory is the history of lib: one activation of each earlier
// request's target by the benchmark's user, then background activations by
// other users of skills of lib that are no request's target nor a copy of
// one (skip), drawn seeded from a Zipf distribution over a seeded shuffle of
// them.
func makeHistory(lib []skill, earlier []query, skip map[string]bool, background int, seed uint64) history {
	h := history{Requests: len(earlier)}
	for _, q := range earlier {
		h.Activations = append(h.Activations, activation{Dir: q.Target, User: user, Thread: "history-" + q.ID})
	}
	h.Targets = len(h.Activations)
	var pool []string
	for _, s := range lib {
		if !skip[s.Dir] {
			pool = append(pool, s.Dir)
		}
	}
	slices.Sort(pool)
	if len(pool) > 0 && background > 0 {
		r := rand.New(rand.NewPCG(seed, 1))
		r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		z := rand.NewZipf(r, zipfS, 1, uint64(len(pool)-1))
		for i := range background {
			h.Activations = append(h.Activations, activation{Dir: pool[z.Uint64()],
				User: fmt.Sprintf("bench-user-%d", r.IntN(backgroundUsers)), Thread: fmt.Sprintf("background-%d", i)})
		}
		h.Background = background
	}
	dirs := map[string]bool{}
	for _, a := range h.Activations {
		dirs[a.Dir] = true
	}
	h.Skills = len(dirs)
	return h
}

// recordHistory activates h's skills through GetSkill, each as its user in
// its thread, and returns the activations by the skill name the server
// serves each under (what usage counts).
func recordHistory(ctx context.Context, c skillsvcv1.SkillsServiceClient, h history) (map[string]int64, error) {
	byName := map[string]int64{}
	for _, a := range h.Activations {
		actx := grpctest.AsCaller(ctx, a.User, a.Thread, "")
		resp, err := call(actx, func() (*skillsvcv1.GetSkillResponse, error) {
			return c.GetSkill(actx, &skillsvcv1.GetSkillRequest{Path: mount + "/" + a.Dir})
		})
		if err != nil {
			return nil, fmt.Errorf("history: GetSkill %s: %w", a.Dir, err)
		}
		byName[resp.GetSkill().GetName()]++
	}
	return byName, nil
}

// recordedTimeout bounds the wait for the history to be counted and, on
// the server ordering by use, to order its block: a few flush intervals
// (10 s by default), the store's flush, then the ranks' read.
const recordedTimeout = 2 * time.Minute

// waitRecorded waits until GetUsage (as a library admin, of the
// organization's library) reports exactly want's activations, each skill's
// and in all, and returns the total: the history is counted before
// anything is measured. More than want fails at once.
func waitRecorded(ctx context.Context, u skillsvcv1.UsageServiceClient, want map[string]int64) (int64, error) {
	actx := metadata.AppendToOutgoingContext(grpctest.AsCaller(ctx, user, thread, ""), auth.AdminKey, "true")
	var total int64
	for _, n := range want {
		total += n
	}
	deadline := time.Now().Add(recordedTimeout)
	for {
		// Two days: the history may have been recorded on either side of
		// midnight UTC.
		resp, err := call(actx, func() (*skillsvcv1.GetUsageResponse, error) {
			return u.GetUsage(actx, &skillsvcv1.GetUsageRequest{Library: &skillsvcv1.LibraryRef{Shared: true}, Days: 2})
		})
		if err != nil {
			return 0, fmt.Errorf("GetUsage: %w", err)
		}
		got, sum := map[string]int64{}, int64(0)
		for _, s := range resp.GetSkills() {
			got[s.GetName()] += s.GetActivations()
			sum += s.GetActivations()
		}
		if sum > total {
			return 0, fmt.Errorf("GetUsage reports %d activations, more than the %d of the history", sum, total)
		}
		if sum == total {
			for name, n := range want {
				if got[name] != n {
					return 0, fmt.Errorf("GetUsage reports %d activations of %s, the history made %d", got[name], name, n)
				}
			}
			return sum, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("GetUsage reports %d of the history's %d activations after %s", sum, total, recordedTimeout)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

var blockName = regexp.MustCompile(`<skill>\n<name>(.*?)</name>`)

// waitOrdered waits until the block without a query lists first a skill
// of the most activations: the server reads the counts back once per flush
// interval, in the background, so the first blocks after a flush may keep
// the path order.
func waitOrdered(ctx context.Context, c skillsvcv1.SkillsServiceClient, uses map[string]int64) error {
	var most int64
	for _, n := range uses {
		most = max(most, n)
	}
	deadline := time.Now().Add(recordedTimeout)
	first := ""
	for {
		// The budget differs from the measured block's, so this reply is
		// not the one the measured pass gets.
		resp, err := call(ctx, func() (*skillsvcv1.FormatSkillsResponse, error) {
			return c.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{CharBudget: 1000})
		})
		if err != nil {
			return fmt.Errorf("FormatSkills: %w", err)
		}
		if m := blockName.FindStringSubmatch(resp.GetText()); m != nil {
			first = html.UnescapeString(m[1])
			if uses[first] == most {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the block without a query lists %q first (%d activations), not a skill of the most (%d), after %s", first, uses[first], most, recordedTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// libraryHistory is the history of a library of skills: the earlier
// requests whose target it holds, and background use of its skills that
// are no request's target nor a copy of one (-1: as many activations as
// those requests').
func libraryHistory(skills []skill, all, earlier []query, background int, seed uint64) history {
	have := map[string]bool{}
	for _, s := range skills {
		have[s.Dir] = true
	}
	var in, about []query
	for _, q := range all {
		if have[q.Target] {
			about = append(about, q)
		}
	}
	for _, q := range earlier {
		if have[q.Target] {
			in = append(in, q)
		}
	}
	skip := map[string]bool{}
	for _, copies := range copiesOf(skills, targetsOf(about)) {
		for dir := range copies {
			skip[dir] = true
		}
	}
	if background < 0 {
		background = len(in)
	}
	return makeHistory(skills, in, skip, background, seed)
}
