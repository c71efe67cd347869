package testserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startAttempts is one try plus three retries on a fresh port when another
// process grabs the port between our probe and the server's bind.
const startAttempts = 4

// Integration skips t under `go test -short` (make test-short, the inner
// loop of unit tests): t needs real servers or the skillsvc binary. Without
// -short nothing is skipped here, so under SKILLSVC_REQUIRE_SERVERS=1 (make
// test) a server that cannot start still fails the test. Every starter in
// this package calls it; call it too where a test builds or runs the
// binary itself.
func Integration(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: skipped under -short", needs)
	}
}

// unavailable skips the test, or fails it where skipping would hide missing
// coverage: CI must never skip an integration test.
func unavailable(t testing.TB, server, envVar string, err error) {
	t.Helper()
	const format = "testserver: %s unavailable, %s: %v\n" +
		"(install the test servers with `make tools`, or point %s at a binary)"
	if os.Getenv("CI") != "" || os.Getenv("SKILLSVC_REQUIRE_SERVERS") == "1" {
		t.Fatalf(format, server, "failing because CI or SKILLSVC_REQUIRE_SERVERS=1 is set", err, envVar)
	}
	t.Skipf(format, server, "skipping (set SKILLSVC_REQUIRE_SERVERS=1 to fail instead)", err, envVar)
}

// findBinary returns the first executable among the candidates. An explicitly
// set environment variable is authoritative: a bad value is an error rather
// than a silent fallback to some other binary.
func findBinary(envVar string, candidates ...func() (string, error)) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%q is not an executable: %w", envVar, p, err)
		}
		// Absolute, because the server runs in its temporary directory.
		return filepath.Abs(found)
	}
	for _, c := range candidates {
		if p, err := c(); err == nil {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// inRepoTools looks for name in <repo root>/.tools/bin, where `make tools`
// installs pinned server binaries.
func inRepoTools(name string) func() (string, error) {
	return func() (string, error) {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		return exec.LookPath(filepath.Join(root, ".tools", "bin", name))
	}
}

func onPath(name string) func() (string, error) {
	return func() (string, error) { return exec.LookPath(name) }
}

func atPath(path string) func() (string, error) {
	return func() (string, error) { return exec.LookPath(path) }
}

// module is the module path of the repository, which RepoRoot looks for.
const module = "github.com/skillsvc/skillsvc"

// RepoRoot walks up from the working directory (the package directory under
// go test) to the directory holding skillsvc's go.mod. Run outside a
// checkout, it fails rather than take another module's root for it.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if modulePath(data) == module {
				return dir, nil
			}
			return "", fmt.Errorf("%s is not a skillsvc checkout (its go.mod is not module %s)", dir, module)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s is not inside a skillsvc checkout (no go.mod above it)", wd)
		}
		dir = parent
	}
}

// modulePath is the path a go.mod's module directive names, or "".
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// freePorts returns n distinct free loopback ports. All listeners stay open
// until every port is chosen so the ports differ; they are closed before
// returning, so a race with another process remains possible and callers
// retry. Port 6379 is never used so a developer's own Redis is never touched.
func freePorts(n int) ([]int, error) {
	var (
		ports     []int
		listeners []net.Listener
	)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		if port := l.Addr().(*net.TCPAddr).Port; port != 6379 {
			ports = append(ports, port)
		}
	}
	return ports, nil
}

// isPortRace reports whether a server's output says it lost its port.
func isPortRace(output string) bool {
	return strings.Contains(strings.ToLower(output), "already in use")
}

// tailBuffer keeps the last max bytes written to it, so a chatty server
// cannot grow memory without bound while its tail stays available for errors.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns at most the last n lines.
func (b *tailBuffer) Tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := bytes.Split(bytes.TrimRight(b.buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// process is one server subprocess in its own process group, with its own
// temporary directory.
type process struct {
	name string
	cmd  *exec.Cmd
	dir  string
	out  *tailBuffer

	done    chan struct{} // closed when the process has exited
	waitErr error         // valid once done is closed

	stopOnce sync.Once
}

// startProcess starts bin with args and extra environment. dir belongs to
// the process from then on: stop removes it, even if starting fails.
func startProcess(name, dir, bin string, args, env []string) (*process, error) {
	p := &process{
		name: name,
		dir:  dir,
		out:  &tailBuffer{max: 64 << 10},
		done: make(chan struct{}),
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	cmd.SysProcAttr = sysProcAttr()
	// A grandchild holding the output pipe must not hang Wait forever.
	cmd.WaitDelay = 5 * time.Second
	p.cmd = cmd
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has already exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitReport describes how the process ended, with the tail of its output.
func (p *process) exitReport() string {
	out := p.out.Tail(30)
	if out == "" {
		return fmt.Sprintf("%s exited early (%v) with no output", p.name, p.waitErr)
	}
	return fmt.Sprintf("%s exited early (%v); last output:\n%s", p.name, p.waitErr, out)
}

// stop kills the whole process group, waits for the process and removes its
// temporary directory. Test servers hold only throwaway data, so there is no
// graceful shutdown to wait for. It is safe to call more than once.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.kill()
		os.RemoveAll(p.dir)
	})
}

// kill kills the whole process group and waits for the process, keeping its
// directory.
func (p *process) kill() {
	if !p.exited() {
		// Negative pid: the group made by Setpgid, so helpers die too.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
}

// serverEnv is the inherited environment minus variables with prefix, so a
// developer's own server configuration cannot leak into test servers.
func serverEnv(prefix string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// restartable holds a server's current process, so a test can kill it as an
// outage would and start it again with the same binary, arguments,
// environment and directory, hence on the same address.
type restartable struct {
	mu   sync.Mutex
	proc *process // nil for a server the caller built by hand
}

// stop ends the server for good and removes its directory (t.Cleanup).
func (r *restartable) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proc.stop()
}

// kill kills the server, keeping its directory.
func (r *restartable) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proc.kill()
}

// running reports whether the server may be up; for a server built by hand
// we cannot tell, so assume it is.
func (r *restartable) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc == nil || !r.proc.exited()
}

// pid is the server's process ID; 0 for a server built by hand or not
// running.
func (r *restartable) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil || r.proc.exited() || r.proc.cmd.Process == nil {
		return 0
	}
	return r.proc.cmd.Process.Pid
}

// restart starts a killed server again and waits until ready says so.
func (r *restartable) restart(t testing.TB, name string, ready func(*process) error) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.proc
	if !old.exited() {
		t.Fatalf("testserver: restart of %s, which is still running: stop it first", name)
	}
	p, err := startProcess(old.name, old.dir, old.cmd.Path, old.cmd.Args[1:], old.cmd.Env)
	if err != nil {
		t.Fatalf("testserver: restarting %s: %v", name, err)
	}
	r.proc = p
	if err := ready(p); err != nil {
		t.Fatalf("testserver: restarting %s: %v", name, err)
	}
}

// portOf is the port of a host:port address or endpoint URL.
func portOf(addr string) int {
	port, _ := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
	return port
}
