package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
)

// ctlCommand is the built skillctl with env over the test's environment
// and a config file of its own.
func ctlCommand(t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SKILLCTL_CONFIG="+filepath.Join(t.TempDir(), "config.yaml"))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// checkPulled: dir's lockfile names exactly want, each folder holds what
// the lockfile says (every file hashed), and no temporary folder is left.
func checkPulled(t *testing.T, dir, want string) {
	t.Helper()
	lock, err := readLock(dir)
	if err != nil || lock == nil {
		t.Fatalf("lockfile: %v %+v", err, lock)
	}
	if got := keysOf(lock.Skills); got != want {
		t.Errorf("lockfile names %s, want %s", got, want)
	}
	for folder, s := range lock.Skills {
		if state, err := folderState(filepath.Join(dir, folder), s, true); state != "intact" || err != nil {
			t.Errorf("%s: %s %v", folder, state, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{lockName: true, dirLockName: true}
	for folder := range lock.Skills {
		top[strings.Split(folder, "/")[0]] = true
	}
	for _, e := range entries {
		if n := e.Name(); !top[n] {
			t.Errorf("%s left in %s", n, dir)
		}
	}
}

// TestPullLockEndToEnd: a set pull holds a lock on its folder. With the
// lock held elsewhere a pull fails naming the holder's pid and writes
// nothing, or waits for it and then pulls; two pulls run at once into one
// folder leave it consistent.
func TestPullLockEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	held := flock.New(filepath.Join(dir, dirLockName))
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dirLockName), []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"pull", "--all", dir}, {"sync", "--all", dir}} {
		r := runCtl(t, env, append(args, "--wait", "0")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "another pull into "+dir+" is under way") || !strings.Contains(r.stderr, fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("%s with the lock held: exit %d\n%s", args[0], r.code, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("a refused pull wrote %v", entries)
	}

	// A pull that may wait says whom it waits for, then pulls once the
	// lock is released.
	waiting := ctlCommand(t, env, "pull", "--all", dir, "--wait", "10m")
	stderr, err := waiting.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() || !strings.Contains(lines.Text(), "waiting up to 10m0s for another pull into "+dir) || !strings.Contains(lines.Text(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("waiting pull said %q", lines.Text())
	}
	if _, err := os.Stat(filepath.Join(dir, lockName)); err == nil {
		t.Fatal("the waiting pull wrote the lockfile while the lock was held")
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := waiting.Wait(); err != nil {
		t.Fatalf("waiting pull: %v", err)
	}
	checkPulled(t, dir, "csv,notes,pdf")

	// Three at once into a new folder: each waits for the one before.
	// Each plans before the folder exists and plans again under the lock:
	// what another wrote meanwhile is no folder "no pull wrote".
	both := filepath.Join(t.TempDir(), "skills")
	cmds := []*exec.Cmd{ctlCommand(t, env, "pull", "--all", both), ctlCommand(t, env, "sync", "--all", both), ctlCommand(t, env, "pull", "--all", both)}
	outs := make([]strings.Builder, len(cmds))
	for i, c := range cmds {
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(c.Args[1:], " "), err, outs[i].String())
		}
	}
	checkPulled(t, both, "csv,notes,pdf")
}
