package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	user         = "alice"
	thread       = "bench-selection"
	sharedPrefix = "_shared/skills/" // --skills.shared-prefix's default
	mount        = "/skills"         // --skills.mount's default
	startTimeout = 2 * time.Minute
	// embedTimeout bounds embedding a library with -embeddings-url: 10,000
	// skills take about 40 minutes on a small CPU endpoint.
	embedTimeout = 2 * time.Hour
	// readyTimeout bounds the first listing, which builds the library's
	// index from the data directory.
	readyTimeout = 3 * time.Minute
	// defaultMaxSkills is --skills.max-skills' default.
	defaultMaxSkills = 10_000
	searchLimit      = 10
	charBudget       = 12_000
	// warmUp is how many requests warm the server before the timed pass.
	warmUp = 20
)

// query is one request of queries.json.
type query struct {
	ID     string `json:"id"`
	Query  string `json:"query"`
	Target string `json:"target"`
	Split  string `json:"split"`
	Lang   string `json:"lang"`
}

func loadQueries(file string) ([]query, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var qs []query
	if err := json.Unmarshal(data, &qs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if q.ID == "" || q.Query == "" || q.Target == "" || (q.Split != "tune" && q.Split != "holdout") || seen[q.ID] {
			return nil, fmt.Errorf("%s: request %q: needs a unique id, a query, a target and split tune or holdout", file, q.ID)
		}
		seen[q.ID] = true
	}
	return qs, nil
}

// outcome is what one request got from one library.
type outcome struct {
	ID     string `json:"id"`
	Split  string `json:"split"`
	Lang   string `json:"lang"`
	Target string `json:"target"`
	Rank   int    `json:"rank"` // of the first result that counts, 1-based; 0 when none in the top 10
	Block  bool   `json:"in_block"`
	// NoQuery: the target (or a copy) is in the block without a query,
	// the same block for every request of the library.
	NoQuery bool     `json:"in_block_without_query"`
	Top     []string `json:"top"`
	search  time.Duration
	format  time.Duration
	// The calls' times, for finding what makes a tail.
	SearchMS float64 `json:"search_ms"`
	FormatMS float64 `json:"format_ms"`
}

// library is one configuration measured: its skills and the requests whose
// target it holds.
type library struct {
	Name       string
	skills     []skill
	queries    []query
	Outcomes   []outcome
	searchLat  []time.Duration
	formatLat  []time.Duration
	IndexBytes int64 // skillsvc_search_index_bytes; -1 when not exposed
	Skills     int
	// Use is the variant with -usage-history: useOff or useOn ("" without),
	// History what was recorded before the measured pass.
	Use     string
	History *history
}

