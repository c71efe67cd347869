package skillrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Spec is a prepared run: everything a Sandbox needs, with host paths. The
// sandbox decides where the skill and the workspace appear to the script
// and sets SKILL_DIR, WORKSPACE and HOME (WORKSPACE/.home) to match.
type Spec struct {
	// Interpreter with its own arguments, host paths; empty when the script
	// runs directly.
	Interpreter []string
	// Script is the script's path inside the skill, slash-separated.
	Script string
	Args   []string
	Stdin  []byte
	// Env is the rest of the script's environment (PATH, LANG,
	// SKILL_TIMEOUT): nothing else reaches it.
	Env map[string]string
	// SkillDir is the materialized skill, mounted read-only; WorkspaceDir
	// the scratch copy of the thread's /workspace, read-write and the
	// working directory.
	SkillDir, WorkspaceDir string
	// ReadOnlyPaths are the interpreter's runtime roots outside /usr (a
	// virtualenv, a node install), for a sandbox that hides the host.
	ReadOnlyPaths  []string
	Network        bool
	Timeout        time.Duration
	MaxOutputBytes int64 // each of stdout and stderr
	MemoryBytes    int64 // RLIMIT_AS; 0: none
}

// Outcome is what a sandbox reports of a run. ExitCode is -1 when the
// sandbox killed the script (timeout, output cap), and 128 plus the signal
// when something else did, as a shell reports it (and bwrap, whose child
// the script is).
type Outcome struct {
	Sandbox        string // "bwrap", "none", or a remote sandbox's name
	ExitCode       int
	Stdout, Stderr []byte
	// TimedOut: killed at Spec.Timeout; Truncated: killed for writing more
	// than Spec.MaxOutputBytes to stdout or stderr (both hold the first
	// MaxOutputBytes).
	TimedOut, Truncated bool
}

// Sandbox runs a prepared script. The bwrap and none sandboxes run it on
// this machine; a remote one (E2B, Modal, a Kubernetes job with gVisor)
// copies SkillDir and WorkspaceDir in, runs, and copies WorkspaceDir back.
type Sandbox interface {
	Run(ctx context.Context, spec Spec) (Outcome, error)
}

// Sandbox names for Options.Sandbox.
const (
	SandboxAuto  = "auto"
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"
)

// Unconfined is the warning "auto" gives, once, on a machine without
// bubblewrap.
const Unconfined = "skill scripts run unconfined: bubblewrap not available"

var warnOnce sync.Once

// SelectSandbox returns the sandbox a name asks for: "bwrap" (or
// ErrSandboxUnavailable), "none", or "auto"/"" (bwrap when it works here,
// else none with one warning per process through warn).
func SelectSandbox(name string, warn func(string)) (Sandbox, error) {
	switch name {
	case SandboxNone:
		return None{}, nil
	case SandboxBwrap:
		if err := bwrapWorks(); err != nil {
			return nil, newError(ErrSandboxUnavailable, "bubblewrap cannot run here (%v): install it (apt-get install bubblewrap) or run with sandbox \"none\"", err)
		}
		return Bwrap{}, nil
	case SandboxAuto, "":
		if bwrapWorks() == nil {
			return Bwrap{}, nil
		}
		warnOnce.Do(func() {
			if warn != nil {
				warn(Unconfined)
			}
		})
		return None{}, nil
	}
	return nil, fmt.Errorf("unknown sandbox %q: want auto, bwrap or none", name)
}

// bwrapWorks probes bubblewrap once per process: installed is not enough
// (a container may forbid its namespaces).
var bwrapWorks = sync.OnceValue(func() error {
	if runtime.GOOS != "linux" {
		return errors.New("not Linux")
	}
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("bwrap is not installed")
	}
	args := append([]string{"--unshare-all", "--die-with-parent", "--new-session"}, baseBinds()...)
	out, err := exec.Command(bin, append(args, "--", "/usr/bin/true")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bwrap probe: %v: %s", err, clip(out, 200))
	}
	return nil
})

// Where the bwrap sandbox shows the skill and the workspace.
const (
	BwrapSkillDir     = "/skill"
	BwrapWorkspaceDir = "/workspace"
)

// baseBinds are the host paths interpreters need, read-only: /usr and
// what links into it, TLS roots, name resolution and the time zone. Not
// /etc/passwd, /home, /root, /tmp or anything of the caller.
func baseBinds() []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc/alternatives", "/etc/ssl",
		"/etc/ca-certificates", "/etc/resolv.conf", "/etc/hosts", "/etc/localtime"} {
		args = append(args, "--ro-bind-try", p, p)
	}
	return append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
}

// Bwrap runs scripts under bubblewrap: every namespace unshared (no
// network unless Spec.Network, a new PID namespace so the script's children
// die with it), the host hidden but for baseBinds, the skill read-only at
// /skill and the scratch workspace at /workspace.
type Bwrap struct{}

