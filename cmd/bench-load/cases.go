package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The rows of the table, in order.
const (
	caseNaive       = "naive: LIST, then GET each SKILL.md in turn"
	caseNoIndex     = "first ListSkills: new process, no index, empty Redis"
	casePersisted   = "first ListSkills: new process, persisted index, empty Redis"
	caseWarmRedis   = "first ListSkills: new process, warm Redis"
	caseListWarm    = "ListSkills warm, p50 / p99"
	caseGetCold     = "first GetSkill: new process, empty Redis"
	caseGetWarm     = "GetSkill warm, p50 / p99"
	caseRenderWarm  = "RenderSkill warm, p50 / p99"
	caseReadWarm    = "ReadSkillFile (" + guideFile + ") warm, p50 / p99"
	caseThroughput  = "GetSkill throughput, %d clients"
	caseRSS         = "skillsvc RSS after the warm runs"
	opsMetric       = "skillsvc_objstore_operations_total"
	lruBytesMetric  = "skillsvc_cache_lru_bytes"
	heapMetric      = "go_memstats_heap_inuse_bytes"
	maxPageSize     = 1000 // skillsvc's default --skills.max-page-size
	callTimeout     = 2 * time.Minute
	libraryUser     = "alice"
	libraryThread   = "bench"
	seedConnections = 64
)

// bench runs the cases against shared servers and fills the report.
type bench struct {
	opts     options
	srv      *servers
	direct   *s3.Client // to MinIO itself: seeding and index deletes
	viaProxy *s3.Client // through the latency proxy: the naive baseline
	svc      skillsvcConfig
	svcErr   error // why no skillsvc can start (a failed build): every skillsvc case reports it
	cl       *loadbench.Cleanups
	rep      *report
	log      io.Writer
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench-load: "+format+"\n", args...)
}

// record puts a cell in the table and logs it as it happens.
func (b *bench) record(name string, size int, c cell) {
	b.rep.set(name, size, c)
	msg := c.text()
	if c.s3 != nil {
		msg += ", S3 requests " + c.requestsText()
		if b.opts.verbose && c.s3.ops != nil {
			msg += " [" + formatOps(c.s3.ops) + "]"
		}
	}
	b.logf("%d skills: %s: %s", size, name, msg)
}

// runSize seeds a library of size skills in its own bucket and runs every
// case on it.
func (b *bench) runSize(ctx context.Context, size int) {
	bucket := fmt.Sprintf("bench-%d", size)
	listCases := []string{caseNoIndex, casePersisted, caseWarmRedis, caseListWarm}
	skillCases := []string{caseGetCold, caseGetWarm, caseRenderWarm, caseReadWarm, fmt.Sprintf(caseThroughput, b.opts.clients), caseRSS}
	failAll := func(err error, names ...string) {
		for _, name := range names {
			b.record(name, size, cell{err: err})
		}
	}
	if err := b.seed(ctx, bucket, []string{libraryUser}, size); err != nil {
		failAll(err, append(append([]string{caseNaive}, listCases...), skillCases...)...)
		return
	}
	b.record(caseNaive, size, b.measured(ctx, nil, func() (string, error) {
		return b.naive(ctx, bucket, skillsPrefix(libraryUser), size)
	}))
	if b.svcErr != nil {
		failAll(b.svcErr, append(listCases, skillCases...)...)
		return
	}
	b.runListCases(ctx, bucket, size)
	s, err := b.fresh(ctx, bucket, false, nil)
	if err != nil {
		failAll(err, skillCases...)
		return
	}
	b.runSkillCases(ctx, s, size)
	b.stop(s)
	if b.opts.usageRounds > 0 && size == slices.Max(b.opts.sizes) {
		b.runUsageCostOneUser(ctx, bucket, size)
	}
}

// listWarmUp is how many unmeasured ListSkills calls precede the warm ones.
const listWarmUp = 20

