package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// A set pull holds an exclusive advisory lock on dirLockName in its target
// folder from before it reads the lockfile until after it last writes it:
// two pulls into one folder would otherwise plan from the same lockfile
// and interleave their folder renames and lockfile writes. The lock file is
// left in place (removing it would let a waiter lock a file no one else
// sees); it holds the holder's pid, which a refused pull names.

// dirLockName is the lock file beside the lockfile; hosts skip dot files,
// and safeFolder keeps it out of every skill folder a pull writes.
const dirLockName = lockName + ".lck"

// defaultPullWait is how long a set pull waits for another pull into the
// same folder before it gives up (--wait).
const defaultPullWait = 30 * time.Second

// lockPollInterval is how often a waiting pull tries the lock again.
const lockPollInterval = 50 * time.Millisecond

// lockDir takes dir's pull lock, creating dir if need be, waiting at most
// wait for another holder (--wait 0 tries once). It says once on stderr
// whom it waits for. The returned func releases the lock.
func (a *app) lockDir(ctx context.Context, dir string, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErr(err)
	}
	p := filepath.Join(dir, dirLockName)
	fl := flock.New(p, flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err == nil && !ok && wait > 0 {
		fmt.Fprintf(a.stderr, "skillctl: waiting up to %s for another pull into %s%s to finish\n", wait, dir, holderOf(p))
		wctx, cancel := context.WithTimeout(ctx, wait)
		ok, err = fl.TryLockContext(wctx, lockPollInterval)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			ok, err = false, nil
		}
	}
	if err != nil {
		return nil, usageErr(fmt.Errorf("lock %s: %w", p, err))
	}
	if !ok {
		return nil, usageErr(fmt.Errorf("another pull into %s is under way%s (it holds %s): wait for it, or give --wait a longer time (waited %s)",
			dir, holderOf(p), p, wait))
	}
	// Best effort: the pid only makes a refusal clearer.
	_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return func() { _ = fl.Close() }, nil
}

// holderOf is ", pid N" when the lock file names its holder.
func holderOf(lockPath string) string {
	b, err := readBounded(lockPath, 32)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}
