package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file prove what the skills cache promises, through the
// real binary, a real MinIO and a real redis-server: writes are read by
// every replica at once, out-of-band uploads show up within
// --skills.index-max-stale, a cold replica starts from the persisted index,
// warm calls cost no storage request, and neither a Redis nor a storage
// outage fails a call the cache can answer.

// putLibrary uploads a small library for alice over a shared one: three
// skills, one with files.
func putLibrary(put func(key, body string)) {
	put("alice/skills/docs/pdf/SKILL.md", "---\nname: pdf\ndescription: Extract text and tables from PDF files.\n---\n# PDF\nRun scripts/extract.py on $ARGUMENTS.\n")
	put("alice/skills/docs/pdf/scripts/extract.py", "print('extract')\n")
	put("alice/skills/docs/pdf/references/forms.md", "# Forms\nFill forms carefully.\n")
	put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n")
	put("_shared/skills/data/csv/SKILL.md", "---\nname: csv\ndescription: Clean and analyze CSV spreadsheets.\n---\nUse pandas.\n")
}

// allSkills is putLibrary's listing for alice, in path order.
const allSkills = "csv,pdf,notes"

// s3Flags are the flags of a binary serving bucket from srv, with metrics.
func s3Flags(srv *testserver.MinIO, bucket string, extra ...string) []string {
	return append(append(srv.S3Flags(bucket), "--metrics.listen=127.0.0.1:0"), extra...)
}

// redisFlags point a binary at red under a key prefix of its own, so a
// shared Redis looks empty to it; binaries given the same prefix share it.
func redisFlags(red *testserver.Redis, prefix string) []string {
	return []string{"--cache.redis.addrs=" + red.Addr, "--cache.redis.key-prefix=" + prefix}
}

func newKeyPrefix() string { return "e2e-" + rand.Text() + ":" }

// skillNames lists the caller's skills (enabled ones only) as the names
// joined by commas, in path order.
func skillNames(ctx context.Context, sc skillsvcv1.SkillsServiceClient) (string, error) {
	resp, err := sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000})
	if err != nil {
		return "", err
	}
	var names []string
	for _, s := range resp.GetSkills() {
		names = append(names, s.GetName())
	}
	return strings.Join(names, ","), nil
}

// metricsEndpoint is the Prometheus endpoint of a binary.
// noScan turns the scan policy off in tests that count storage requests
// exactly: under --library.scan's default (warn) every new content is read
// once more in the background, for its scan (counted by
// skillsvc_scan_runs_total; TestScanPolicy* test it).
const noScan = "--library.scan=off"

type metricsEndpoint struct{ url string }

// metricsFor finds p's metrics endpoint in its log once, so that polling it
// does not parse the log again; p runs with --metrics.listen.
func metricsFor(t *testing.T, p *proc) metricsEndpoint {
	t.Helper()
	for line := range strings.Lines(p.output()) {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving metrics" {
			return metricsEndpoint{url: "http://" + rec.Addr + "/metrics"}
		}
	}
	t.Fatalf("no metrics address logged:\n%s", p.output())
	return metricsEndpoint{}
}

func (m metricsEndpoint) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(m.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// value returns one series, written as Prometheus prints it (labels in
// name order), e.g. `skillsvc_cache_hits_total{level="redis"}`.
func (m metricsEndpoint) value(t *testing.T, series string) float64 {
	t.Helper()
	return seriesValue(t, m.scrape(t), series)
}

func seriesValue(t *testing.T, body, series string) float64 {
	t.Helper()
	v, ok := lookupSeries(t, body, series)
	if !ok {
		t.Fatalf("no metric %s", series)
	}
	return v
}

func lookupSeries(t *testing.T, body, series string) (float64, bool) {
	t.Helper()
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", series, err)
			}
			return f, true
		}
	}
	return 0, false
}

// counter returns a counter that may not have been created yet (a label
// value no call has used) as 0.
func (m metricsEndpoint) counter(t *testing.T, series string) float64 {
	t.Helper()
	v, _ := lookupSeries(t, m.scrape(t), series)
	return v
}

// storageOps is skillsvc_objstore_operations_total by operation.
type storageOps map[string]float64