// runListCases times the first ListSkills of three new processes, each
// finding less to rebuild than the one before, then warm ListSkills.
func (b *bench) runListCases(ctx context.Context, bucket string, size int) {
	users := []string{libraryUser}

	// No index anywhere: nothing in Redis, no persisted index objects.
	s, err := b.fresh(ctx, bucket, true, users)
	b.record(caseNoIndex, size, b.firstList(ctx, s, err, size))
	b.stop(s)
	b.rep.note("%s skills: after the no-index case: %s.", loadbench.Count(float64(size)), indexState(ctx, b.direct, bucket, users))

	// A new replica finds the persisted index but an empty Redis.
	s, err = b.fresh(ctx, bucket, false, nil)
	b.record(casePersisted, size, b.firstList(ctx, s, err, size))
	b.stop(s)

	// A new replica with Redis warm from the one before, then warm calls.
	s, err = b.start(ctx, bucket)
	b.record(caseWarmRedis, size, b.firstList(ctx, s, err, size))
	if err != nil {
		b.record(caseListWarm, size, cell{err: err})
		return
	}
	defer b.stop(s)
	// Warm as the other warm rows are: the connection past its first calls
	// (HTTP/2 windows grown to the reply) and the process past its first
	// listing's leftovers, not the calls right after the first listing.
	for range listWarmUp {
		if err := listSkills(ctx, s.conn, libraryUser, size); err != nil {
			b.record(caseListWarm, size, cell{err: fmt.Errorf("warm-up: %w", err)})
			return
		}
	}
	b.record(caseListWarm, size, b.measured(ctx, s, func() (string, error) {
		return percentiles(b.opts.iterations, func(int) error { return listSkills(ctx, s.conn, libraryUser, size) })
	}))
}

// runSkillCases times one skill's first GetSkill on s, a new process with
// an empty Redis, then warm GetSkill, RenderSkill and ReadSkillFile, the
// GetSkill throughput and the memory s holds at the end.
func (b *bench) runSkillCases(ctx context.Context, s *skillsvc, size int) {
	sc := skillsvcv1.NewSkillsServiceClient(s.conn)
	b.record(caseGetCold, size, b.measured(ctx, s, func() (string, error) {
		start := time.Now()
		if err := getSkill(ctx, sc, skillName(size/2)); err != nil {
			return "", err
		}
		return loadbench.Duration(time.Since(start)), nil
	}))
	// The warm rows measure calls, not the background scans of the
	// library's skills the first calls started (--library.scan).
	b.settle(ctx, "skillsvc", "its first GetSkill", s.proc.Pid())
	warm := func(call func(i int) error) cell {
		n := min(size, b.opts.iterations)
		for i := range n { // every skill the measured calls use, once
			if err := call(i); err != nil {
				return cell{err: fmt.Errorf("warm-up: %w", err)}
			}
		}
		return b.measured(ctx, s, func() (string, error) {
			return percentiles(b.opts.iterations, func(i int) error { return call(i % n) })
		})
	}
	b.record(caseGetWarm, size, warm(func(i int) error { return getSkill(ctx, sc, skillName(i)) }))
	b.record(caseRenderWarm, size, warm(func(i int) error {
		ctx, cancel := callContext(ctx)
		defer cancel()
		resp, err := sc.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: skillName(i), Arguments: "report.csv"})
		if err == nil && !strings.Contains(resp.GetText(), "report.csv") {
			err = fmt.Errorf("RenderSkill(%s): arguments missing from the text", skillName(i))
		}
		return err
	}))
	b.record(caseReadWarm, size, warm(func(i int) error {
		ctx, cancel := callContext(ctx)
		defer cancel()
		resp, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: skillName(i), File: guideFile})
		if err == nil && len(resp.GetContent()) < guideSize {
			err = fmt.Errorf("ReadSkillFile(%s): %d bytes, want %d or more", skillName(i), len(resp.GetContent()), guideSize)
		}
		return err
	}))
	b.record(fmt.Sprintf(caseThroughput, b.opts.clients), size, b.throughput(ctx, s, size))
	rss, err := s.rss()
	b.record(caseRSS, size, cell{value: loadbench.Bytes(rss), err: err})
}

