package doctest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// BlockTimeout is how long one block may run, and how long the harness waits
// for a server or a background block's ready= address.
const BlockTimeout = 3 * time.Minute

// Runner runs pages against one checkout.
type Runner struct {
	// Root is the repository: its top-level entries are linked into each
	// page's directory, and its bin/ and .tools/bin come first on PATH.
	Root string
	// Python runs python blocks; default Root/.venv/bin/python (make pyenv).
	Python string
	// TSClient is the @skillsvc/client package (built, with node_modules)
	// that ts blocks import; default Root/clients/ts.
	TSClient string
	// Timeout bounds each block; default BlockTimeout.
	Timeout time.Duration
	// Log, when set, gets a line per block as it finishes.
	Log io.Writer
}

// Failure is a block that did not do what its page says, or a page whose
// servers did not start (Block.Line 0).
type Failure struct {
	Page    string
	Block   Block
	Reason  string
	Output  string // the block's combined output, trimmed to its end
	Context string // the tails of the page's server and background blocks
}

func (f *Failure) Error() string {
	var s strings.Builder
	if f.Block.Line == 0 {
		fmt.Fprintf(&s, "%s: %s\n", f.Page, f.Reason)
	} else {
		fmt.Fprintf(&s, "%s:%d: %s\n", f.Page, f.Block.Line, f.Reason)
	}
	if f.Block.Text != "" {
		fmt.Fprintf(&s, "--- block (%s)\n%s", f.Block.Lang, f.Block.Text)
	}
	if f.Output != "" {
		fmt.Fprintf(&s, "--- output\n%s\n", f.Output)
	}
	s.WriteString(f.Context)
	return strings.TrimSuffix(s.String(), "\n")
}

// page is the state of one page's run.
type page struct {
	r        *Runner
	p        *Page
	dir      string // the blocks' working directory
	work     string // scripts and server data, outside dir
	env      []string
	stops    []func()
	contexts []func() string // tails to show beside a failure
}

// Run runs a page's blocks in order in a fresh directory with the servers
// its directive names, and stops every process it started before returning.
// It returns the first block that fails, as a *Failure.
func (r *Runner) Run(ctx context.Context, p *Page) (err error) {
	r.defaults()
	work, err := os.MkdirTemp("", "skillsvc-doctest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	pg := &page{r: r, p: p, dir: filepath.Join(work, "page"), work: work}
	defer func() {
		for i := len(pg.stops) - 1; i >= 0; i-- {
			pg.stops[i]()
		}
	}()
	if err := pg.prepare(); err != nil {
		return err
	}
	// Stores first, so a server started on them finds them up.
	fixtures := []struct {
		on    bool
		name  string
		start func(context.Context) error
	}{
		{p.MinIO, "minio", pg.startMinIO},
		{p.Redis, "redis", pg.startRedis},
		{p.Server, "server", pg.startServer},
	}
	for _, f := range fixtures {
		if !f.on {
			continue
		}
		if err := f.start(ctx); err != nil {
			return &Failure{Page: p.Path, Reason: fmt.Sprintf("starting the page's %s (doctest directive): %v", f.name, err), Context: pg.context()}
		}
	}
	for _, b := range p.Blocks {
		start := time.Now()
		var status string
		switch {
		case b.Skip != "":
			status = "skipped: " + b.Skip
		case b.File != "":
			if err := pg.writeFile(b); err != nil {
				return &Failure{Page: p.Path, Block: b, Reason: err.Error()}
			}
			status = "written to " + b.File
		case !b.Runs():
			continue
		case b.Background:
			if f := pg.background(ctx, b); f != nil {
				return f
			}
			status = "started"
		default:
			if f := pg.run(ctx, b); f != nil {
				return f
			}
			status = "ok"
		}
		if r.Log != nil {
			fmt.Fprintf(r.Log, "%s:%d: %s %s (%v)\n", p.Path, b.Line, b.Lang, status, time.Since(start).Round(time.Millisecond))
		}
	}
	return nil
}

func (r *Runner) defaults() {
	if r.Python == "" {
		r.Python = filepath.Join(r.Root, ".venv", "bin", "python")
	}
	if r.TSClient == "" {
		r.TSClient = filepath.Join(r.Root, "clients", "ts")
	}
	if r.Timeout == 0 {
		r.Timeout = BlockTimeout
	}
}

// notLinked are top-level entries a page's directory does not share with
// the repository: data/ is where the page's own server keeps its skills
// (skillsvc's default --data-dir), and .git is no example's business.
var notLinked = map[string]bool{"data": true, ".git": true}

// prepare makes the page's directory of links and the blocks' environment.
func (pg *page) prepare() error {
	for _, d := range []string{pg.dir, filepath.Join(pg.work, "scripts")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(pg.r.Root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if notLinked[e.Name()] {
			continue
		}
		if err := os.Symlink(filepath.Join(pg.r.Root, e.Name()), filepath.Join(pg.dir, e.Name())); err != nil {
			return err
		}
	}
	pg.env = pg.r.environ(pg.p)
	// Materialized skills go under the page's own directory, not the
	// cache of whoever runs the docs (a page may set its own).
	pg.env = append(pg.env, "SKILLSVC_SKILL_CACHE="+filepath.Join(pg.work, "skill-cache"))
	return nil
}

// environ is the blocks' environment: the caller's, without its SKILLSVC_
// and AWS_ settings (a reader's fresh shell has none; make exports some),
// with the repository's binaries first on PATH, and MinIO's credentials for
// a page that has it.
func (r *Runner) environ(p *Page) []string {
	var env []string
	path := os.Getenv("PATH")
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SKILLSVC_") || strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+filepath.Join(r.Root, "bin")+string(os.PathListSeparator)+
		filepath.Join(r.Root, ".tools", "bin")+string(os.PathListSeparator)+path)
	if p.MinIO {
		env = append(env, "AWS_ACCESS_KEY_ID="+minioUser, "AWS_SECRET_ACCESS_KEY="+minioPassword, "AWS_REGION="+minioRegion)
	}
	return env
}

// writeFile writes a file= block. It refuses a path through one of the
// page's links, which would write into the repository itself.
func (pg *page) writeFile(b Block) error {
	parts := strings.Split(filepath.FromSlash(b.File), string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(append([]string{pg.dir}, parts[:i+1]...)...)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("file=%s: %s is a link into the repository; write the file elsewhere in the page's directory", b.File, filepath.Join(parts[:i+1]...))
		}
	}
	dst := filepath.Join(pg.dir, filepath.FromSlash(b.File))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if strings.HasPrefix(b.Text, "#!") {
		mode = 0o755 // a script, run by a later block
	}
	return os.WriteFile(dst, []byte(b.Text), mode)
}

