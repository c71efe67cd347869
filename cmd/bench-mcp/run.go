package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	user         = "alice"
	thread       = "bench-mcp"
	bucket       = "bench-mcp"
	startTimeout = time.Minute
)

// bench is one run: the servers, the library and the rows measured so far.
type bench struct {
	opts   options
	cl     *loadbench.Cleanups
	log    io.Writer
	minio  *testserver.MinIO
	redis  *testserver.Redis
	rdb    *redis.Client
	proxy  *testserver.S3Proxy
	bin    string
	dir    string
	lib    []skill
	want   map[string]map[string]resource
	phases []*phase
	// negotiated is the protocol version of the last session opened.
	negotiated string
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench-mcp: "+format+"\n", args...)
}

// run runs the benchmark and prints the table to out. It returns the exit
// code: 1 when the run could not be completed or any request failed or was
// refused.
func run(ctx context.Context, o options, cl *loadbench.Cleanups, out, log io.Writer) int {
	b, err := runBench(ctx, o, cl, log)
	if b != nil {
		b.print(out)
	}
	if err != nil {
		fmt.Fprintln(log, "bench-mcp:", err)
		return 1
	}
	for _, p := range b.phases {
		if p.failures+p.refusals > 0 {
			return 1
		}
	}
	return 0
}

// runBench starts the servers, seeds the library and runs the phases. The
// bench it returns holds the rows measured, also when an error stopped the
// run; nil when nothing could be measured.
func runBench(ctx context.Context, o options, cl *loadbench.Cleanups, log io.Writer) (*bench, error) {
	b := &bench{opts: o, cl: cl, log: log}
	if err := b.setUp(ctx); err != nil {
		return nil, err
	}
	return b, b.runPhases(ctx)
}

func (b *bench) setUp(ctx context.Context) (err error) {
	if b.dir, err = os.MkdirTemp("", "skillsvc-bench-mcp-"); err != nil {
		return err
	}
	b.cl.Add(func() { os.RemoveAll(b.dir) })
	b.logf("starting MinIO, redis-server and the S3 proxy (%v)", b.opts.latency)
	m, stop, err := testserver.RunMinIO()
	if err != nil {
		return fmt.Errorf("minio: %w (build it with `make tools`, or set SKILLSVC_MINIO_BIN)", err)
	}
	b.cl.Add(stop)
	r, stop, err := testserver.RunRedis()
	if err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	b.cl.Add(stop)
	if b.proxy, err = testserver.StartS3Proxy(m.Endpoint, b.opts.latency); err != nil {
		return fmt.Errorf("S3 proxy: %w", err)
	}
	b.cl.Add(func() { b.proxy.Close() })
	b.minio, b.redis = m, r
	b.rdb = redis.NewClient(&redis.Options{
		Addr:                     r.Addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	b.cl.Add(func() { b.rdb.Close() })

	b.lib = newLibrary(b.opts.categories, b.opts.perCategory)
	b.want = expected(b.lib)
	files, size := libraryBytes(b.lib)
	start := time.Now()
	c := m.S3()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("creating bucket: %w", err)
	}
	if err := seed(ctx, c, bucket, user+"/skills/", b.lib, b.opts.seedWorkers); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	b.logf("seeded %s skills (%s files, %s) in %s", loadbench.Count(float64(len(b.lib))), loadbench.Count(float64(files)),
		loadbench.Bytes(size), loadbench.Duration(time.Since(start)))

	if b.bin = b.opts.skillsvcBin; b.bin == "" {
		b.logf("building ./cmd/skillsvc")
		if b.bin, err = testserver.BuildSkillsvc(ctx, b.dir); err != nil {
			return err
		}
	}
	return nil
}

// startSkillsvc starts a replica with its default settings on the bucket
// behind the proxy and Redis, and returns once it serves. Only what a
// benchmark must set is set: loopback ports, the storage and cache
// addresses, and a readiness probe of once an hour so its requests stay
// out of the counts.
func (b *bench) startSkillsvc(ctx context.Context) (*testserver.Skillsvc, error) {
	dir, err := os.MkdirTemp(b.dir, "skillsvc-")
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--listen=127.0.0.1:0",
		"--http.listen=127.0.0.1:0",
		"--storage=s3",
		"--s3.bucket=" + bucket,
		"--s3.endpoint=" + b.proxy.URL,
		"--s3.path-style",
		"--s3.region=" + b.minio.Region,
		"--cache.redis.addrs=" + b.redis.Addr,
		"--probe.interval=1h",
	}, b.opts.skillsvcFlags...)
	p, err := testserver.RunSkillsvc(ctx, testserver.SkillsvcConfig{
		Bin: b.bin, Args: args, Env: b.minio.SkillsvcEnv(), Dir: dir, Wait: []string{"serving http"},
	}, startTimeout)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.cl.Add(func() { p.Stop(); os.RemoveAll(dir) })
	return p, nil
}