var storageOpNames = []string{"list", "get", "get_range", "stat", "put", "delete"}

func (m metricsEndpoint) storageOps(t *testing.T) storageOps {
	t.Helper()
	body := m.scrape(t)
	ops := storageOps{}
	for _, op := range storageOpNames {
		ops[op] = seriesValue(t, body, `skillsvc_objstore_operations_total{operation="`+op+`"}`)
	}
	return ops
}

// since returns the operations made after before, leaving out those that
// made none.
func (ops storageOps) since(before storageOps) storageOps {
	d := storageOps{}
	for op, n := range ops {
		if n != before[op] {
			d[op] = n - before[op]
		}
	}
	return d
}

// pollUntil polls cond until it holds; the deadline only bounds a failure.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCacheSetSkillEnabledAcrossReplicas runs two binaries on one bucket
// and one Redis: a skill disabled (then enabled again) through one is gone
// from (then back in) the other's ListSkills as soon as the replicas' topic
// tells it (replicas hold settings in process for --skills.index-max-stale, the
// bound should a message be lost), read from Redis without a storage
// request.
func TestCacheSetSkillEnabledAcrossReplicas(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	// Indexes never expire here: only the settings can change a listing.
	args := s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()), "--skills.index-refresh=1h", "--skills.index-max-stale=1h", noScan)...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	scA := skillsvcv1.NewSkillsServiceClient(dial(t, a.addr))
	scB := skillsvcv1.NewSkillsServiceClient(dial(t, b.addr))
	for name, sc := range map[string]skillsvcv1.SkillsServiceClient{"A": scA, "B": scB} {
		if got, err := skillNames(alice, sc); err != nil || got != allSkills {
			t.Fatalf("binary %s lists %q, %v; want %q", name, got, err, allSkills)
		}
	}

	metricsB := metricsFor(t, b)
	before := metricsB.storageOps(t)
	for _, step := range []struct {
		enabled bool
		want    string
	}{
		{enabled: false, want: "csv,notes"},
		{enabled: true, want: allSkills},
	} {
		if _, err := scA.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: step.enabled}); err != nil {
			t.Fatalf("SetSkillEnabled(pdf, %t) on A: %v", step.enabled, err)
		}
		// The topic makes it milliseconds. The settings are held for an
		// hour here (--skills.index-max-stale), so this passes only if the
		// topic tells B; the poll's bound only bounds a hang.
		set := time.Now()
		pollUntil(t, 30*time.Second, fmt.Sprintf("B listing %q after SetSkillEnabled(pdf, %t) on A", step.want, step.enabled), func() bool {
			got, err := skillNames(alice, scB)
			return err == nil && got == step.want
		})
		t.Logf("SetSkillEnabled(pdf, %t) on A seen on B after %v", step.enabled, time.Since(set).Round(time.Millisecond))
		all, err := scB.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeDisabled: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all.GetSkills() {
			if s.GetName() == "pdf" && s.GetDisabled() == step.enabled {
				t.Errorf("after SetSkillEnabled(pdf, %t) on A, B's include_disabled listing says disabled=%t", step.enabled, s.GetDisabled())
			}
		}
	}
	if d := metricsB.storageOps(t).since(before); len(d) > 0 {
		t.Errorf("B made storage requests to see A's changes: %v; they must come from Redis", d)
	}
}

