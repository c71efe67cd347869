package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
)

// runLibrary is alice's skill "runner-test" (internal/skillrun's contract
// tests prove the runner itself; these prove the command).
var runLibrary = map[string]string{
	"alice/skills/runner-test/SKILL.md":         "---\nname: runner-test\ndescription: Scripts that prove skillctl run.\n---\n# Runner test\n",
	"alice/skills/runner-test/scripts/echo.py":  "import json, os, sys\nprint(json.dumps({'argv1': sys.argv[1], 'stdin': sys.stdin.read(), 'skill_dir': os.environ['SKILL_DIR']}))\n",
	"alice/skills/runner-test/scripts/plain.sh": "echo \"args: $*\"\necho 'to stderr' >&2\nexit 3\n",
	"alice/skills/runner-test/scripts/bad.py":   "print('not json')\n",
	"alice/skills/runner-test/scripts/slow.sh":  "echo started\nsleep 3600.5151\n",
	"alice/skills/runner-test/scripts/write.py": "open('report.txt', 'w').write('made by the script\\n')\n",
}

func TestRunCommand(t *testing.T) {
	addr := startServerWith(t, runLibrary)
	cache := t.TempDir()
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice", "SKILLCTL_THREAD": "t1", "SKILLSVC_SKILL_CACHE": cache}

	// JSON mode prints the script's object.
	args := `{"q": "hi", "n": [1, 2]}`
	r := mustRun(t, env, "run", "runner-test", "echo.py", "--args", args)
	var out map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out["argv1"] != args || out["stdin"] != args {
		t.Errorf("JSON mode: %v\n%s", err, r.stdout)
	}
	// "auto" confines where bubblewrap is (make test installs it).
	if _, err := exec.LookPath("bwrap"); err == nil && out["skill_dir"] != "/skill" {
		t.Errorf("auto did not run under bwrap: %s", r.stdout)
	}
	// --json prints the whole result.
	r = mustRun(t, env, "run", "runner-test", "scripts/echo.py", "--args", args, "--json", "--sandbox", "none")
	var whole map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &whole); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	for _, k := range []string{"exit_code", "output", "stdout", "stderr", "written", "sandbox"} {
		if _, ok := whole[k]; !ok {
			t.Errorf("--json lacks %s:\n%s", k, r.stdout)
		}
	}
	if whole["sandbox"] != "none" || whole["exit_code"] != 0.0 {
		t.Errorf("--json = %s", r.stdout)
	}

	// Plain mode copies the streams and exits with the script's code.
	r = runCtl(t, env, "run", "runner-test", "plain.sh", "--", "a b", "--c")
	if r.code != 3 || r.stdout != "args: a b --c\n" || r.stderr != "to stderr\n" {
		t.Errorf("plain: exit %d\n%q\n%q", r.code, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad output", []string{"bad.py", "--args", "{}"}, exitRunFailed, "BadOutput"},
		{"timeout", []string{"slow.sh", "--timeout", "1s"}, exitRunFailed, "Timeout"},
		{"outside", []string{"../x.py"}, exitUsage, "ScriptOutsideSkill"},
		{"absolute", []string{"/etc/passwd"}, exitUsage, "ScriptOutsideSkill"},
		{"missing script", []string{"nope.py"}, exitNotFound, "ScriptNotFound"},
		{"bad --args", []string{"echo.py", "--args", "{"}, exitUsage, "not valid JSON"},
		{"both modes", []string{"echo.py", "--args", "{}", "--", "x"}, exitUsage, "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCtl(t, env, append([]string{"run", "runner-test"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, "skillctl: ") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q\n%s%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
	if r := runCtl(t, env, "run", "no-such-skill", "x.py"); r.code != exitNotFound || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("missing skill: exit %d\n%s", r.code, r.stderr)
	}

	// What the script writes appears in the thread's /workspace.
	mustRun(t, env, "run", "runner-test", "write.py", "--quiet")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fs := skillsvcv1.NewFilesystemServiceClient(conn)
	ctx := metadata.NewOutgoingContext(t.Context(), metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1"))
	if resp, err := fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/report.txt"}); err != nil || resp.GetContent() != "made by the script" {
		t.Errorf("report.txt: %v %v", resp, err)
	}

	// The binary itself, as a subprocess: the script's exit code is the
	// process's.
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "runner-test", "plain.sh", "--", "x")
	cmd.Env = append(os.Environ(), "SKILLCTL_CONFIG="+t.TempDir()+"/none.yaml")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	outb, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || string(outb) != "args: x\n" {
		t.Errorf("subprocess: %v, %q", err, outb)
	}
}