// runUsers seeds users libraries of size skills in one bucket, lists each
// user's skills once on one new process with an empty Redis, and reports
// what that process holds afterwards.
func (b *bench) runUsers(ctx context.Context, n, size int) {
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i+1)
	}
	row := func(name string, c cell) {
		b.rep.users = append(b.rep.users, usersRow{name, c})
		b.logf("%d users: %s: %s", n, name, c.text())
	}
	const (
		rowAll  = "first ListSkills of every user, one after another"
		rowMean = "first ListSkills, mean per user"
		rowRSS  = "skillsvc RSS afterwards"
		rowLRU  = lruBytesMetric + " afterwards"
		rowHeap = heapMetric + " afterwards"
	)
	fail := func(err error) {
		for _, name := range []string{rowAll, rowMean, rowRSS, rowLRU, rowHeap} {
			row(name, cell{err: err})
		}
	}
	if b.svcErr != nil {
		fail(b.svcErr)
		return
	}
	bucket := "bench-users"
	if err := b.seed(ctx, bucket, users, size); err != nil {
		fail(err)
		return
	}
	s, err := b.fresh(ctx, bucket, true, users)
	if err != nil {
		fail(err)
		return
	}
	defer b.stop(s)
	var total time.Duration
	all := b.measured(ctx, s, func() (string, error) {
		start := time.Now()
		for _, u := range users {
			if err := listSkills(ctx, s.conn, u, size); err != nil {
				return "", fmt.Errorf("%s: %w", u, err)
			}
		}
		total = time.Since(start)
		return loadbench.Duration(total), nil
	})
	row(rowAll, all)
	mean := cell{err: all.err}
	if all.err == nil {
		mean.value = loadbench.Duration(total / time.Duration(n))
	}
	row(rowMean, mean)
	rss, err := s.rss()
	row(rowRSS, cell{value: loadbench.Bytes(rss), err: err})
	// The LRU is bounded by --cache.lru.max-bytes; the Go heap shows what
	// else the process keeps, and RSS what it has not given back.
	m, err := s.scrape(ctx)
	for _, g := range []struct{ row, metric string }{{rowLRU, lruBytesMetric}, {rowHeap, heapMetric}} {
		c := cell{err: err}
		if err == nil {
			c.value = loadbench.Bytes(int64(m.sum(g.metric)))
		}
		row(g.row, c)
	}
}

// seed creates bucket and uploads a library of size skills for each user
// straight to MinIO (not through the proxy: seeding is not measured).
func (b *bench) seed(ctx context.Context, bucket string, users []string, size int) error {
	start := time.Now()
	if err := createBucket(ctx, b.direct, bucket); err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucket, err)
	}
	if err := seedLibraries(ctx, b.direct, bucket, users, size, b.opts.seedWorkers); err != nil {
		return fmt.Errorf("seeding %s: %w", bucket, err)
	}
	b.logf("seeded %s × %s skills (%s objects) in %s", loadbench.Count(float64(len(users))), loadbench.Count(float64(size)),
		loadbench.Count(float64(2*len(users)*size)), loadbench.Duration(time.Since(start)))
	b.settleMinIO(ctx)
	return nil
}

// naive is the baseline without skillsvc: a paged LIST of the library, then
// a full GET of every SKILL.md, one after another, through the proxy.
func (b *bench) naive(ctx context.Context, bucket, prefix string, want int) (string, error) {
	start := time.Now()
	var keys []string
	pages := s3.NewListObjectsV2Paginator(b.viaProxy, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list: %w", err)
		}
		for _, o := range page.Contents {
			if key := aws.ToString(o.Key); strings.HasSuffix(key, "/SKILL.md") {
				keys = append(keys, key)
			}
		}
	}
	for _, key := range keys {
		out, err := b.viaProxy.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return "", fmt.Errorf("get %s: %w", key, err)
		}
		_, err = io.Copy(io.Discard, out.Body)
		out.Body.Close()
		if err != nil {
			return "", fmt.Errorf("get %s: %w", key, err)
		}
	}
	if len(keys) != want {
		return "", fmt.Errorf("found %d SKILL.md, want %d", len(keys), want)
	}
	return loadbench.Duration(time.Since(start)), nil
}