// command is how a block runs: its argv, after writing the files it needs.
// cleanup removes what it wrote outside the work directory.
func (pg *page) command(ctx context.Context, b Block, deadline time.Time) (argv []string, cleanup func(), f *Failure) {
	name := filepath.Join(pg.work, "scripts", fmt.Sprintf("line%d", b.Line))
	write := func(path string) *Failure {
		if err := os.WriteFile(path, []byte(b.Text), 0o644); err != nil {
			return &Failure{Page: pg.p.Path, Block: b, Reason: err.Error()}
		}
		return nil
	}
	switch runner(b.Lang) {
	case "sh":
		return []string{"bash", "-euo", "pipefail", name + ".sh"}, func() {}, write(name + ".sh")
	case "python":
		return []string{pg.r.Python, name + ".py"}, func() {}, write(name + ".py")
	}
	return pg.compileTS(ctx, b, deadline)
}

// compileTS type-checks and compiles a ts block with the client package's
// own tsc, in a directory inside the package: there, an import of
// "@skillsvc/client" is the package naming itself (its exports map, built
// into dist/), and its node_modules resolve the rest, as they would for a
// reader who installed it. A block that does not compile fails even when
// marked fails, which is about running.
func (pg *page) compileTS(ctx context.Context, b Block, deadline time.Time) ([]string, func(), *Failure) {
	tmp, err := os.MkdirTemp(pg.r.TSClient, ".doctest-")
	if err != nil {
		return nil, nil, &Failure{Page: pg.p.Path, Block: b, Reason: err.Error()}
	}
	cleanup := func() { os.RemoveAll(tmp) }
	const tsconfig = `{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "strict": true, "skipLibCheck": true, "esModuleInterop": true,
    "types": ["node"], "outDir": "out", "rootDir": "."
  },
  "files": ["snippet.ts"]
}
`
	for name, content := range map[string]string{"tsconfig.json": tsconfig, "snippet.ts": b.Text} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o644); err != nil {
			cleanup()
			return nil, nil, &Failure{Page: pg.p.Path, Block: b, Reason: err.Error()}
		}
	}
	tsc := filepath.Join(pg.r.TSClient, "node_modules", ".bin", "tsc")
	out, code, timedOut, err := pg.exec(ctx, b, tmp, deadline, tsc, "-p", tmp)
	switch {
	case err != nil:
		cleanup()
		return nil, nil, &Failure{Page: pg.p.Path, Block: b, Reason: "tsc: " + err.Error()}
	case timedOut:
		cleanup()
		return nil, nil, &Failure{Page: pg.p.Path, Block: b, Reason: fmt.Sprintf("tsc still running after %v", pg.r.Timeout), Output: out}
	case code != 0:
		cleanup()
		return nil, nil, &Failure{Page: pg.p.Path, Block: b, Reason: "the ts block does not compile", Output: out}
	}
	return []string{"node", filepath.Join(tmp, "out", "snippet.js")}, cleanup, nil
}