func (Bwrap) Run(ctx context.Context, s Spec) (Outcome, error) {
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return Outcome{}, newError(ErrSandboxUnavailable, "bwrap is not installed")
	}
	args := []string{bin, "--unshare-all"}
	if s.Network {
		args = append(args, "--share-net")
	}
	args = append(args, "--die-with-parent", "--new-session")
	args = append(args, baseBinds()...)
	for _, p := range s.ReadOnlyPaths {
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args, "--ro-bind", s.SkillDir, BwrapSkillDir, "--bind", s.WorkspaceDir, BwrapWorkspaceDir,
		"--chdir", BwrapWorkspaceDir, "--clearenv")
	env := scriptEnv(s, BwrapSkillDir, BwrapWorkspaceDir)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--setenv", k, env[k])
	}
	args = append(args, "--")
	args = append(args, command(s, BwrapSkillDir)...)
	o, err := runProcess(ctx, args, nil, "", s)
	o.Sandbox = SandboxBwrap
	return o, err
}

// None runs scripts as plain subprocesses in their own process group, with
// the same environment, working directory and limits, and no confinement.
type None struct{}

func (None) Run(ctx context.Context, s Spec) (Outcome, error) {
	env := scriptEnv(s, s.SkillDir, s.WorkspaceDir)
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	o, err := runProcess(ctx, command(s, s.SkillDir), list, s.WorkspaceDir, s)
	o.Sandbox = SandboxNone
	return o, err
}

// scriptEnv is Spec.Env with the paths as the script sees them.
func scriptEnv(s Spec, skillDir, workspace string) map[string]string {
	env := map[string]string{}
	for k, v := range s.Env {
		env[k] = v
	}
	env["SKILL_DIR"] = skillDir
	env["WORKSPACE"] = workspace
	env["HOME"] = path.Join(workspace, ".home")
	// bwrap's --chdir sets PWD whatever the environment says: every
	// sandbox sets it, so a script sees the same names in each.
	env["PWD"] = workspace
	return env
}

// command is the argv: prlimit for the memory cap, the interpreter, the
// script as the sandbox shows it, the arguments.
func command(s Spec, skillDir string) []string {
	var argv []string
	if s.MemoryBytes > 0 {
		if p, err := exec.LookPath("prlimit"); err == nil {
			argv = append(argv, p, "--as="+strconv.FormatInt(s.MemoryBytes, 10), "--")
		}
	}
	argv = append(argv, s.Interpreter...)
	argv = append(argv, path.Join(skillDir, s.Script))
	return append(argv, s.Args...)
}

// capBuffer keeps the first max bytes written and calls over (once) when
// more come.
type capBuffer struct {
	max  int64
	buf  []byte
	over func()
	hit  atomic.Bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	room := c.max - int64(len(c.buf))
	if int64(len(p)) > room {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		if !c.hit.Swap(true) {
			c.over()
		}
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// runProcess runs argv in a process group of its own and kills the whole
// group (SIGKILL) at the timeout, when an output passes its cap, when ctx
// ends, and after the leader exits (so nothing it started lives on).
func runProcess(ctx context.Context, argv, env []string, dir string, s Spec) (Outcome, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	if env == nil {
		cmd.Env = []string{} // bwrap: --clearenv sets the script's
	}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(s.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Outcome{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Outcome{}, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return Outcome{ExitCode: -1}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	outW.Close()
	errW.Close()
	pgid := cmd.Process.Pid
	kill := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	var timedOut, truncated atomic.Bool
	limit := s.MaxOutputBytes
	if limit <= 0 {
		limit = DefaultMaxOutputBytes
	}
	over := func() { truncated.Store(true); kill() }
	stdout, stderr := &capBuffer{max: limit, over: over}, &capBuffer{max: limit, over: over}
	var readers sync.WaitGroup
	for _, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(p.w, p.r)
		}()
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.AfterFunc(timeout, func() { timedOut.Store(true); kill() })
	stop := context.AfterFunc(ctx, kill)
	waitErr := cmd.Wait()
	timer.Stop()
	stop()
	kill() // what the script left running dies with it
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		// A process that left the group (setsid) still holds the pipes:
		// stop reading rather than wait for it.
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	o := Outcome{ExitCode: exitCode(cmd.ProcessState), Stdout: stdout.buf, Stderr: stderr.buf,
		TimedOut: timedOut.Load(), Truncated: truncated.Load()}
	if o.TimedOut || o.Truncated {
		o.ExitCode = -1
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return o, waitErr
	}
	if ctx.Err() != nil {
		return o, ctx.Err()
	}
	return o, nil
}

// exitCode is p's exit status, or 128 plus the signal that ended it.
func exitCode(p *os.ProcessState) int {
	if ws, ok := p.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.ExitCode()
}