// start starts a skillsvc process on bucket, leaving Redis and the bucket
// as they are.
func (b *bench) start(ctx context.Context, bucket string) (*skillsvc, error) {
	return startSkillsvc(ctx, b.svc, bucket, b.cl)
}

// fresh empties Redis (and, with dropIndex, deletes the persisted indexes
// of users and the shared library) before starting a process.
func (b *bench) fresh(ctx context.Context, bucket string, dropIndex bool, users []string) (*skillsvc, error) {
	if err := b.srv.flushRedis(ctx); err != nil {
		return nil, fmt.Errorf("FLUSHALL: %w", err)
	}
	if dropIndex {
		if err := deleteIndexes(ctx, b.direct, bucket, users); err != nil {
			return nil, err
		}
	}
	return b.start(ctx, bucket)
}

func (b *bench) stop(s *skillsvc) {
	if s != nil {
		s.stop()
	}
}

// firstList times the first ListSkills of a process that start returned.
func (b *bench) firstList(ctx context.Context, s *skillsvc, startErr error, size int) cell {
	if startErr != nil {
		return cell{err: startErr}
	}
	var before metrics
	if b.opts.verbose {
		before, _ = s.scrape(ctx)
	}
	c := b.measured(ctx, s, func() (string, error) {
		start := time.Now()
		if err := listSkills(ctx, s.conn, libraryUser, size); err != nil {
			return "", err
		}
		return loadbench.Duration(time.Since(start)), nil
	})
	if after, err := s.scrape(ctx); err == nil && before != nil {
		// Where the call's time went: the server's share (handler and
		// interceptors), and where the layer's parsed heads came from.
		handling := delta(before, after, "grpc_server_handling_seconds_sum")
		var server float64
		for k, v := range handling {
			if strings.Contains(k, `grpc_method="ListSkills"`) {
				server += v
			}
		}
		b.logf("%d skills: first ListSkills: %s in all, %s in the server; heads %v", size, c.value,
			loadbench.Duration(time.Duration(server*float64(time.Second))), delta(before, after, "skillsvc_skills_layer_heads_total"))
	}
	return c
}

// measured runs f and adds the storage requests it caused: those the proxy
// saw, and skillsvc's own count when s is not nil.
func (b *bench) measured(ctx context.Context, s *skillsvc, f func() (string, error)) cell {
	var before metrics
	if s != nil {
		before, _ = s.scrape(ctx)
	}
	proxyBefore := b.srv.proxy.Requests()
	value, err := f()
	req := &requests{proxy: b.srv.proxy.Requests() - proxyBefore}
	if before != nil {
		if after, scrapeErr := s.scrape(ctx); scrapeErr == nil {
			req.ops = map[string]float64{}
			was := before.byLabel(opsMetric)
			for k, v := range after.byLabel(opsMetric) {
				req.ops[k] = v - was[k]
			}
		}
	}
	return cell{value: value, s3: req, err: err}
}

// throughput runs GetSkill from opts.clients clients, each on its own
// connection, for opts.duration, spreading the calls over every skill. Every
// skill is read once first, in parallel and not counted, so the rate is that
// of a warm catalog rather than a mix of first and later reads.
func (b *bench) throughput(ctx context.Context, s *skillsvc, size int) cell {
	clients := make([]skillsvcv1.SkillsServiceClient, b.opts.clients)
	for i := range clients {
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return cell{err: err}
		}
		defer conn.Close()
		if err := testserver.WaitServing(ctx, conn); err != nil { // connected before the clock starts
			return cell{err: err}
		}
		clients[i] = skillsvcv1.NewSkillsServiceClient(conn)
	}
	if _, err := spreadGetSkill(ctx, clients, size, time.Time{}); err != nil {
		return cell{err: fmt.Errorf("warm-up: %w", err)}
	}
	return b.measured(ctx, s, func() (string, error) {
		start := time.Now()
		calls, err := spreadGetSkill(ctx, clients, size, start.Add(b.opts.duration))
		return loadbench.Count(float64(calls)/time.Since(start).Seconds()) + " req/s", err
	})
}