// measure runs f as the row name and notes the storage requests and Redis
// commands made meanwhile.
func (b *bench) measure(ctx context.Context, name string, f func(*phase) error) (*phase, error) {
	ph := &phase{name: name}
	b.phases = append(b.phases, ph)
	s3Before := b.proxy.Counts()
	redisBefore, redisErr := b.redisCommands(ctx)
	start := time.Now()
	err := f(ph)
	ph.wall = time.Since(start)
	ph.storage = b.proxy.Counts().Sub(s3Before)
	if redisAfter, err := b.redisCommands(ctx); err == nil && redisErr == nil {
		ph.redis = redisAfter - redisBefore - 1 // the INFO before is counted too
	} else {
		ph.redis = -1
	}
	if err != nil && !errors.As(err, new(errCounted)) {
		ph.fail("%v", err)
	}
	b.logf("%s: %s in %s, %d errors (%d refusals), %d S3 requests", name, ph.requests, loadbench.Duration(ph.wall),
		ph.failures+ph.refusals, ph.refusals, ph.storage.Total())
	return ph, err
}

// redisCommands is the server's total_commands_processed.
func (b *bench) redisCommands(ctx context.Context) (int64, error) {
	info, err := b.rdb.Info(ctx, "stats").Result()
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "total_commands_processed:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("no total_commands_processed in INFO stats")
}

// runPhases runs the rows of the table in order; an error means the rest
// could not run.
func (b *bench) runPhases(ctx context.Context) error {
	endpoint := func(p *testserver.Skillsvc) string { return "http://" + p.Addrs["serving http"] + "/mcp" }
	newHost := func(p *testserver.Skillsvc) *host {
		return newHost(endpoint(p), user, thread, b.opts.protocol, b.opts.rate, b.opts.burst)
	}

	// 1. The first replica: nothing in Redis, no persisted index.
	if err := b.rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	p, err := b.startSkillsvc(ctx)
	if err != nil {
		return err
	}
	h := newHost(p)
	if err := b.session(ctx, h, "1. cold, empty Redis"); err != nil {
		return err
	}
	h.close(ctx)
	p.Stop()

	// 2. A new process on the same Redis; 3. the same process again.
	if p, err = b.startSkillsvc(ctx); err != nil {
		return err
	}
	defer p.Stop()
	h = newHost(p)
	defer h.close(ctx)
	if err := b.session(ctx, h, "2. new process, warm Redis"); err != nil {
		return err
	}
	if _, err := b.measure(ctx, "3. warm: skills/list, all pages", func(ph *phase) error { return h.listAll(ctx, ph, b.want) }); err != nil {
		return err
	}

	// 4. Single skills and files on the warm process.
	if b.opts.gets > 0 {
		if _, err := b.measure(ctx, "4. skills/get", func(ph *phase) error { return h.getSkills(ctx, ph, b.lib, b.opts.gets, b.want) }); err != nil {
			return err
		}
	}
	if b.opts.reads > 0 {
		if _, err := b.measure(ctx, "4. resources/read", func(ph *phase) error { return h.readFiles(ctx, ph, b.lib, b.opts.reads, b.want) }); err != nil {
			return err
		}
	}
	return nil
}

// session opens an MCP session and lists every skill, as a host does when
// it connects, as two rows.
func (b *bench) session(ctx context.Context, h *host, name string) error {
	if _, err := b.measure(ctx, name+": initialize", func(ph *phase) error {
		ph.requests = "initialize + initialized"
		return h.initialize(ctx, ph)
	}); err != nil {
		return err
	}
	b.negotiated = h.protocol
	_, err := b.measure(ctx, name+": skills/list, all pages", func(ph *phase) error { return h.listAll(ctx, ph, b.want) })
	return err
}