// measure lays lib out as the shared library of a fresh data directory,
// starts skillsvc on it and runs every request through SearchSkills and
// FormatSkills: a warm-up pass, then a timed one.
func (b *bench) measure(ctx context.Context, lib *library) error {
	dir, err := os.MkdirTemp(b.dir, "data-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	if err := layOut(dir, sharedPrefix, lib.skills); err != nil {
		return fmt.Errorf("laying out the library: %w", err)
	}
	b.logf("%s: laid out %d skills in %s", lib.Name, len(lib.skills), loadbench.Duration(time.Since(start)))
	args := []string{
		"--listen=127.0.0.1:0",
		"--http.listen=127.0.0.1:0",
		"--metrics.listen=127.0.0.1:0",
		"--data-dir=" + dir,
		"--examples=off", // the library is the benchmark's alone
	}
	if n := len(lib.skills); n > defaultMaxSkills {
		// The benchmark's point is one library of 10,000 skills beside the
		// 17: the default holds 10,000 per library, so it is raised to hold
		// them all and nothing else is changed.
		args = append(args, "--skills.max-skills="+strconv.Itoa(n))
	}
	args = append(args, b.embeddings...)
	if b.flushInterval != "" {
		args = append(args, "--usage.flush-interval="+b.flushInterval)
	}
	if lib.Use == useOff {
		args = append(args, useOffArgs...)
	}
	runDir, err := os.MkdirTemp(b.dir, "run-")
	if err != nil {
		return err
	}
	p, err := testserver.RunSkillsvc(ctx, testserver.SkillsvcConfig{
		Bin: b.bin, Args: args, Env: skillsvcEnv(), Dir: runDir, Log: b.serverLog, Wait: []string{"serving http", "serving metrics"},
	}, startTimeout)
	if err != nil {
		return err
	}
	defer p.Stop()
	conn, err := grpc.NewClient(p.Addrs["serving"], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := skillsvcv1.NewSkillsServiceClient(conn)
	cctx := grpctest.AsCaller(ctx, user, thread, "")

	start = time.Now()
	if lib.Skills, err = waitReady(cctx, c); err != nil {
		return fmt.Errorf("%s: %w\n%s", lib.Name, err, p.Tail())
	}
	b.logf("%s: serving %d of the %d skills after %s", lib.Name, lib.Skills, len(lib.skills), loadbench.Duration(time.Since(start)))

	if h := lib.History; h != nil {
		start = time.Now()
		uses, err := recordHistory(ctx, c, *h)
		if err != nil {
			return fmt.Errorf("%s: %w", lib.Name, err)
		}
		if h.Recorded, err = waitRecorded(ctx, skillsvcv1.NewUsageServiceClient(conn), uses); err != nil {
			return fmt.Errorf("%s, use %s: the history was not counted: %w\n%s", lib.Name, lib.Use, err, p.Tail())
		}
		if lib.Use == useOn {
			if err := waitOrdered(cctx, c, uses); err != nil {
				return fmt.Errorf("%s, use %s: %w\n%s", lib.Name, lib.Use, err, p.Tail())
			}
		}
		b.logf("%s, use %s: %d activations of %d skills recorded and counted after %s", lib.Name, lib.Use, h.Recorded, h.Skills, loadbench.Duration(time.Since(start)))
	}

	accept := copiesOf(lib.skills, targetsOf(lib.queries))
	// The warm-up builds what a warm call reuses (the index, the layers)
	// with requests that differ from the timed ones in their limits only,
	// so the timed calls search rather than find their reply cached (each
	// user request is a new one).
	for _, q := range lib.queries[:min(warmUp, len(lib.queries))] {
		if _, err := ask(cctx, c, q, accept[q.Target], searchLimit-1, charBudget-1); err != nil {
			return fmt.Errorf("%s: warm-up request %s: %w", lib.Name, q.ID, err)
		}
	}
	if len(b.embeddings) > 0 {
		start = time.Now()
		if err := waitVectors(ctx, "http://"+p.Addrs["serving metrics"]+"/metrics", lib.Skills); err != nil {
			return fmt.Errorf("%s: %w\n%s", lib.Name, err, p.Tail())
		}
		b.logf("%s: every skill embedded after %s", lib.Name, loadbench.Duration(time.Since(start)))
	}
	// The block without a query is the caller's, whatever the request:
	// asked once, it tells for each request whether its target is in it.
	plain, err := call(cctx, func() (*skillsvcv1.FormatSkillsResponse, error) {
		return c.FormatSkills(cctx, &skillsvcv1.FormatSkillsRequest{CharBudget: charBudget})
	})
	if err != nil {
		return fmt.Errorf("%s: FormatSkills without a query: %w", lib.Name, err)
	}
	for _, q := range lib.queries {
		o, err := ask(cctx, c, q, accept[q.Target], searchLimit, charBudget)
		if err != nil {
			return fmt.Errorf("%s: request %s: %w", lib.Name, q.ID, err)
		}
		o.NoQuery = inBlock(plain.GetText(), accept[q.Target])
		lib.Outcomes = append(lib.Outcomes, o)
		lib.searchLat = append(lib.searchLat, o.search)
		lib.formatLat = append(lib.formatLat, o.format)
	}
	lib.IndexBytes = indexBytes(ctx, "http://"+p.Addrs["serving metrics"]+"/metrics")
	return nil
}

func targetsOf(qs []query) []string {
	var out []string
	for _, q := range qs {
		if !slices.Contains(out, q.Target) {
			out = append(out, q.Target)
		}
	}
	return out
}

// skillsvcEnv is the environment without SKILLSVC_ variables, so a
// developer's settings do not change what is measured.
func skillsvcEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLSVC_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitReady asks for the default prompt block until the library is served
// (its first listing builds the index; two replies agree on the count) and
// returns the skills served: those laid out less those skillsvc refuses
// (no or invalid frontmatter), which it logs.
func waitReady(ctx context.Context, c skillsvcv1.SkillsServiceClient) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	last, lastDigest := -1, ""
	for {
		resp, err := call(ctx, func() (*skillsvcv1.FormatSkillsResponse, error) {
			return c.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{CharBudget: 1000})
		})
		wait := 200 * time.Millisecond
		if err == nil {
			// Settled: every skill served and the library digest (which
			// names each file's digest) unchanged over a few refresh
			// intervals, so a fresh replica's hashing of the library's
			// files, each pass a new generation to rebuild, is over
			// before anything is timed.
			n, digest := int(resp.GetIncluded()+resp.GetOmitted()), resp.GetLibraryDigest()
			if n > 0 && n == last && digest == lastDigest {
				return n, nil
			}
			last, lastDigest = n, digest
			wait = settleInterval
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return 0, fmt.Errorf("not ready: %w", err)
		case <-time.After(wait):
		}
	}
}