// TestCacheOutOfBandUploadWithinMaxStale changes a SKILL.md and adds a new
// skill with the real aws CLI, as users upload libraries, and checks that
// the first ListSkills once --skills.index-max-stale has passed since the
// upload shows both: every index listed before the upload is then too old
// to answer from. Only a lower bound on time is used, which a loaded
// machine cannot break.
func TestCacheOutOfBandUploadWithinMaxStale(t *testing.T) {
	const maxStale = time.Second
	awsCLI := testserver.AWSCLI(t)
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()),
		"--skills.index-refresh=200ms", "--skills.index-max-stale="+maxStale.String())...)...)
	sc := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	descriptions := func() map[string]string {
		t.Helper()
		resp, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range resp.GetSkills() {
			out[s.GetName()] = s.GetDescription()
		}
		return out
	}
	const changed, added = "Changed out of band.", "Added out of band."
	if d := descriptions(); d["pdf"] == changed || d["changelog"] != "" || len(d) != 3 {
		t.Fatalf("before the upload ListSkills = %v", d)
	}

	// One `aws s3 cp --recursive` of a folder laid out like the library.
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"docs/pdf/SKILL.md":  "---\nname: pdf\ndescription: " + changed + "\n---\n# PDF v2\n",
		"changelog/SKILL.md": "---\nname: changelog\ndescription: " + added + "\n---\nWrite the changelog.\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, awsCLI, "--endpoint-url", srv.Endpoint, "s3", "cp", "--recursive", "--only-show-errors", dir, "s3://"+bucket+"/alice/skills/")
	cmd.Env = srv.AWSEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp: %v\n%s", err, out)
	}
	uploaded := time.Now()
	time.Sleep(maxStale + time.Millisecond)
	if d := descriptions(); d["pdf"] != changed || d["changelog"] != added {
		t.Fatalf("%v after the upload ListSkills still shows %v; the bound is --skills.index-max-stale=%v", time.Since(uploaded).Round(time.Millisecond), d, maxStale)
	}
}

// TestCacheColdStartFromPersistedIndex starts a replica with an empty
// Redis on a 200-skill library another replica has indexed: its first
// ListSkills reads each layer's persisted index (one GET each, plus the
// settings) and lists each layer once (one page) when the persisted index is
// older than --skills.index-max-stale, not at all when it is younger, and
// never reads a SKILL.md.
func TestCacheColdStartFromPersistedIndex(t *testing.T) {
	const userSkills, sharedSkills = 200, 2
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s3c := srv.Client(t)
	errs := make([]error, userSkills)
	var wg sync.WaitGroup
	for i := range userSkills {
		wg.Go(func() {
			_, errs[i] = s3c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &bucket,
				Key:  aws.String(fmt.Sprintf("alice/skills/cat%d/skill-%03d/SKILL.md", i%10, i)),
				Body: strings.NewReader(fmt.Sprintf("---\nname: skill-%03d\ndescription: Skill number %d of the big library.\n---\nDo thing %d.\n", i, i, i))})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	put := s3Put(t, srv, bucket)
	for i := range sharedSkills {
		put(fmt.Sprintf("_shared/skills/shared-%d/SKILL.md", i), fmt.Sprintf("---\nname: shared-%d\ndescription: Shared skill %d.\n---\n", i, i))
	}
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")

	// The first replica, without Redis: it shares its work through the
	// persisted indexes alone.
	first := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, noScan)...)
	want, err := skillNames(alice, skillsvcv1.NewSkillsServiceClient(dial(t, first.addr)))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(want, ",") + 1; n != userSkills+sharedSkills {
		t.Fatalf("the first replica lists %d skills, want %d", n, userSkills+sharedSkills)
	}
	for _, key := range []string{"alice/settings/skills.index", "_shared/settings/skills.index"} {
		if _, err := s3c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &bucket, Key: aws.String(key)}); err != nil {
			t.Fatalf("the first replica persisted no %s: %v", key, err)
		}
	}

	for _, tc := range []struct {
		name  string
		flags []string
		want  storageOps
	}{
		// Every index is older than 1ms: listed once, before answering;
		// the shared library's listing also stats its protected-skills
		// object (issue 24), which the index lists with the library.
		{"older than max stale", []string{"--skills.index-refresh=1ms", "--skills.index-max-stale=1ms"}, storageOps{"list": 2, "get": 3, "stat": 1}},
		{"younger than max stale", []string{"--skills.index-refresh=1h", "--skills.index-max-stale=1h"}, storageOps{"get": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(append(redisFlags(red, newKeyPrefix()), tc.flags...), noScan)...)...)
			m := metricsFor(t, p)
			before := m.storageOps(t)
			got, err := skillNames(alice, skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("the cold replica lists\n  %s\nthe first\n  %s", got, want)
			}
			if d := m.storageOps(t).since(before); !maps.Equal(d, tc.want) {
				t.Errorf("the first ListSkills made storage requests %v, want %v (an index GET per layer, the settings GET, a LIST per layer only when stale)", d, tc.want)
			}
			if n := m.counter(t, `skillsvc_skills_index_loads_total{source="persisted"}`); n != 2 {
				t.Errorf("indexes loaded from the bucket = %v, want 2", n)
			}
		})
	}
}

