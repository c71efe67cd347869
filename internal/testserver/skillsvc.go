package testserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Skillsvc is a running skillsvc binary, started by RunSkillsvc: the one
// launcher of the binary, for the Go end-to-end tests (cmd/skillsvc's
// startBinary) and for tools that drive the real service from outside a Go
// test (cmd/testenv, cmd/bench-load).
type Skillsvc struct {
	// Addrs maps each "serving…" log message to its address: "serving" is
	// the gRPC listener, "serving metrics" and "serving http" the others.
	Addrs map[string]string

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error // how it exited, once done is closed
	stopOnce sync.Once
	mu       sync.Mutex
	lines    []string // the last logLines lines of its log, for errors
}

const logLines = 40

// BuildSkillsvc builds ./cmd/skillsvc of the repository around the working
// directory into dir and returns the binary's path: what the end-to-end
// tests, cmd/testenv and cmd/bench-load run.
func BuildSkillsvc(ctx context.Context, dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "skillsvc")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/skillsvc")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/skillsvc: %w\n%s", err, out)
	}
	return bin, nil
}

// SkillsvcConfig is how to start one skillsvc process.
type SkillsvcConfig struct {
	Bin  string
	Args []string // --log.format=json is added first, so Args may override the rest
	Env  []string // the whole environment
	Dir  string   // working directory
	// Log, when set, receives every log line as the process writes it.
	Log io.Writer
	// Wait lists the "serving…" messages to wait for besides "serving".
	Wait []string
	// TLS, when skillsvc serves TLS, is how the health check connects.
	TLS *tls.Config
	// SkipHealth returns once the listeners are logged, without waiting
	// for the health service to say SERVING (a test that checks readiness
	// itself, or dials with certificates of its own).
	SkipHealth bool
	// LiftLimits, when set, says why this process runs with the per-user
	// limits off (a load generator measuring the service, not the limits),
	// and turns them off. Without it, Args and Env must leave the limits as
	// a deployment gets them (see LiftedLimit).
	LiftLimits string
}

// RunSkillsvc starts skillsvc and returns once it logged the listeners it
// was asked to wait for and its health service answers SERVING. The caller
// must call Stop.
func RunSkillsvc(ctx context.Context, c SkillsvcConfig, timeout time.Duration) (*Skillsvc, error) {
	args := []string{"--log.format=json"}
	if c.LiftLimits != "" {
		args = append(args, liftLimitsArgs...) // before Args, which may set them again
		if c.Log != nil {
			fmt.Fprintf(c.Log, "per-user limits off: %s\n", c.LiftLimits)
		}
	} else if f := LiftedLimit(c.Args, c.Env); f != "" {
		return nil, fmt.Errorf("skillsvc: %s lifts a per-user limit; tests run with the limits a deployment gets, and a process that must not says why (SkillsvcConfig.LiftLimits, testenv --lift-limits)", f)
	}
	cmd := exec.Command(c.Bin, append(args, c.Args...)...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start skillsvc: %w", err)
	}
	s := &Skillsvc{Addrs: map[string]string{}, cmd: cmd, done: make(chan struct{})}
	addrs := make(chan [2]string, 8) // {msg, addr}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.addLine(line)
			if c.Log != nil {
				fmt.Fprintln(c.Log, line)
			}
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "serving") && rec.Addr != "" {
				select {
				case addrs <- [2]string{rec.Msg, rec.Addr}:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	want := append([]string{"serving"}, c.Wait...)
	for !s.has(want) {
		select {
		case a := <-addrs:
			s.Addrs[a[0]] = a[1]
		case <-s.done:
			return nil, fmt.Errorf("skillsvc exited before serving (%v):\n%s", cmd.ProcessState, s.Tail())
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("skillsvc not serving %v after %v:\n%s", want, timeout, s.Tail())
		}
	}
	if c.SkipHealth {
		return s, nil
	}
	creds := insecure.NewCredentials()
	if c.TLS != nil {
		creds = credentials.NewTLS(c.TLS)
	}
	conn, err := grpc.NewClient(s.Addrs["serving"], grpc.WithTransportCredentials(creds))
	if err == nil {
		err = WaitServing(ctx, conn)
		conn.Close()
	}
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("skillsvc health: %w:\n%s", err, s.Tail())
	}
	return s, nil
}

func (s *Skillsvc) has(msgs []string) bool {
	for _, m := range msgs {
		if s.Addrs[m] == "" {
			return false
		}
	}
	return true
}

func (s *Skillsvc) addLine(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) == logLines {
		s.lines = s.lines[1:]
	}
	s.lines = append(s.lines, line)
}

// Tail returns the last lines the process logged.
func (s *Skillsvc) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// Pid is the process ID.
func (s *Skillsvc) Pid() int { return s.cmd.Process.Pid }

// RSS is the process's resident set size, from /proc (Linux).
func (s *Skillsvc) RSS() (int64, error) { return RSS(s.Pid()) }

// RSS is process pid's resident set size, from /proc (Linux).
func RSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
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

// Done is closed when the process has exited.
func (s *Skillsvc) Done() <-chan struct{} { return s.done }

// Err is how the process exited (exec.Cmd.Wait's error); valid once Done
// is closed.
func (s *Skillsvc) Err() error {
	<-s.done
	return s.waitErr
}

// Cmd is the process's command: its Dir, and its Process to signal or to
// measure.
func (s *Skillsvc) Cmd() *exec.Cmd { return s.cmd }

// Kill kills the process and its group at once, without a graceful
// shutdown, and waits for it: the end of a test whose data is thrown away.
func (s *Skillsvc) Kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Stop shuts the process down as an orchestrator would (SIGTERM, then
// SIGKILL to its process group after 10s) and waits for it. Safe to call
// more than once.
func (s *Skillsvc) Stop() {
	s.stopOnce.Do(func() {
		pid := s.cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-s.done
	})
}

// WaitServing polls the health service over conn until it says SERVING or
// ctx ends.
func WaitServing(ctx context.Context, conn grpc.ClientConnInterface) error {
	hc := healthpb.NewHealthClient(conn)
	for {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not SERVING (last check: %v, %v)", resp.GetStatus(), err)
		case <-time.After(pollInterval):
		}
	}
}

// SkillsvcEnv is os.Environ without its AWS_ and SKILLSVC_ variables (a
// developer's profile or configuration must not change what a process
// talks to), plus m's credentials: the environment for a skillsvc on m.
func (m *MinIO) SkillsvcEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "SKILLSVC_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"AWS_ACCESS_KEY_ID="+m.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+m.SecretKey,
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
	)
}

// S3Flags are the skillsvc flags that store in bucket on m.
func (m *MinIO) S3Flags(bucket string) []string {
	return []string{"--storage=s3", "--s3.bucket=" + bucket, "--s3.endpoint=" + m.Endpoint, "--s3.path-style", "--s3.region=" + m.Region}
}
