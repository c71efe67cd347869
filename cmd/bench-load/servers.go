package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	startTimeout = time.Minute
)

// servers are the processes every case shares.
type servers struct {
	minio *testserver.MinIO
	redis *testserver.Redis
	proxy *testserver.S3Proxy
	rdb   *redis.Client
	relay *eventRelay // MinIO's webhook target (events.go)
}

func startServers(latency time.Duration, c *loadbench.Cleanups) (*servers, error) {
	relay, err := startEventRelay()
	if err != nil {
		return nil, fmt.Errorf("event relay: %w", err)
	}
	c.Add(func() { relay.Close() })
	m, stop, err := testserver.RunMinIO(testserver.WebhookEnv(eventsTarget, relay.URL, relay.token)...)
	if err != nil {
		return nil, fmt.Errorf("minio: %w (build it with `make tools`, or set SKILLSVC_MINIO_BIN)", err)
	}
	c.Add(stop)
	r, stop, err := testserver.RunRedis()
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	c.Add(stop)
	p, err := testserver.StartS3Proxy(m.Endpoint, latency)
	if err != nil {
		return nil, fmt.Errorf("latency proxy: %w", err)
	}
	c.Add(func() { p.Close() })
	rdb := redis.NewClient(&redis.Options{
		Addr:                     r.Addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	c.Add(func() { rdb.Close() })
	return &servers{minio: m, redis: r, proxy: p, rdb: rdb, relay: relay}, nil
}

func (s *servers) flushRedis(ctx context.Context) error {
	return s.rdb.FlushAll(ctx).Err()
}

// skillsvcConfig is what every skillsvc process of a run shares; only the
// bucket changes between libraries.
type skillsvcConfig struct {
	bin         string
	dir         string // parent of each process's working directory
	servers     *servers
	lruMaxBytes int64    // 0: skillsvc's default
	extra       []string // -skillsvc-flag values, passed through last so they win
	// flags are the case's own, before extra; wait the "serving…" log
	// messages to wait for besides "serving metrics".
	flags, wait []string
	// liftLimits says why the process runs without per-user limits
	// (testserver.SkillsvcConfig.LiftLimits).
	liftLimits string
}

// oneUserIsTheLoad is why the library-size cases run without per-user
// limits.
const oneUserIsTheLoad = "bench-load is a benchmark, not a test: one user is the load, and per-user limits would measure themselves"

func (c skillsvcConfig) args(bucket string) []string {
	args := []string{
		"--listen=127.0.0.1:0",
		"--metrics.listen=127.0.0.1:0",
		"--http.listen=",
		"--log.format=json",
		"--log.level=info",
		"--storage=s3",
		"--s3.bucket=" + bucket,
		"--s3.endpoint=" + c.servers.proxy.URL,
		"--s3.path-style",
		"--s3.region=" + c.servers.minio.Region,
		"--cache.redis.addrs=" + c.servers.redis.Addr,
		// The readiness probe would add storage requests to whatever case
		// is running; an hour keeps it out of the counts.
		"--probe.interval=1h",
	}
	if c.lruMaxBytes > 0 {
		args = append(args, "--cache.lru.max-bytes="+strconv.FormatInt(c.lruMaxBytes, 10))
	}
	args = append(args, c.flags...)
	return append(args, c.extra...)
}

// skillsvc is one running skillsvc process with a gRPC connection to it.
type skillsvc struct {
	proc        *testserver.Skillsvc
	addr        string
	metricsAddr string
	httpAddr    string // "" without --http.listen
	conn        *grpc.ClientConn
	dir         string
	stopOnce    sync.Once
}

// startSkillsvc starts a process on bucket and returns once its health
// service says SERVING, so the first call a case times is a real first
// call and not the process starting up. Its environment has no SKILLSVC_ or
// AWS_ setting of the harness's (a developer's own configuration must not
// change what is measured).
func startSkillsvc(ctx context.Context, c skillsvcConfig, bucket string, cl *loadbench.Cleanups) (*skillsvc, error) {
	dir, err := os.MkdirTemp(c.dir, "skillsvc-")
	if err != nil {
		return nil, err
	}
	p, err := testserver.RunSkillsvc(ctx, testserver.SkillsvcConfig{
		Bin: c.bin, Args: c.args(bucket), Env: c.servers.minio.SkillsvcEnv(), Dir: dir, Wait: append([]string{"serving metrics"}, c.wait...),
		LiftLimits: c.liftLimits,
	}, startTimeout)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &skillsvc{proc: p, addr: p.Addrs["serving"], metricsAddr: p.Addrs["serving metrics"], httpAddr: p.Addrs["serving http"], dir: dir}
	cl.Add(s.stop)
	if s.conn, err = grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop shuts the process down as an orchestrator would (SIGTERM, then
// SIGKILL) and waits for it.
func (s *skillsvc) stop() {
	s.stopOnce.Do(func() {
		if s.conn != nil {
			s.conn.Close()
		}
		s.proc.Stop()
		os.RemoveAll(s.dir)
	})
}

// metrics is one scrape of /metrics: sample name with labels → value.
type metrics map[string]float64

func (s *skillsvc) scrape(ctx context.Context) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.metricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	m := metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		// name{labels} value, and label values hold no spaces here.
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}

// sum adds every sample of the metric name, whatever its labels.
func (m metrics) sum(name string) float64 {
	var total float64
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			total += v
		}
	}
	return total
}

// byLabel is every sample of name by its label set ({operation="list"}).
func (m metrics) byLabel(name string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if labels, ok := strings.CutPrefix(k, name+"{"); ok {
			out[strings.TrimSuffix(labels, "}")] = v
		}
	}
	return out
}

// rss is the process's resident set size.
func (s *skillsvc) rss() (int64, error) { return s.proc.RSS() }
