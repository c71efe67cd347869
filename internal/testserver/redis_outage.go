package testserver

import (
	"syscall"
	"testing"
)

// RestartableRedis is a redis-server a test can take down as an outage
// would and bring back on the same address. Like every test server it keeps
// no data on disk, so a restarted server starts empty, as a cache may.
type RestartableRedis struct {
	Redis
	srv restartable
}

// StartRestartableRedis starts a redis-server for this test; t.Cleanup
// stops it.
func StartRestartableRedis(t testing.TB) *RestartableRedis {
	t.Helper()
	Integration(t, "redis-server")
	r, p, err := startRedis()
	if err != nil {
		unavailable(t, "redis-server", redisBinEnv, err)
	}
	rr := &RestartableRedis{Redis: *r, srv: restartable{proc: p}}
	t.Cleanup(rr.srv.stop)
	return rr
}

// Stop kills the server as a crash would; clients see refused connections.
func (r *RestartableRedis) Stop(t testing.TB) {
	t.Helper()
	r.srv.kill()
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
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	if r.srv.proc.exited() {
		t.Fatalf("testserver: redis-server at %s is not running", r.Addr)
	}
	if err := syscall.Kill(-r.srv.proc.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("testserver: signalling redis-server: %v", err)
	}
}

// Restart brings a stopped server back on the same address, empty, and
// waits until it answers.
func (r *RestartableRedis) Restart(t testing.TB) {
	t.Helper()
	r.srv.restart(t, "redis-server", func(p *process) error { return waitRedisReady(p, r.Addr, portOf(r.Addr)) })
}