// spreadGetSkill has every client call GetSkill on its share of the skills
// (client g on skills g, g+len(clients), …): until deadline, or each skill
// once when deadline is zero. It returns the calls that succeeded and the
// first error, which stops that client.
func spreadGetSkill(ctx context.Context, clients []skillsvcv1.SkillsServiceClient, size int, deadline time.Time) (int64, error) {
	var (
		calls    atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for g, c := range clients {
		wg.Go(func() {
			for i := g; ; i += len(clients) {
				if deadline.IsZero() && i >= size || !deadline.IsZero() && !time.Now().Before(deadline) {
					return
				}
				if err := getSkill(ctx, c, skillName(i%size)); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return calls.Load(), firstErr
}

// percentiles makes n calls one after another and returns their p50 and p99.
func percentiles(n int, call func(i int) error) (string, error) {
	ds := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if err := call(i); err != nil {
			return "", fmt.Errorf("call %d: %w", i+1, err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return loadbench.Duration(loadbench.Percentile(ds, 50)) + " / " + loadbench.Duration(loadbench.Percentile(ds, 99)), nil
}

// as adds a caller's identity: one thread of the user.
func as(ctx context.Context, user string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, auth.UserKey, user, auth.ThreadKey, libraryThread)
}

func callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(as(ctx, libraryUser), callTimeout)
}

// listSkills lists the first page of user's skills, as large as the library
// (up to the largest page), and checks that every skill is there, cleanly.
func listSkills(ctx context.Context, conn *grpc.ClientConn, user string, size int) error {
	return listSkillsAs(ctx, skillsvcv1.NewSkillsServiceClient(conn), user, min(size, maxPageSize))
}

// listSkillsAs lists want skills in one page as user, and checks that they
// are all there, cleanly.
func listSkillsAs(ctx context.Context, c skillsvcv1.SkillsServiceClient, user string, want int) error {
	ctx, cancel := context.WithTimeout(as(ctx, user), callTimeout)
	defer cancel()
	resp, err := c.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: int32(want)})
	if err != nil {
		return err
	}
	if got := len(resp.GetSkills()); got != want {
		return fmt.Errorf("ListSkills as %s returned %d skills, want %d", user, got, want)
	}
	// The seeded skills are meant to be clean: a warning means the numbers
	// are not those of a realistic library. The one a user's skill gets for
	// overriding a shared one by name, as seeded, is the exception.
	for _, sk := range resp.GetSkills() {
		for _, w := range sk.GetWarnings() {
			if !strings.HasPrefix(w, "hides the shared skill ") {
				return fmt.Errorf("ListSkills: %s has warnings: %q", sk.GetName(), sk.GetWarnings())
			}
		}
	}
	return nil
}

func getSkill(ctx context.Context, c skillsvcv1.SkillsServiceClient, name string) error {
	return getSkillAs(ctx, c, libraryUser, name)
}

// getSkillAs gets the skill name as user and checks it is a seeded one.
func getSkillAs(ctx context.Context, c skillsvcv1.SkillsServiceClient, user, name string) error {
	ctx, cancel := context.WithTimeout(as(ctx, user), callTimeout)
	defer cancel()
	resp, err := c.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: name})
	if err != nil {
		return err
	}
	if len(resp.GetRaw()) < skillMDSize/2 || len(resp.GetFiles()) == 0 {
		return fmt.Errorf("GetSkill(%s) as %s: %d bytes and %d files, want the seeded SKILL.md and its guide", name, user, len(resp.GetRaw()), len(resp.GetFiles()))
	}
	return nil
}
