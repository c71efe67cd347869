package skillrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Defaults of a run.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	DefaultMemoryBytes    = 1 << 30
)

// Runner materializes and runs skills for the caller whose identity the
// calls' context carries (the thread's /workspace is the one synced).
type Runner struct {
	Skills skillsvcv1.SkillsServiceClient
	Files  skillsvcv1.FilesystemServiceClient
	// CacheDir is the materialized skills' root; empty: CacheRoot.
	CacheDir string
	// Sandbox, when set, runs every script (a remote sandbox); nil: the
	// one Options.Sandbox names.
	Sandbox Sandbox
	// Warn receives the one warning of an unconfined "auto" run; nil:
	// standard error.
	Warn func(string)
}

// New returns a Runner on conn.
func New(conn grpc.ClientConnInterface) *Runner {
	return &Runner{Skills: skillsvcv1.NewSkillsServiceClient(conn), Files: skillsvcv1.NewFilesystemServiceClient(conn)}
}

// Options of a run; the zero value is the defaults: plain mode without
// arguments, 60 s (or the skill's metadata "timeout"), 1 MiB of each
// output, 1 GiB of memory, no network, sandbox "auto", the workspace
// synced.
type Options struct {
	// Version runs a published version (id, prefix or label) instead of
	// the live copy.
	Version string
	// JSONArgs selects JSON mode: the value (any JSON, usually an object)
	// is argv[1] and stdin, and stdout must be one JSON object.
	JSONArgs json.RawMessage
	// Args are plain mode's arguments.
	Args           []string
	Timeout        time.Duration
	MaxOutputBytes int64
	MemoryBytes    int64
	Network        bool
	Sandbox        string // "auto" (or ""), "bwrap", "none"
	// NoWorkspace runs in an empty scratch directory and writes nothing
	// back.
	NoWorkspace bool
	// Interpreters maps an extension (".py") to an interpreter (a path or
	// a command name), before the built-in choice.
	Interpreters map[string]string
}

// Result is a run that completed: the script exited by itself, whatever
// its exit code.
type Result struct {
	ExitCode int `json:"exit_code"`
	// Output is JSON mode's object.
	Output  json.RawMessage `json:"output,omitempty"`
	Stdout  string          `json:"stdout"`
	Stderr  string          `json:"stderr"`
	Written []string        `json:"written"` // /workspace paths written back
	Sandbox string          `json:"sandbox"`
	// Duration of the script's run.
	Duration time.Duration `json:"-"`
	// Skill is where the skill was materialized.
	Skill *Materialized `json:"-"`
}

