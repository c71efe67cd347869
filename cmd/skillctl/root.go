package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
)

// Exit codes, stable for scripts and CI.
const (
	exitOK = 0
	// exitInvalid: a skill breaks the rules (validate found errors, or the
	// server refused a push listing problems), or scan found something at
	// or above --fail-on.
	exitInvalid = 1
	// exitUsage: bad flags or arguments, a config or local file problem.
	exitUsage = 2
	// exitServer: the server refused or failed the call (its status is
	// printed), or could not be reached.
	exitServer = 3
	// exitNotFound: the skill, version or label does not exist.
	exitNotFound = 4
	// exitRunFailed: skillctl run's script broke its run: output that is
	// not one JSON object, its timeout, too much output, too large a
	// workspace. (A script that ran ends skillctl run with its own code.)
	exitRunFailed = 5
)

const exitCodesHelp = `Exit codes:
  0  success
  1  a skill breaks the rules (validate found errors, or the server refused it with its problems),
     or scan found something at or above --fail-on
  2  usage error, or a problem with a local file or the config
  3  the server refused or failed the call, or could not be reached
  4  the skill, version or label was not found (skillctl run: or the script)
  5  skillctl run: the script broke its run (not one JSON object, timeout, too much output, workspace too large)
  skillctl run exits with the script's own exit code once the script ran; codes skillctl sets itself
  come with a "skillctl:" line on stderr`