// TestCacheColdFileReadsCoalesce sends as many concurrent ReadSkillFile
// calls for one file as one user may have in flight (--limits.concurrency)
// to a replica that has not read it yet: they share one GET. It does so for
// each file of the library in turn (either layer, SKILL.md or not), since a
// second GET shows up only when a call's cache miss and the shared read
// interleave badly.
func TestCacheColdFileReadsCoalesce(t *testing.T) {
	callers := quota.DefaultConfig().Concurrency
	files := []struct{ skill, file string }{
		{"pdf", "references/forms.md"},
		{"pdf", "scripts/extract.py"},
		{"pdf", "SKILL.md"},
		{"notes", "SKILL.md"},
		{"csv", "SKILL.md"},
	}
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	for _, tc := range []struct {
		name  string
		flags func() []string // a cache of its own at each call
	}{
		{"in process", func() []string { return nil }},
		{"redis", func() []string { return redisFlags(red, newKeyPrefix()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			putLibrary(s3Put(t, srv, bucket))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			alice := grpctest.AsCaller(ctx, "alice", "t1", "")
			// A replica that builds the index hashes (and so caches) every
			// skill file; this one starts from the index it persisted, with
			// a cache of its own, so the files are cold.
			builder := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(tc.flags(), "--skills.index-refresh=1h", "--skills.index-max-stale=1h", noScan)...)...)
			if _, err := skillNames(alice, skillsvcv1.NewSkillsServiceClient(dial(t, builder.addr))); err != nil {
				t.Fatal(err)
			}
			p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(tc.flags(), "--skills.index-refresh=1h", "--skills.index-max-stale=1h", noScan)...)...)
			sc := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
			// Indexes and settings are loaded: only the files are cold.
			if _, err := skillNames(alice, sc); err != nil {
				t.Fatal(err)
			}
			m := metricsFor(t, p)
			for _, f := range files {
				before := m.storageOps(t)
				start := make(chan struct{})
				errs := make([]error, callers)
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						<-start
						_, errs[i] = sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: f.skill, File: f.file})
					})
				}
				close(start)
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				if d := m.storageOps(t).since(before); !maps.Equal(d, storageOps{"get": 1}) {
					t.Errorf("%d concurrent cold reads of %s %s made storage requests %v, want exactly one get", callers, f.skill, f.file, d)
				}
			}
			t.Logf("file reads: %v hit, %v miss; %v calls waited for another's read",
				m.counter(t, `skillsvc_skills_file_reads_total{result="hit"}`), m.counter(t, `skillsvc_skills_file_reads_total{result="miss"}`),
				m.counter(t, `skillsvc_skills_coalesced_waits_total{what="file"}`))
		})
	}
}

// loadResult counts the calls of a load by outcome.
type loadResult struct {
	mu       sync.Mutex
	ok       int
	failed   int
	failures []error // the first few
}

func (r *loadResult) add(what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failed++
		if len(r.failures) < 10 {
			r.failures = append(r.failures, fmt.Errorf("%s: %w", what, err))
		}
		return
	}
	r.ok++
}

func (r *loadResult) oks() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok
}

// runLoad calls ListSkills, GetSkill and ReadSkillFile for alice from
// workers until the returned stop is called (or the test ends), which waits
// for them.
func runLoad(ctx context.Context, sc skillsvcv1.SkillsServiceClient, workers int) (*loadResult, func()) {
	res := &loadResult{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			id := grpctest.AsCaller(ctx, "alice", fmt.Sprintf("t%d", w), "")
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(id, 10*time.Second)
				switch i % 3 {
				case 0:
					got, err := skillNames(cctx, sc)
					if err == nil && got != allSkills {
						err = fmt.Errorf("lists %q, want %q", got, allSkills)
					}
					res.add("ListSkills", err)
				case 1:
					g, err := sc.GetSkill(cctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
					if err == nil && (len(g.GetFiles()) != 2 || !strings.HasPrefix(g.GetBody(), "# PDF")) {
						err = fmt.Errorf("files %v, body %q", g.GetFiles(), g.GetBody())
					}
					res.add("GetSkill", err)
				default:
					_, err := sc.ReadSkillFile(cctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "scripts/extract.py"})
					res.add("ReadSkillFile", err)
				}
				cancel()
			}
		})
	}
	return res, sync.OnceFunc(func() { close(done); wg.Wait() })
}