// run runs a foreground block to its end and checks its exit status.
func (pg *page) run(ctx context.Context, b Block) *Failure {
	deadline := time.Now().Add(pg.r.Timeout)
	argv, cleanup, f := pg.command(ctx, b, deadline)
	if f != nil {
		return f
	}
	defer cleanup()
	out, code, timedOut, err := pg.exec(ctx, b, pg.dir, deadline, argv...)
	fail := func(reason string) *Failure {
		return &Failure{Page: pg.p.Path, Block: b, Reason: reason, Output: out, Context: pg.context()}
	}
	switch {
	case err != nil:
		return fail(err.Error())
	case timedOut:
		return fail(fmt.Sprintf("still running after %v (killed)", pg.r.Timeout))
	case b.Fails && code == 0:
		return fail("exited 0, but the block is marked fails")
	case !b.Fails && code != 0:
		return fail(fmt.Sprintf("exited %d", code))
	}
	return nil
}

// exec runs argv in dir in its own process group until it exits, the
// deadline passes or ctx ends, then kills the group, so nothing a block
// started outlives it. It returns the trimmed combined output and the exit
// code.
func (pg *page) exec(ctx context.Context, b Block, dir string, deadline time.Time, argv ...string) (out string, code int, timedOut bool, err error) {
	outPath := filepath.Join(pg.work, "scripts", fmt.Sprintf("line%d.out", b.Line))
	p, err := startProc(dir, pg.env, outPath, argv...)
	if err != nil {
		return "", 0, false, err
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.kill()
	out = p.tail(outputLines)
	if timedOut || err != nil {
		return out, -1, timedOut, err
	}
	return out, p.cmd.ProcessState.ExitCode(), false, nil
}

// background starts a background block, and with ready= waits until its
// address accepts connections. It runs until the page ends.
func (pg *page) background(ctx context.Context, b Block) *Failure {
	argv, cleanup, f := pg.command(ctx, b, time.Now().Add(pg.r.Timeout))
	if f != nil {
		return f
	}
	outPath := filepath.Join(pg.work, "scripts", fmt.Sprintf("line%d.out", b.Line))
	p, err := startProc(pg.dir, pg.env, outPath, argv...)
	if err != nil {
		cleanup()
		return &Failure{Page: pg.p.Path, Block: b, Reason: err.Error()}
	}
	pg.stops = append(pg.stops, func() { p.kill(); cleanup() })
	pg.contexts = append(pg.contexts, func() string {
		return fmt.Sprintf("--- background block %s:%d output\n%s\n", pg.p.Path, b.Line, p.tail(contextLines))
	})
	if b.Ready == "" {
		return nil
	}
	if err := waitTCP(ctx, b.Ready, p, pg.r.Timeout); err != nil {
		return &Failure{Page: pg.p.Path, Block: b, Reason: err.Error(), Output: p.tail(outputLines), Context: pg.context()}
	}
	return nil
}

// context is what a failure shows besides its block: the tails of the
// page's servers and background blocks.
func (pg *page) context() string {
	var s strings.Builder
	for _, c := range pg.contexts {
		s.WriteString(c())
	}
	return s.String()
}

const (
	outputLines  = 80 // of a failing block's output
	contextLines = 20 // of each server and background block
)

// proc is a process in its own group with its output in a file.
type proc struct {
	cmd     *exec.Cmd
	outPath string
	done    chan struct{}
}

func startProc(dir string, env []string, outPath string, argv ...string) (*proc, error) {
	out, err := os.Create(outPath)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	// A file, not a pipe: Wait returns when the process exits even if
	// something it started still holds the output open.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, outPath: outPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// kill kills the process's whole group (whatever it started, too) and waits
// for the process.
func (p *proc) kill() {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail is the last n lines of the process's output.
func (p *proc) tail(n int) string {
	data, _ := os.ReadFile(p.outPath)
	return tailLines(string(data), n)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("[%d lines cut]\n", len(lines)-n) + strings.Join(lines[len(lines)-n:], "\n")
}