// exitError carries the exit code an error ends the run with.
type exitError struct {
	code int
	err  error // nil when everything was already printed
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// app is one run of skillctl: its streams, environment and global flags.
type app struct {
	// stdout and stderr are for people: inertWriters, so what an author
	// or the server wrote cannot act on a terminal (see inert).
	stdout, stderr io.Writer
	// jsonStdout is for JSON only: exact, through inertJSON. rawStderr is
	// for the progress bar only, which redraws with controls.
	jsonStdout, rawStderr io.Writer
	getenv                func(string) string
	// isTerminal reports whether stderr is a terminal (progress bars).
	isTerminal bool

	flags       Context // connection flags as given
	contextName string
	// viewScope and harness are sent as x-skillsvc-scope and
	// x-skillsvc-harness: the skill set the call's listings show.
	viewScope, harness string
	jsonOut            bool
	quiet              bool
	timeout            time.Duration

	root *cobra.Command
	conn *grpc.ClientConn
	set  settings
}

// run executes skillctl with args and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, isTerminal bool) int {
	out, errOut, jsonOut := &inertWriter{w: stdout}, &inertWriter{w: stderr}, &inertWriter{w: stdout, escape: inertJSON}
	defer out.Flush()
	defer errOut.Flush()
	defer jsonOut.Flush()
	a := &app{stdout: out, stderr: errOut, jsonStdout: jsonOut, rawStderr: stderr, getenv: getenv, isTerminal: isTerminal}
	root := a.newRoot()
	root.SetArgs(args)
	root.SetOut(out) // help, usage and completions
	root.SetErr(errOut)
	err := root.ExecuteContext(ctx)
	if a.conn != nil {
		a.conn.Close()
	}
	if err == nil {
		return exitOK
	}
	return a.report(err)
}

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillctl",
		Short: "Validate, publish and manage skills on a skillsvc server",
		Long: `skillctl is the skill authors' tool for skillsvc: validate a skill folder offline with the
server's rules, publish it as an immutable version, list, show, render and pull skills (one, or a
whole catalog, category or scope into a host's skills folder, kept in sync), move labels,
roll back, review pending versions and watch the catalog change.

Connection settings come, in this order, from flags, the environment (SKILLCTL_TARGET,
SKILLCTL_TLS, SKILLCTL_CA_FILE, SKILLCTL_USER, SKILLCTL_THREAD, SKILLCTL_ADMIN, SKILLCTL_TOKEN,
SKILLCTL_TOKEN_FILE, SKILLCTL_LIBRARY, SKILLCTL_CONTEXT), the current context of the config file
($SKILLCTL_CONFIG, else ~/.config/skillctl/config.yaml; see skillctl config), and defaults
(target ` + defaultTarget + `, thread "` + defaultThread + `").

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.Target, "target", "", "server gRPC address, host:port (default "+defaultTarget+")")
	pf.BoolVar(&a.flags.TLS, "tls", false, "dial with TLS")
	pf.StringVar(&a.flags.CAFile, "ca-file", "", "PEM file of the CAs to trust (implies --tls)")
	pf.StringVar(&a.flags.User, "user", "", "user ID sent as identity metadata (insecure mode)")
	pf.StringVar(&a.flags.Thread, "thread", "", "thread ID sent as identity metadata (default \""+defaultThread+"\")")
	pf.StringVar(&a.flags.Teams, "teams", "", "the caller's team IDs, comma-separated, sent as identity metadata (insecure mode; a token's teams claim decides otherwise)")
	pf.BoolVar(&a.flags.Admin, "admin", false, "act as a library admin (x-skillsvc-admin: true): publish to the shared, a team's or another user's library in insecure mode; ignored by a server in jwt mode, where the token's admin scope decides")
	pf.StringVar(&a.flags.Token, "token", "", "bearer token (jwt mode)")
	pf.StringVar(&a.flags.TokenFile, "token-file", "", "file holding the bearer token")
	pf.StringVar(&a.flags.Library, "library", "", `library to act on: empty for your own, "shared", "team:ID" (a team's), or a user ID (admins)`)
	pf.StringVar(&a.viewScope, "scope", "", "skill scope the call's listings show (x-skillsvc-scope; a token's skill_scope claim binds instead); see skillctl scope")
	pf.StringVar(&a.harness, "harness", "", "agent harness matched against skills' compatibility by a scope (x-skillsvc-harness)")
	pf.StringVar(&a.contextName, "context", "", "config context to use instead of the current one")
	pf.BoolVar(&a.jsonOut, "json", false, "print JSON instead of tables")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print only what scripts need; no progress bars")
	pf.DurationVar(&a.timeout, "timeout", time.Minute, "deadline of each call (not of watch)")

	root.AddCommand(
		a.validateCmd(), a.evalCmd(),
		a.pushCmd(), a.pullCmd(), a.syncCmd(),
		a.lsCmd(), a.showCmd(), a.renderCmd(),
		a.enableCmd(true), a.enableCmd(false),
		a.versionsCmd(), a.labelCmd(), a.rollbackCmd(), a.signCmd(), a.verifyCmd(),
		a.reviewCmd(true), a.reviewCmd(false),
		a.rmCmd(), a.watchCmd(), a.gcCmd(),
		a.configCmd(), a.adminCmd(), a.scopeCmd(), a.runCmd(), a.usageCmd(), a.scanCmd(),
	)
	a.root = root
	return root
}

// connect resolves the settings and dials the server (lazily: grpc-go
// connects on the first call).
func (a *app) connect(cmd *cobra.Command) error {
	path, err := configPath(a.getenv)
	if err != nil {
		return usageErr(err)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return usageErr(err)
	}
	s, err := resolve(cfg, a.flags, a.contextName, func(name string) bool {
		f := cmd.Flags().Lookup(name)
		return f != nil && f.Changed
	}, a.getenv)
	if err != nil {
		return usageErr(err)
	}
	creds := insecure.NewCredentials()
	if s.TLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.CAFile != "" {
			pem, err := readBounded(s.CAFile, maxConfigBytes)
			if err != nil {
				return usageErr(fmt.Errorf("ca file: %w", err))
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return usageErr(fmt.Errorf("ca file %s holds no PEM certificate", s.CAFile))
			}
			tc.RootCAs = pool
		}
		creds = credentials.NewTLS(tc)
	}
	conn, err := grpc.NewClient(s.Target, grpc.WithTransportCredentials(creds))
	if err != nil {
		return usageErr(fmt.Errorf("target %q: %w", s.Target, err))
	}
	a.conn, a.set = conn, s
	return nil
}