// TestCacheRedisOutageUnderLoad kills Redis while workers call ListSkills,
// GetSkill and ReadSkillFile: no call fails; after Redis restarts (empty)
// the binary closes its breaker and gets hits from Redis again.
func TestCacheRedisOutageUnderLoad(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.StartRestartableRedis(t) // our own: this test kills it
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	// Short intervals, so the calls keep going to Redis: the in-process
	// level forgets within 50ms, indexes are checked every 100ms.
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(redisFlags(&red.Redis, newKeyPrefix()),
		"--cache.lru.max-ttl=50ms", "--cache.redis.breaker.cool-down=200ms",
		"--skills.index-refresh=100ms", "--skills.index-max-stale=1s")...)...)
	sc := skillsvcv1.NewSkillsServiceClient(dialWithinLimits(t, p.addr)) // the workers call in a loop
	m := metricsFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const (
		redisHits   = `skillsvc_cache_hits_total{level="redis"}`
		redisErrors = `skillsvc_cache_errors_total{level="redis",operation="fetch"}`
		breaker     = `skillsvc_cache_breaker_state`
	)

	res, stop := runLoad(ctx, sc, 8)
	t.Cleanup(stop)
	pollUntil(t, 30*time.Second, "calls answered from Redis", func() bool { return res.oks() >= 100 && m.value(t, redisHits) > 0 })

	red.Stop(t)
	errorsBefore := m.value(t, redisErrors)
	pollUntil(t, 30*time.Second, "Redis failures to be noticed", func() bool { return m.value(t, redisErrors) > errorsBefore })
	pollUntil(t, 30*time.Second, "the breaker to open", func() bool { return m.value(t, breaker) != 0 })
	okDown := res.oks()
	pollUntil(t, 30*time.Second, "calls during the outage", func() bool { return res.oks() >= okDown+100 })
	hitsDown := m.value(t, redisHits)

	red.Restart(t)
	pollUntil(t, 30*time.Second, "the breaker to close", func() bool { return m.value(t, breaker) == 0 })
	pollUntil(t, 30*time.Second, "hits from the restarted Redis", func() bool { return m.value(t, redisHits) > hitsDown })
	okUp := res.oks()
	pollUntil(t, 30*time.Second, "calls after the outage", func() bool { return res.oks() >= okUp+100 })
	stop()

	if res.failed > 0 {
		t.Errorf("%d calls failed while Redis was down or back; the first:\n%v", res.failed, errors.Join(res.failures...))
	}
	t.Logf("%d calls answered; redis fetch errors %v, hits %v", res.oks(), m.value(t, redisErrors), m.value(t, redisHits))
}