// Run runs script of skill as the contract says (see the package doc and
// docs/agents/running-scripts.md). Errors the caller can act on are
// *Error; the calls' own errors are gRPC statuses (NotFound for a skill
// that does not exist).
func (r *Runner) Run(ctx context.Context, skill, script string, opts Options) (*Result, error) {
	if opts.JSONArgs != nil && len(opts.Args) > 0 {
		return nil, fmt.Errorf("give JSON arguments or plain arguments, not both")
	}
	if opts.JSONArgs != nil && !json.Valid(opts.JSONArgs) {
		return nil, fmt.Errorf("the JSON arguments are not valid JSON")
	}
	sb := r.Sandbox
	if sb == nil {
		var err error
		if sb, err = SelectSandbox(opts.Sandbox, r.warn); err != nil {
			return nil, err
		}
	}
	m, err := r.Materialize(ctx, skill, opts.Version)
	if err != nil {
		return nil, err
	}
	rel, err := ResolveScript(m.Dir, script)
	if err != nil {
		return nil, err
	}
	interp, err := Interpreter(filepath.Join(m.Dir, filepath.FromSlash(rel)), opts.Interpreters)
	if err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = SkillTimeout(m.Skill)
	}
	spec := Spec{
		Interpreter: interp, Script: rel, Args: opts.Args, SkillDir: m.Dir,
		ReadOnlyPaths: interpreterRoots(interp), Network: opts.Network, Timeout: timeout,
		MaxOutputBytes: orDefault(opts.MaxOutputBytes, DefaultMaxOutputBytes),
		MemoryBytes:    orDefault(opts.MemoryBytes, DefaultMemoryBytes),
		Env: map[string]string{
			"PATH": ScriptPATH, "LANG": "C.UTF-8",
			"SKILL_TIMEOUT": strconv.FormatInt(int64((timeout+time.Second-1)/time.Second), 10),
		},
	}
	if opts.JSONArgs != nil {
		spec.Args = []string{string(opts.JSONArgs)}
		spec.Stdin = opts.JSONArgs
	}
	scratch, err := os.MkdirTemp("", "skillrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	spec.WorkspaceDir = scratch
	before := map[string]string{}
	if !opts.NoWorkspace {
		if before, err = r.pullWorkspace(ctx, scratch); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(scratch, homeDir), 0o700); err != nil {
		return nil, err
	}
	start := time.Now()
	o, err := sb.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	res := &Result{ExitCode: o.ExitCode, Stdout: string(o.Stdout), Stderr: string(o.Stderr), Sandbox: o.Sandbox,
		Duration: time.Since(start), Skill: m, Written: []string{}}
	withOutput := func(e *Error) *Error {
		e.Stdout, e.Stderr, e.ExitCode = res.Stdout, res.Stderr, res.ExitCode
		return e
	}
	switch {
	case o.TimedOut:
		return nil, withOutput(newError(ErrTimeout, "%s was killed after its timeout of %s, with every process it started; nothing was written back to /workspace. Give it more time (timeout) or less work", rel, timeout))
	case o.Truncated:
		return nil, withOutput(newError(ErrOutputTooLarge, "%s wrote more than %d bytes to stdout or stderr and was killed; nothing was written back to /workspace. Have it write large results to a file in its working directory", rel, spec.MaxOutputBytes))
	}
	if !opts.NoWorkspace {
		if res.Written, err = r.pushWorkspace(ctx, scratch, before); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, withOutput(e)
			}
			return nil, err
		}
	}
	if opts.JSONArgs != nil {
		out, ok := ParseOutput(o.Stdout)
		if !ok {
			return nil, withOutput(newError(ErrBadOutput, "%s (exit code %d) did not print exactly one JSON object on stdout; it printed %q (stderr: %q)", rel, o.ExitCode, clip(o.Stdout, 300), clip(o.Stderr, 300)))
		}
		res.Output = out
	}
	return res, nil
}

// SkillTimeout is a skill's own timeout: its frontmatter metadata
// "timeout", decimal seconds ("120", "1.5"), else DefaultTimeout.
func SkillTimeout(s *skillsvcv1.SkillSummary) time.Duration {
	v := strings.TrimSpace(s.GetMetadata()["timeout"])
	if !decimalSeconds.MatchString(v) {
		return DefaultTimeout
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f >= math.MaxInt64/float64(time.Second) {
		return DefaultTimeout
	}
	return time.Duration(f * float64(time.Second))
}

// decimalSeconds is the one form a skill's metadata timeout takes in every
// runner: no sign, exponent or unit.
var decimalSeconds = regexp.MustCompile(`^\d+(\.\d+)?$`)

func orDefault(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

func (r *Runner) warn(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
		return
	}
	fmt.Fprintln(os.Stderr, "skillrun: warning: "+msg)
}

// interpreterRoots are the folders an interpreter outside /usr needs to
// see: a virtualenv's prefix and its base interpreter's, a node install's
// folder (the parent of its bin/).
func interpreterRoots(interp []string) []string {
	if len(interp) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var roots []string
	add := func(dir string) {
		dir = filepath.Clean(dir)
		if dir == "" || seen[dir] || underSystem(dir) {
			return
		}
		seen[dir] = true
		roots = append(roots, dir)
	}
	bin := interp[0]
	add(filepath.Dir(filepath.Dir(bin)))
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		add(filepath.Dir(filepath.Dir(real)))
	}
	if strings.HasPrefix(filepath.Base(bin), "python") && len(roots) > 0 {
		out, err := exec.Command(bin, "-c", "import sys; print(sys.prefix); print(sys.base_prefix)").Output()
		if err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				add(line)
			}
		}
	}
	return roots
}

// underSystem reports whether dir is already in the sandbox (baseBinds),
// or is "/" (never bound whole).
func underSystem(dir string) bool {
	if dir == "/" || !filepath.IsAbs(dir) {
		return true
	}
	for _, p := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"} {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}