// open connects and returns the command's call context (callCtx): the
// start of every command that makes one call.
func (a *app) open(cmd *cobra.Command, deadline bool) (context.Context, context.CancelFunc, error) {
	if err := a.connect(cmd); err != nil {
		return nil, nil, err
	}
	return a.callCtx(cmd.Context(), deadline)
}

// callCtx is ctx carrying the identity and, for a unary call, the
// deadline; cancel must be called.
func (a *app) callCtx(ctx context.Context, deadline bool) (context.Context, context.CancelFunc, error) {
	md := metadata.MD{}
	if a.set.User != "" {
		md.Set(auth.UserKey, a.set.User)
	}
	if a.set.Thread != "" {
		md.Set(auth.ThreadKey, a.set.Thread)
	}
	if a.set.Teams != "" {
		md.Set(auth.TeamsKey, a.set.Teams)
	}
	if a.set.Admin {
		md.Set(auth.AdminKey, "true")
	}
	if a.viewScope != "" {
		md.Set(auth.ScopeKey, a.viewScope)
	}
	if a.harness != "" {
		md.Set(auth.HarnessKey, a.harness)
	}
	tok, err := a.set.bearer()
	if err != nil {
		return nil, nil, usageErr(err)
	}
	if tok != "" {
		md.Set(auth.AuthorizationKey, "Bearer "+tok)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	if deadline && a.timeout > 0 {
		c, cancel := context.WithTimeout(ctx, a.timeout)
		return c, cancel, nil
	}
	c, cancel := context.WithCancel(ctx)
	return c, cancel, nil
}

func (a *app) skills() skillsvcv1.SkillsServiceClient {
	return skillsvcv1.NewSkillsServiceClient(a.conn)
}
func (a *app) library() skillsvcv1.LibraryServiceClient {
	return skillsvcv1.NewLibraryServiceClient(a.conn)
}

// libraryRef is the --library setting as a request's LibraryRef; nil for
// the caller's own.
func (a *app) libraryRef() *skillsvcv1.LibraryRef {
	l := a.set.Library
	switch team, isTeam := strings.CutPrefix(l, "team:"); {
	case l == "":
		return nil
	case l == "shared":
		return &skillsvcv1.LibraryRef{Shared: true}
	case isTeam:
		return &skillsvcv1.LibraryRef{Team: team}
	}
	return &skillsvcv1.LibraryRef{User: strings.TrimPrefix(l, "user:")}
}

func usageErr(err error) error { return &exitError{code: exitUsage, err: err} }

// report prints err and returns its exit code.
func (a *app) report(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(a.stderr, "skillctl: %v\n", ee.err)
		}
		return ee.code
	}
	if st, ok := status.FromError(err); ok {
		return a.reportStatus(st)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		fmt.Fprintf(a.stderr, "skillctl: %v\n", err)
		return exitServer
	}
	// Cobra's own errors: unknown commands and flags, wrong arguments.
	fmt.Fprintf(a.stderr, "skillctl: %v\nRun 'skillctl --help' for usage.\n", err)
	return exitUsage
}

func (a *app) reportStatus(st *status.Status) int {
	fmt.Fprintf(a.stderr, "skillctl: %s: %s\n", st.Code(), inert(st.Message()))
	var problems []*skillsvcv1.SkillProblem
	for _, d := range st.Details() {
		if sp, ok := d.(*skillsvcv1.SkillProblems); ok {
			problems = append(problems, sp.GetProblems()...)
		}
	}
	if len(problems) > 0 {
		printProblems(a.stderr, "", problems)
	}
	switch st.Code() {
	case codes.InvalidArgument:
		if len(problems) > 0 {
			return exitInvalid
		}
		return exitServer
	case codes.NotFound:
		return exitNotFound
	case codes.Unimplemented:
		fmt.Fprintln(a.stderr, "skillctl: the server does not implement this call (an older skillsvc?)")
	}
	return exitServer
}

func main() {
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv, stderrIsTerminal()))
}