// TestCacheStorageOutage stops MinIO under a warm replica: ListSkills,
// GetSkill, ReadSkillFile and /skills reads are still answered (from an
// index served past --skills.index-max-stale), also after a write failed;
// writes (Write, SetSkillEnabled) fail UNAVAILABLE, and succeed again once
// MinIO is back.
func TestCacheStorageOutage(t *testing.T) {
	srv := testserver.StartMinIO(t) // our own: this test stops it
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	// One attempt per storage request: a refused connection fails at once
	// instead of after the SDK's backoff (seconds), which only slows the
	// test; what is under test is what the cache answers meanwhile.
	p := startBinary(t, minioEnv(srv, "AWS_MAX_ATTEMPTS=1"), s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()),
		"--skills.index-refresh=100ms", "--skills.index-max-stale=500ms", "--skills.stale-if-error=1h")...)...)
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	m := metricsFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(alice, 15*time.Second) }

	// reads makes every read the cache must answer, and says which failed.
	reads := func() error {
		cctx, ccancel := call()
		defer ccancel()
		var errs []error
		if got, err := skillNames(cctx, sc); err != nil || got != "csv,pdf" {
			errs = append(errs, fmt.Errorf("ListSkills = %q, %v", got, err))
		}
		if g, err := sc.GetSkill(cctx, &skillsvcv1.GetSkillRequest{Path: "pdf"}); err != nil || len(g.GetFiles()) != 2 {
			errs = append(errs, fmt.Errorf("GetSkill = %v, %v", g.GetFiles(), err))
		}
		if f, err := sc.ReadSkillFile(cctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "references/forms.md"}); err != nil || !strings.Contains(f.GetContent(), "Fill forms") {
			errs = append(errs, fmt.Errorf("ReadSkillFile = %q, %v", f.GetContent(), err))
		}
		if r, err := fsc.Read(cctx, &skillsvcv1.ReadRequest{Path: "/skills/data/csv/SKILL.md"}); err != nil || !strings.Contains(r.GetContent(), "pandas") {
			errs = append(errs, fmt.Errorf("Read /skills/data/csv/SKILL.md = %q, %v", r.GetContent(), err))
		}
		return errors.Join(errs...)
	}
	write := func(n int) error {
		cctx, ccancel := call()
		defer ccancel()
		_, err := fsc.Write(cctx, &skillsvcv1.WriteRequest{Path: fmt.Sprintf("/workspace/f%d.md", n), Content: "x"})
		return err
	}
	setEnabled := func(enabled bool) error {
		cctx, ccancel := call()
		defer ccancel()
		_, err := sc.SetSkillEnabled(cctx, &skillsvcv1.SetSkillEnabledRequest{Path: "notes", Enabled: enabled})
		return err
	}

	// Warm, with settings stored (notes disabled) and a workspace file.
	if err := setEnabled(false); err != nil {
		t.Fatal(err)
	}
	if err := write(0); err != nil {
		t.Fatal(err)
	}
	if err := reads(); err != nil {
		t.Fatalf("before the outage: %v", err)
	}

	srv.Stop(t)
	// Reads go on; once the index is past max stale, they are answered
	// from it because revalidating fails.
	pollUntil(t, 60*time.Second, "a stale index served", func() bool {
		if err := reads(); err != nil {
			t.Fatalf("during the outage: %v", err)
		}
		return m.counter(t, "skillsvc_skills_index_stale_served_total") > 0
	})
	// Writes fail; a failed write must not cost the reads their cache.
	if err := write(1); status.Code(err) != codes.Unavailable {
		t.Errorf("Write during the outage: %v, want UNAVAILABLE", err)
	}
	if err := reads(); err != nil {
		t.Errorf("during the outage, after a failed Write: %v", err)
	}
	if err := setEnabled(true); status.Code(err) != codes.Unavailable {
		t.Errorf("SetSkillEnabled during the outage: %v, want UNAVAILABLE", err)
	}
	if err := reads(); err != nil {
		t.Errorf("during the outage, after a failed SetSkillEnabled: %v", err)
	}

	srv.Restart(t)
	pollUntil(t, 60*time.Second, "a Write to succeed after the outage", func() bool { return write(2) == nil })
	if err := setEnabled(true); err != nil {
		t.Errorf("SetSkillEnabled after the outage: %v", err)
	}
	if got, err := skillNames(alice, sc); err != nil || got != allSkills {
		t.Errorf("after the outage ListSkills = %q, %v; want %q", got, err, allSkills)
	}
	if !strings.Contains(p.output(), "serving the last library index; revalidating it failed") {
		t.Errorf("serving a stale index was not logged")
	}
}

