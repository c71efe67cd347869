package testserver

import (
	"os"
	"sync"
	"testing"
)

// shared holds one lazily started server per test binary. A failed start is
// remembered, so every later test skips (or fails) at once instead of waiting
// out the readiness timeout again.
type shared[S any] struct {
	mu     sync.Mutex
	server *S
	proc   *process
	err    error
	start  func() (*S, *process, error)
	name   string // for messages
	envVar string // the binary's environment variable, for messages
}

func (s *shared[S]) get(t testing.TB) *S {
	t.Helper()
	Integration(t, "the shared "+s.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil && s.err == nil {
		s.server, s.proc, s.err = s.start()
	}
	if s.err != nil {
		unavailable(t, "shared "+s.name, s.envVar, s.err)
	}
	return s.server
}

// stop stops the server and forgets it, so a later get starts a new one.
func (s *shared[S]) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.stop()
	}
	s.server, s.proc, s.err = nil, nil, nil
}

var (
	sharedMinIO = &shared[MinIO]{start: startMinIO, name: "MinIO", envVar: minioBinEnv}
	sharedRedis = &shared[Redis]{start: startRedis, name: "redis-server", envVar: redisBinEnv}
)

// Shutdown stops the servers started by SharedMinIO and SharedRedis. Call it
// from TestMain after m.Run; the shared servers outlive individual tests, so
// no t.Cleanup can stop them. It is safe to call when none were started.
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testserver.Shutdown()
//		os.Exit(code)
//	}
func Shutdown() {
	sharedMinIO.stop()
	sharedRedis.stop()
	tempDirs.removeAll()
}

// tempDirs are the directories made by TempDir, removed by Shutdown.
var tempDirs dirList

type dirList struct {
	mu   sync.Mutex
	dirs []string
}

func (l *dirList) removeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.dirs {
		os.RemoveAll(d)
	}
	l.dirs = nil
}

// TempDir makes a directory that outlives single tests (a binary built once
// per test run) and is removed by Shutdown. A test binary's leftovers add up
// run after run: MinIO refuses every write once its disk is 99% full.
func TempDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	tempDirs.mu.Lock()
	defer tempDirs.mu.Unlock()
	tempDirs.dirs = append(tempDirs.dirs, dir)
	return dir, nil
}
