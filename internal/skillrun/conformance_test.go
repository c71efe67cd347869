package skillrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun/skillruntest"
)

// errorKinds names each error of this runner as test/runner/cases.json
// does.
var errorKinds = map[string]error{
	"ScriptNotFound": ErrScriptNotFound, "ScriptOutsideSkill": ErrScriptOutsideSkill,
	"UnknownInterpreter": ErrUnknownInterpreter, "BadOutput": ErrBadOutput, "Timeout": ErrTimeout,
	"OutputTooLarge": ErrOutputTooLarge, "WorkspaceTooLarge": ErrWorkspaceTooLarge,
	"SandboxUnavailable": ErrSandboxUnavailable,
}

// errorKind is err's name in the fixture: a kind of errorKinds, or a gRPC
// status code's name.
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	for name, kind := range errorKinds {
		if errors.Is(err, kind) {
			return name
		}
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code().String()
	}
	return "untyped: " + err.Error()
}

// TestRunnerConformance runs every case of the shared fixture
// (test/runner) through Runner.Run.
func TestRunnerConformance(t *testing.T) {
	fx := skillruntest.Load(t)
	conn := startFixtureServer(t, fx)
	r := newRunner(t, conn)
	for i, c := range fx.Cases {
		for _, sb := range c.Sandboxes {
			t.Run(fmt.Sprintf("%02d %s/%s", i, c.Name, sb), func(t *testing.T) {
				if sb == SandboxBwrap && !c.NoBwrap {
					requireBwrap(t)
				}
				if c.NoBwrap {
					works := bwrapWorks
					bwrapWorks = func() error { return errors.New("simulated: no bubblewrap") }
					t.Cleanup(func() { bwrapWorks = works })
				}
				if c.PathPrepend != "" {
					t.Setenv("PATH", filepath.Join(skillruntest.Dir(), c.PathPrepend)+string(filepath.ListSeparator)+os.Getenv("PATH"))
				}
				v := skillruntest.NewVars(t, c)
				c := v.Apply(c)
				ctx := as(t.Context(), "alice", fmt.Sprintf("conf-%d-%s-%s", i, sb, v.Marker))
				for rel, body := range c.WorkspaceBefore {
					if _, err := r.Files.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/" + rel, Content: body}); err != nil {
						t.Fatal(err)
					}
				}
				opts := Options{Args: c.Args, JSONArgs: c.JSONArgs, Timeout: time.Duration(c.Timeout * float64(time.Second)),
					MaxOutputBytes: c.MaxOutputBytes, MemoryBytes: c.MemoryBytes, Network: c.Network, Sandbox: sb,
					NoWorkspace: c.Workspace != nil && !*c.Workspace, Interpreters: c.Interpreters}
				res, err := r.Run(ctx, c.Skill, c.Script, opts)
				o := skillruntest.Outcome{Error: errorKind(err)}
				var e *Error
				switch {
				case err == nil:
					code := res.ExitCode
					o.ExitCode, o.Stdout, o.Stderr, o.Output, o.Written = &code, res.Stdout, res.Stderr, res.Output, res.Written
				case errors.As(err, &e):
					o.Stdout, o.Stderr = e.Stdout, e.Stderr
					if e.ExitCode != -1 {
						o.ExitCode = &e.ExitCode
					}
				}
				skillruntest.Check(t, c, sb, v, o, func(rel string) (string, bool, error) {
					return skillruntest.Download(ctx, r.Files, "/workspace/"+rel)
				})
			})
		}
	}
}

// startFixtureServer serves the fixture skill in alice's library, each
// file with its mode as checked out.
func startFixtureServer(t *testing.T, fx *skillruntest.Fixture) *grpc.ClientConn {
	t.Helper()
	objects := map[string]object{}
	for rel, f := range fx.Files {
		objects["alice/skills/"+fx.Name+"/"+rel] = object{body: f.Body, mode: f.Mode}
	}
	return startServerWithObjects(t, objects)
}

// TestErrorCodes: each kind's gRPC code is the one cases.json gives every
// runner.
func TestErrorCodes(t *testing.T) {
	fx := skillruntest.Load(t)
	kinds := map[string]error{"VerifyFailed": ErrVerify}
	for name, kind := range errorKinds {
		kinds[name] = kind
	}
	for name, want := range fx.Codes {
		kind, ok := kinds[name]
		if !ok {
			t.Errorf("cases.json codes: %s is no kind of this runner", name)
			continue
		}
		if got := upperSnake(status.Code(&Error{Kind: kind}).String()); got != want {
			t.Errorf("%s: code %s, cases.json says %s", name, got, want)
		}
	}
	for name := range kinds {
		if _, ok := fx.Codes[name]; !ok {
			t.Errorf("cases.json codes: no code for %s", name)
		}
	}
}

// upperSnake is a code's name as the protocol spells it: FailedPrecondition
// is FAILED_PRECONDITION.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