// settleInterval is how long the library must stay the same to count as
// settled: a few of the local store's 1 s refresh intervals.
const settleInterval = 3 * time.Second

// call runs f, waiting out a refusal by the per-user limits for the delay
// the server gives (the benchmark keeps the shipped limits).
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if status.Code(err) != codes.ResourceExhausted {
			return v, err
		}
		d, ok := retryinfo.Delay(err)
		if !ok {
			d = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(d):
		}
	}
}

// ask runs one request: SearchSkills with limit (10), then the query-aware
// FormatSkills within budget (12,000 characters), each timed.
func ask(ctx context.Context, c skillsvcv1.SkillsServiceClient, q query, accept map[string]bool, limit, budget int32) (outcome, error) {
	o := outcome{ID: q.ID, Split: q.Split, Lang: q.Lang, Target: q.Target}
	start := time.Now()
	sr, err := call(ctx, func() (*skillsvcv1.SearchSkillsResponse, error) {
		start = time.Now()
		return c.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: q.Query, Limit: limit})
	})
	o.search = time.Since(start)
	if err != nil {
		return o, fmt.Errorf("SearchSkills: %w", err)
	}
	for i, r := range sr.GetResults() {
		dir := strings.TrimPrefix(r.GetSkill().GetPath(), mount+"/")
		o.Top = append(o.Top, dir)
		if o.Rank == 0 && accept[dir] && i < searchLimit {
			o.Rank = i + 1
		}
	}
	fr, err := call(ctx, func() (*skillsvcv1.FormatSkillsResponse, error) {
		start = time.Now()
		return c.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Query: q.Query, CharBudget: budget})
	})
	o.format = time.Since(start)
	o.SearchMS, o.FormatMS = float64(o.search.Microseconds())/1000, float64(o.format.Microseconds())/1000
	if err != nil {
		return o, fmt.Errorf("FormatSkills: %w", err)
	}
	o.Block = inBlock(fr.GetText(), accept)
	return o, nil
}

// inBlock reports whether a prompt block names one of the skill folders
// of accept.
func inBlock(text string, accept map[string]bool) bool {
	for dir := range accept {
		if strings.Contains(text, mount+"/"+dir+"/") {
			return true
		}
	}
	return false
}

// indexBytes reads the gauge skillsvc_search_index_bytes (summed over its
// series) from the metrics endpoint; -1 when the server does not expose it.
func indexBytes(ctx context.Context, url string) int64 {
	return gaugeAt(ctx, url, "skillsvc_search_index_bytes")
}

// gaugeAt reads the gauge name (summed over its series) from the metrics
// endpoint; -1 when the server does not expose it.
func gaugeAt(ctx context.Context, url, name string) int64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	return parseGauge(io.LimitReader(resp.Body, 64<<20), name)
}

func parseGauge(r io.Reader, name string) int64 {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var sum float64
	found := false
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
			found = true
		}
	}
	if !found {
		return -1
	}
	return int64(sum)
}

var errNoQueries = errors.New("no request has its target in the library")

// waitVectors waits until skillsvc holds n skills with their embedding
// (skillsvc_search_vector_docs): the semantic stage embeds a library in the
// background after its index is built, searching lexically meanwhile.
func waitVectors(ctx context.Context, url string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		if gaugeAt(ctx, url, "skillsvc_search_vector_docs") >= int64(n) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the skills were not embedded within %s (is the endpoint up? skillsvc's log says)", embedTimeout)
		case <-t.C:
		}
	}
}