// TestCacheWarmPathsMakeNoStorageRequests warms every read of the catalog
// and of the /skills mount, then makes each again and checks that it made
// no storage request: from process memory, and with Redis behind an
// in-process level that forgets at once (as on a replica that another one
// warmed).
func TestCacheWarmPathsMakeNoStorageRequests(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"in process", nil},
		{"redis", append(redisFlags(red, newKeyPrefix()), "--cache.lru.max-ttl=1ms")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			putLibrary(s3Put(t, srv, bucket))
			// No revalidation runs during the check.
			p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, append(tc.flags, "--skills.index-refresh=1h", "--skills.index-max-stale=1h", noScan)...)...)
			conn := dial(t, p.addr)
			sc := skillsvcv1.NewSkillsServiceClient(conn)
			fsc := skillsvcv1.NewFilesystemServiceClient(conn)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			alice := grpctest.AsCaller(ctx, "alice", "t1", "")
			mc, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: "http://" + p.httpAddr + "/mcp", HTTPClient: mcptest.Client(grpctest.CallerHeader("alice", "t1", ""))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			calls := []struct {
				name string
				call func() error
			}{
				{"ListSkills", func() error { _, err := skillNames(alice, sc); return err }},
				{"ListCategories", func() error {
					_, err := sc.ListCategories(alice, &skillsvcv1.ListCategoriesRequest{})
					return err
				}},
				{"FormatSkills", func() error {
					_, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{})
					return err
				}},
				{"SearchSkills", func() error {
					_, err := sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: "pdf tables"})
					return err
				}},
				{"GetSkill", func() error {
					_, err := sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "pdf"})
					return err
				}},
				// The hits' provenance from the libraries' kept indexes.
				{"MCP search_skills", func() error {
					r, err := mc.CallTool(ctx, &mcp.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": "pdf tables"}})
					if err == nil && (r.IsError || r.Meta["io.skillsvc/provenance"] == nil) {
						err = fmt.Errorf("result %+v without provenance", r)
					}
					return err
				}},
				{"RenderSkill", func() error {
					_, err := sc.RenderSkill(alice, &skillsvcv1.RenderSkillRequest{Path: "pdf", Arguments: "a.pdf"})
					return err
				}},
				{"ReadSkillFile", func() error {
					_, err := sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "references/forms.md"})
					return err
				}},
				{"List /skills", func() error {
					_, err := fsc.List(alice, &skillsvcv1.ListRequest{Path: "/skills"})
					return err
				}},
				{"List /skills/docs/pdf", func() error {
					_, err := fsc.List(alice, &skillsvcv1.ListRequest{Path: "/skills/docs/pdf"})
					return err
				}},
				{"Stat /skills/docs/pdf/SKILL.md", func() error {
					_, err := fsc.Stat(alice, &skillsvcv1.StatRequest{Path: "/skills/docs/pdf/SKILL.md"})
					return err
				}},
				{"Stat /skills/docs", func() error {
					_, err := fsc.Stat(alice, &skillsvcv1.StatRequest{Path: "/skills/docs"})
					return err
				}},
				{"Read /skills/docs/pdf/SKILL.md", func() error {
					_, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/skills/docs/pdf/SKILL.md"})
					return err
				}},
				{"Read /skills/data/csv/SKILL.md (shared)", func() error {
					_, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/skills/data/csv/SKILL.md"})
					return err
				}},
				{"Glob /skills", func() error {
					g, err := fsc.Glob(alice, &skillsvcv1.GlobRequest{Path: "/skills", Pattern: "**/*.md"})
					if err == nil && len(g.GetMatches()) != 4 {
						err = fmt.Errorf("%d matches, want 4", len(g.GetMatches()))
					}
					return err
				}},
				{"Grep /skills", func() error {
					g, err := fsc.Grep(alice, &skillsvcv1.GrepRequest{Path: "/skills", Pattern: "Fill forms|pandas", Regex: true})
					if err == nil && len(g.GetMatches()) != 2 {
						err = fmt.Errorf("%d matches, want 2", len(g.GetMatches()))
					}
					return err
				}},
			}
			for _, c := range calls {
				if err := c.call(); err != nil {
					t.Fatalf("warming %s: %v", c.name, err)
				}
			}
			m := metricsFor(t, p)
			for _, c := range calls {
				before := m.storageOps(t)
				if err := c.call(); err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if d := m.storageOps(t).since(before); len(d) > 0 {
					t.Errorf("warm %s made storage requests %v", c.name, d)
				}
			}
			if t.Failed() {
				return
			}
			// And once more, all together.
			before := m.storageOps(t)
			for _, c := range calls {
				if err := c.call(); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
			if d := m.storageOps(t).since(before); len(d) > 0 {
				t.Errorf("warm calls made storage requests %v", d)
			}
		})
	}
}
