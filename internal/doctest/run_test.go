package doctest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeRepo is a repository root with a top-level file, a data/ that pages
// must not see, and a bin/ whose hello is first on the blocks' PATH.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":    "module example\n",
		"data/old":  "the repository's own data\n",
		"bin/hello": "#!/bin/sh\necho hello from bin\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func runPage(t *testing.T, r *Runner, page string) error {
	t.Helper()
	p, err := Parse("page.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(t.Context(), p)
}

// TestRunShell runs sh blocks only, so it needs bash and nothing else: the
// page's directory, file= blocks, skip, fails, the environment and PATH.
func TestRunShell(t *testing.T) {
	root := fakeRepo(t)
	t.Setenv("SKILLSVC_DOCTEST_PROBE", "from make")
	page := "```sh\n" +
		"test -L go.mod && test ! -e data  # links to the repository, but not its data\n" +
		"test -z \"${SKILLSVC_DOCTEST_PROBE:-}\"\n" +
		"case \"$SKILLSVC_SKILL_CACHE\" in */skill-cache) ;; *) exit 1 ;; esac  # not the caller's cache\n" +
		"hello\n" +
		"```\n" +
		"```yaml file=conf/app.yaml\n" +
		"key: value\n" +
		"```\n" +
		"```sh skip=\"would fail\"\n" +
		"exit 1\n" +
		"```\n" +
		"```sh fails\n" +
		"grep -q missing conf/app.yaml\n" +
		"```\n" +
		"```bash\n" +
		"test \"$(cat conf/app.yaml)\" = 'key: value'\n" +
		"echo written > out.txt\n" +
		"```\n" +
		"```shell\n" +
		"test \"$(cat out.txt)\" = written  # blocks share the directory\n" +
		"```\n" +
		"```text\n" +
		"shown only: exit 1\n" +
		"```\n"
	if err := runPage(t, &Runner{Root: root}, page); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 3 {
		t.Errorf("the page wrote into the repository: %v", entries)
	}
}

func TestRunFailures(t *testing.T) {
	root := fakeRepo(t)
	for _, tc := range []struct {
		name, page string
		want       []string // in the error, in order
	}{
		{
			name: "non-zero exit",
			page: "```sh\ntrue\n```\n\n```sh\necho before\nfalse\necho after\n```\n",
			want: []string{"page.md:5: exited 1", "--- block (sh)\necho before\nfalse\necho after\n", "--- output\nbefore"},
		},
		{
			name: "pipefail",
			page: "```sh\nfalse | cat\n```\n",
			want: []string{"page.md:1: exited 1"},
		},
		{
			name: "unset variable",
			page: "```sh\necho \"$NOT_SET_ANYWHERE\"\n```\n",
			want: []string{"page.md:1: exited 1", "NOT_SET_ANYWHERE: unbound variable"},
		},
		{
			name: "fails that succeeds",
			page: "```sh fails\necho fine\n```\n",
			want: []string{"page.md:1: exited 0, but the block is marked fails", "--- output\nfine"},
		},
		{
			name: "file through a repository link",
			page: "```text file=bin/hello\noverwritten\n```\n",
			want: []string{"page.md:1: file=bin/hello: bin is a link into the repository"},
		},
		{
			name: "background not ready",
			page: "```sh background ready=127.0.0.1:1\necho giving up; exit 3\n```\n",
			want: []string{"page.md:1: 127.0.0.1:1: the process exited (exit status 3) before it was ready", "giving up"},
		},
		{
			name: "timeout",
			page: "```sh\necho waiting\nsleep 1000\n```\n",
			want: []string{"page.md:1: still running after 1s (killed)", "--- output\nwaiting"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runPage(t, &Runner{Root: root, Timeout: time.Second}, tc.page)
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("got %v, want a *Failure", err)
			}
			msg, rest := err.Error(), err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error lacks %q (or has it out of order):\n%s", w, msg)
				}
				rest = rest[i+len(w):]
			}
			if data, _ := os.ReadFile(filepath.Join(root, "bin", "hello")); !strings.Contains(string(data), "hello from bin") {
				t.Errorf("the repository's bin/hello was overwritten: %q", data)
			}
		})
	}
}

// TestRunStopsProcesses checks that a background block, and what a
// foreground block left running, die with the page.
func TestRunStopsProcesses(t *testing.T) {
	root := fakeRepo(t)
	pids := t.TempDir()
	page := "```sh background\n" +
		"sleep 1000 &\n" +
		"echo $! > " + pids + "/background\n" +
		"wait\n" +
		"```\n" +
		"```sh\n" +
		"until test -s " + pids + "/background; do sleep 0.05; done\n" +
		"sleep 1000 >/dev/null 2>&1 &\n" +
		"echo $! > " + pids + "/stray\n" +
		"```\n"
	if err := runPage(t, &Runner{Root: root}, page); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"background", "stray"} {
		data, err := os.ReadFile(filepath.Join(pids, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		// SIGKILL lands asynchronously, and the orphan is reaped by init:
		// wait until it is gone or a zombie.
		for alive(pid) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
