package testserver

import (
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// RestartableRedis is a redis-server a test can take down as an outage
// would and bring back on the same address. Like every test server it keeps
// no data on disk, so a restarted server starts empty, as a cache may.
type RestartableRedis struct {
	Redis

	mu      sync.Mutex
	proc    *process
	restart func() (*process, error) // starts the same server again
}

// StartRestartableRedis starts a redis-server for this test; t.Cleanup
// stops it.
func StartRestartableRedis(t testing.TB) *RestartableRedis {
	t.Helper()
	r, p, err := startRedis()
	if err != nil {
		unavailable(t, "redis-server", redisBinEnv, err)
	}
	rr := &RestartableRedis{
		Redis: *r,
		proc:  p,
		// The same binary, arguments, environment and directory.
		restart: func() (*process, error) {
			return startProcess(p.name, p.dir, p.cmd.Path, p.cmd.Args[1:], p.cmd.Env)
		},
	}
	t.Cleanup(func() {
		rr.mu.Lock()
		defer rr.mu.Unlock()
		rr.proc.stop()
	})
	return rr
}

// Stop kills the server as a crash would; clients see refused connections.
func (r *RestartableRedis) Stop(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proc.kill()
}

// Pause freezes the server (SIGSTOP): it still accepts connections but
// answers nothing, as a hung or overloaded server would, so clients run
// into their timeouts. Resume undoes it; Stop and cleanup work either way.
func (r *RestartableRedis) Pause(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGSTOP)
}

// Resume lets a paused server run again.
func (r *RestartableRedis) Resume(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGCONT)
}

func (r *RestartableRedis) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc.exited() {
		t.Fatalf("testserver: redis-server at %s is not running", r.Addr)
	}
	if err := syscall.Kill(-r.proc.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("testserver: signalling redis-server: %v", err)
	}
}

// Restart brings a stopped server back on the same address, empty, and
// waits until it answers.
func (r *RestartableRedis) Restart(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.proc.exited() {
		t.Fatalf("testserver: Restart of redis-server at %s, which is still running: Stop it first", r.Addr)
	}
	p, err := r.restart()
	if err != nil {
		t.Fatalf("testserver: restarting redis-server: %v", err)
	}
	r.proc = p
	port, _ := strconv.Atoi(r.Addr[strings.LastIndex(r.Addr, ":")+1:])
	if err := waitRedisReady(p, r.Addr, port); err != nil {
		t.Fatalf("testserver: restarting redis-server: %v", err)
	}
}
