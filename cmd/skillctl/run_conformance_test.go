package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/skillrun"
	"github.com/skillsvc/skillsvc/internal/skillrun/skillruntest"
)

// skillctlError is the kind on the "skillctl: <Kind>: ..." line a failed
// run ends with.
var skillctlError = regexp.MustCompile(`(?m)^skillctl: (\w+): `)

// TestRunConformance runs the shared fixture's cases marked "skillctl"
// (test/runner/cases.json) through `skillctl run --json`, as a user would:
// the runner is internal/skillrun's, proven case by case there; this proves
// the command carries its options in and its results out.
func TestRunConformance(t *testing.T) {
	fx := skillruntest.Load(t)
	lib := map[string]string{}
	for rel, f := range fx.Files {
		lib["alice/skills/"+fx.Name+"/"+rel] = f.Body // modes: #! files are 0755, the rest 0644
	}
	addr := startServerWith(t, lib)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	cache := t.TempDir()
	for i, c := range fx.Cases {
		if !c.Skillctl || c.NoBwrap {
			continue
		}
		for _, sb := range c.Sandboxes {
			t.Run(fmt.Sprintf("%02d %s/%s", i, c.Name, sb), func(t *testing.T) {
				v := skillruntest.NewVars(t, c)
				c := v.Apply(c)
				thread := fmt.Sprintf("ctl-conf-%d-%s-%s", i, sb, v.Marker)
				env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice", "SKILLCTL_THREAD": thread, "SKILLSVC_SKILL_CACHE": cache}
				r := skillrun.New(conn)
				ctx := metadata.NewOutgoingContext(t.Context(), metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, thread))
				for rel, body := range c.WorkspaceBefore {
					if _, err := r.Files.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/" + rel, Content: body}); err != nil {
						t.Fatal(err)
					}
				}
				args := []string{"--json", "run", c.Skill, c.Script, "--sandbox", sb}
				if c.Timeout > 0 {
					args = append(args, fmt.Sprintf("--timeout=%gs", c.Timeout))
				}
				if c.MaxOutputBytes > 0 {
					args = append(args, fmt.Sprint("--max-output-bytes=", c.MaxOutputBytes))
				}
				if c.MemoryBytes > 0 {
					args = append(args, fmt.Sprint("--memory-bytes=", c.MemoryBytes))
				}
				if c.Network {
					args = append(args, "--network")
				}
				if c.Workspace != nil && !*c.Workspace {
					args = append(args, "--no-workspace")
				}
				for ext, in := range c.Interpreters {
					args = append(args, "--interpreter", ext+"="+in)
				}
				if c.JSONArgs != nil {
					args = append(args, "--args", string(c.JSONArgs))
				} else {
					args = append(append(args, "--"), c.Args...)
				}
				res := runCtl(t, env, args...)
				var o skillruntest.Outcome
				var whole struct {
					ExitCode *int            `json:"exit_code"`
					Output   json.RawMessage `json:"output"`
					Stdout   string          `json:"stdout"`
					Stderr   string          `json:"stderr"`
					Written  []string        `json:"written"`
				}
				if m := skillctlError.FindStringSubmatchIndex(res.stderr); m != nil {
					// A failed run: skillctl exits with its own code, and
					// prints the script's output (plain mode) before the line.
					o.Error = res.stderr[m[2]:m[3]]
					o.Stdout, o.Stderr = res.stdout, res.stderr[:m[0]]
					c.Expect.ExitCode, c.Expect.Written = nil, nil
					if c.JSONArgs != nil {
						c.Expect.Stdout, c.Expect.Stderr, c.Expect.StdoutLen, c.Expect.StderrLen = nil, nil, nil, nil
					}
				} else if err := json.Unmarshal([]byte(res.stdout), &whole); err != nil || whole.ExitCode == nil {
					t.Fatalf("exit %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
				} else {
					if res.code != *whole.ExitCode {
						t.Errorf("skillctl exited %d, the script %d", res.code, *whole.ExitCode)
					}
					o = skillruntest.Outcome{ExitCode: whole.ExitCode, Stdout: whole.Stdout, Stderr: whole.Stderr, Output: whole.Output, Written: whole.Written}
					if string(o.Output) == "null" {
						o.Output = nil
					}
				}
				skillruntest.Check(t, c, sb, v, o, func(rel string) (string, bool, error) {
					return skillruntest.Download(ctx, r.Files, "/workspace/"+rel)
				})
			})
		}
	}
}
