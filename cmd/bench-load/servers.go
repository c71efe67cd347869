package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	startTimeout = time.Minute
	stopTimeout  = 20 * time.Second
)

// cleanups runs registered functions once, last first, whether the run ends
// normally or by a signal. A function registered after run has started runs
// at once, so a process started while the harness is being interrupted does
// not outlive it.
type cleanups struct {
	mu    sync.Mutex
	fns   []func()
	ran   bool
	runMu sync.Mutex
}

func (c *cleanups) add(fn func()) {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		fn()
		return
	}
	c.fns = append(c.fns, fn)
	c.mu.Unlock()
}

func (c *cleanups) run() {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	c.mu.Lock()
	fns := c.fns
	c.fns, c.ran = nil, true
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// servers are the processes every case shares.
type servers struct {
	minio *testserver.MinIO
	redis *testserver.Redis
	proxy *latencyProxy
	rdb   *redis.Client
}

func startServers(latency time.Duration, c *cleanups) (*servers, error) {
	m, stop, err := testserver.RunMinIO()
	if err != nil {
		return nil, fmt.Errorf("minio: %w (build it with `make tools`, or set SKILLSVC_MINIO_BIN)", err)
	}
	c.add(stop)
	r, stop, err := testserver.RunRedis()
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	c.add(stop)
	p, err := startLatencyProxy(m.Endpoint, latency)
	if err != nil {
		return nil, fmt.Errorf("latency proxy: %w", err)
	}
	c.add(func() { p.Close() })
	rdb := redis.NewClient(&redis.Options{
		Addr:                     r.Addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	c.add(func() { rdb.Close() })
	return &servers{minio: m, redis: r, proxy: p, rdb: rdb}, nil
}

func (s *servers) flushRedis(ctx context.Context) error {
	return s.rdb.FlushAll(ctx).Err()
}

// buildSkillsvc builds ./cmd/skillsvc into dir.
func buildSkillsvc(ctx context.Context, dir string) (string, error) {
	root, err := testserver.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "skillsvc")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/skillsvc")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/skillsvc: %v\n%s", err, out)
	}
	return bin, nil
}

// skillsvcConfig is what every skillsvc process of a run shares; only the
// bucket changes between libraries.
type skillsvcConfig struct {
	bin         string
	dir         string // parent of each process's working directory
	servers     *servers
	lruMaxBytes int64    // 0: skillsvc's default
	extra       []string // -skillsvc-flag values, passed through last so they win
}

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
		// One user is the load: per-user limits would measure themselves.
		"--limits.rate=0",
		"--limits.concurrency=0",
	}
	if c.lruMaxBytes > 0 {
		args = append(args, "--cache.lru.max-bytes="+strconv.FormatInt(c.lruMaxBytes, 10))
	}
	return append(args, c.extra...)
}

// env is the harness's environment without any SKILLSVC_ or AWS_ setting
// (a developer's own configuration must not change what is measured), plus
// the MinIO credentials.
func (c skillsvcConfig) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLSVC_") && !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	m := c.servers.minio
	return append(env,
		"AWS_ACCESS_KEY_ID="+m.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+m.SecretKey,
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
	)
}

// skillsvc is one running skillsvc process with a gRPC connection to it.
type skillsvc struct {
	cmd         *exec.Cmd
	addr        string
	metricsAddr string
	conn        *grpc.ClientConn
	log         *lineTail
	done        chan struct{}
	stopOnce    sync.Once
}

// startSkillsvc starts a process on bucket and returns once its health
// service says SERVING, so the first call a case times is a real first
// call and not the process starting up.
func startSkillsvc(ctx context.Context, c skillsvcConfig, bucket string, cl *cleanups) (*skillsvc, error) {
	dir, err := os.MkdirTemp(c.dir, "skillsvc-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, c.args(bucket)...)
	cmd.Dir = dir
	cmd.Env = c.env()
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start skillsvc: %w", err)
	}
	s := &skillsvc{cmd: cmd, log: &lineTail{max: 50}, done: make(chan struct{})}
	cl.add(s.stop)

	addrs := make(chan [2]string, 2) // {msg, addr}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.log.add(line)
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && (rec.Msg == "serving" || rec.Msg == "serving metrics") {
				addrs <- [2]string{rec.Msg, rec.Addr}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(s.done)
	}()

	timeout := time.NewTimer(startTimeout)
	defer timeout.Stop()
	for s.addr == "" || s.metricsAddr == "" {
		select {
		case a := <-addrs:
			if a[0] == "serving" {
				s.addr = a[1]
			} else {
				s.metricsAddr = a[1]
			}
		case <-s.done:
			s.stop()
			return nil, fmt.Errorf("skillsvc exited before serving (%v): %s", cmd.ProcessState, s.log.tail(5))
		case <-timeout.C:
			s.stop()
			return nil, fmt.Errorf("skillsvc not serving after %v: %s", startTimeout, s.log.tail(5))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		}
	}
	s.conn, err = grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.stop()
		return nil, err
	}
	if err := waitServing(ctx, s.conn); err != nil {
		s.stop()
		return nil, fmt.Errorf("skillsvc health: %w: %s", err, s.log.tail(5))
	}
	return s, nil
}

func waitServing(ctx context.Context, conn *grpc.ClientConn) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	hc := healthpb.NewHealthClient(conn)
	for {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not SERVING (last check: %v, %v)", resp.GetStatus(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop shuts the process down as an orchestrator would (SIGTERM, then
// SIGKILL to its process group after stopTimeout) and waits for it.
func (s *skillsvc) stop() {
	s.stopOnce.Do(func() {
		if s.conn != nil {
			s.conn.Close()
		}
		pid := s.cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-s.done
		os.RemoveAll(s.cmd.Dir)
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

// rss is the process's resident set size, from /proc.
func (s *skillsvc) rss() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading VmRSS: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// lineTail keeps the last max lines of a process's log for error messages.
type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *lineTail) tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines[max(0, len(t.lines)-n):]
	if len(lines) == 0 {
		return "(no output)"
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}
