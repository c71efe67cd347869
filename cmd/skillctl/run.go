package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillsvc/skillsvc/internal/skillrun"
)

func (a *app) runCmd() *cobra.Command {
	var o skillrun.Options
	var jsonArgs, cacheDir string
	cmd := &cobra.Command{
		Use:   "run SKILL SCRIPT [--args JSON] [-- ARGS...]",
		Short: "Run a skill's script on this machine, confined, against your thread's /workspace",
		Long: `run runs SCRIPT of the skill SKILL here, where you (or your agent) run, never on the server:
the skill is fetched into a local cache verified against its manifest ($SKILLSVC_SKILL_CACHE, else
$XDG_CACHE_HOME/skillsvc/skills, else ~/.cache/skillsvc/skills; --cache-dir), the thread's /workspace
(--thread) is copied into a scratch working directory, the script runs under bubblewrap when the
machine has it (no network, the host hidden, the skill read-only), and every file it creates or
changes there is written back to /workspace. See docs/agents/running-scripts.md.

SCRIPT is "scripts/x.py", or "x.py" (looked up under scripts/, then the skill's root). The
interpreter comes from the extension (.py python3, .js/.mjs/.cjs node, .sh bash), else the #! line.

With --args JSON (JSON mode) the script gets the JSON as its first argument and on stdin, and must
print one JSON object: skillctl prints it (--json: the whole result, with exit_code, output, stdout,
stderr, written and sandbox). Without --args (plain mode) the arguments after "--" are passed as
they are, and the script's stdout and stderr are copied (control characters shown escaped, as all
skillctl output is; have a script write binary results to its working directory).

--timeout here is the script's (default 60s, or the skill's metadata "timeout" in seconds).

Exit codes: once the script ran, skillctl run exits with the script's own exit code. Otherwise:
2 for a script outside the skill, no interpreter, or bubblewrap unavailable with --sandbox bwrap;
3 for the server's errors; 4 for a skill or script that does not exist; 5 when the script broke its
run (not one JSON object in JSON mode, killed at its timeout or for too much output, too large a
workspace), with what it printed. These come with a "skillctl:" line on stderr.`,
		Example: `  skillctl run runner-test echo.py --args '{"q": "hi"}'
  skillctl run pdf check_fillable_fields.py -- form.pdf
  skillctl run pdf scripts/extract.py --sandbox none --timeout 2m -- report.pdf`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("args") {
				if len(args) > 2 {
					return usageErr(errors.New("give --args JSON or plain arguments after --, not both"))
				}
				if !json.Valid([]byte(jsonArgs)) {
					return usageErr(errors.New("--args is not valid JSON"))
				}
				o.JSONArgs = json.RawMessage(jsonArgs)
			}
			o.Args = args[2:]
			if err := a.connect(cmd); err != nil {
				return err
			}
			ctx, cancel, err := a.callCtx(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer cancel()
			r := skillrun.New(a.conn)
			r.CacheDir = cacheDir
			r.Warn = func(msg string) { fmt.Fprintf(a.stderr, "skillctl: warning: %s\n", msg) }
			res, err := r.Run(ctx, args[0], args[1], o)
			if err != nil {
				return a.runError(err, o.JSONArgs == nil)
			}
			switch {
			case a.jsonOut:
				b, err := json.MarshalIndent(res, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(a.jsonStdout, "%s\n", b)
			case o.JSONArgs != nil:
				fmt.Fprintf(a.jsonStdout, "%s\n", res.Output)
			default:
				fmt.Fprint(a.stdout, res.Stdout)
				fmt.Fprint(a.stderr, res.Stderr)
			}
			if res.ExitCode != 0 {
				return &exitError{code: res.ExitCode}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&jsonArgs, "args", "", "JSON arguments (JSON mode): the script's first argument and stdin")
	f.StringVar(&o.Version, "version", "", "a version id, unique prefix or label instead of the live copy")
	f.DurationVar(&o.Timeout, "timeout", 0, "the script's timeout (default 60s, or the skill's metadata \"timeout\")")
	f.Int64Var(&o.MaxOutputBytes, "max-output-bytes", skillrun.DefaultMaxOutputBytes, "kill the script when its stdout or stderr passes this")
	f.Int64Var(&o.MemoryBytes, "memory-bytes", skillrun.DefaultMemoryBytes, "the script's address-space limit (RLIMIT_AS)")
	f.BoolVar(&o.Network, "network", false, "let the script use the network")
	f.StringVar(&o.Sandbox, "sandbox", skillrun.SandboxAuto, `"auto" (bubblewrap when it works here), "bwrap" or "none"`)
	f.BoolVar(&o.NoWorkspace, "no-workspace", false, "run in an empty directory; read and write nothing of /workspace")
	f.StringToStringVar(&o.Interpreters, "interpreter", nil, "extension=interpreter overrides, e.g. .py=/opt/venv/bin/python")
	f.StringVar(&cacheDir, "cache-dir", "", "the materialized skills' folder (default $SKILLSVC_SKILL_CACHE, ...)")
	return cmd
}

// runError maps a run's error onto skillctl's exit codes, printing what
// the script wrote first when it ran (plain mode).
func (a *app) runError(err error, plain bool) error {
	var e *skillrun.Error
	if !errors.As(err, &e) {
		return err // a gRPC status or a local problem: skillctl's usual handling
	}
	if plain {
		fmt.Fprint(a.stdout, e.Stdout)
		fmt.Fprint(a.stderr, e.Stderr)
	}
	code := exitRunFailed
	switch {
	case errors.Is(err, skillrun.ErrScriptNotFound):
		code = exitNotFound
	case errors.Is(err, skillrun.ErrScriptOutsideSkill), errors.Is(err, skillrun.ErrUnknownInterpreter),
		errors.Is(err, skillrun.ErrSandboxUnavailable):
		code = exitUsage
	case errors.Is(err, skillrun.ErrOverLimits), errors.Is(err, skillrun.ErrVerify):
		code = exitServer
	}
	return &exitError{code: code, err: e}
}
