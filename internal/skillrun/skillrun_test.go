package skillrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun/skillruntest"
)

// skillDir writes files (path -> content; a content starting with "->" is
// a symlink to the rest) into a new folder.
func skillDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".bin") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolveScript(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "evil.py")
	os.WriteFile(outside, []byte("print(1)"), 0o644)
	dir := skillDir(t, map[string]string{
		"scripts/a.py": "", "a.py": "", "b.py": "", "scripts/sub/c.sh": "",
		"scripts/out.py": "->" + outside, "scripts/in.py": "->a.py", "scripts/dangling.py": "->nowhere.py",
		"scripts/dir/x": "",
	})
	for _, tc := range []struct{ script, want string }{
		{"a.py", "scripts/a.py"}, // scripts/ first
		{"b.py", "b.py"},         // then the root
		{"scripts/a.py", "scripts/a.py"},
		{"./a.py", "scripts/a.py"},
		{"scripts/sub/c.sh", "scripts/sub/c.sh"},
		{"scripts/in.py", "scripts/in.py"}, // a link inside the skill is fine
		{"../a.py", "ScriptOutsideSkill"},
		{"scripts/../../a.py", "ScriptOutsideSkill"},
		{"/etc/passwd", "ScriptOutsideSkill"},
		{"scripts/out.py", "ScriptOutsideSkill"},
		{"scripts/dangling.py", "ScriptOutsideSkill"},
		{"c.sh", "ScriptNotFound"},
		{"missing.py", "ScriptNotFound"},
		{"scripts/dir", "ScriptNotFound"},
		{"", "ScriptNotFound"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			got, err := ResolveScript(dir, tc.script)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("untyped error %v", err)
				}
				got = e.Kind.Error()
			}
			if got != tc.want {
				t.Errorf("ResolveScript(%q) = %q (%v), want %q", tc.script, got, err, tc.want)
			}
		})
	}
}

func TestInterpreter(t *testing.T) {
	dir := skillDir(t, map[string]string{
		"a.py": "", "a.JS": "", "a.mjs": "", "a.cjs": "", "a.sh": "",
		"env": "#!/usr/bin/env python3\n", "envS": "#!/usr/bin/env -S bash -e\n", "abs": "#!/bin/sh -e\n",
		"run.bin": "\x7fELF", "notes.txt": "hello\n", "ghost": "#!/usr/bin/env no-such-interpreter-x\n",
	})
	for _, tc := range []struct {
		file      string
		overrides map[string]string
		want      string // base names of the argv, or the error kind
	}{
		{"a.py", nil, "python3"}, {"a.JS", nil, "node"}, {"a.mjs", nil, "node"}, {"a.cjs", nil, "node"},
		{"a.sh", nil, "bash"}, {"env", nil, "python3"}, {"envS", nil, "bash -e"}, {"abs", nil, "sh -e"},
		{"run.bin", nil, ""}, // runs directly
		{"a.py", map[string]string{".py": "/bin/sh"}, "sh"},
		{"notes.txt", nil, "UnknownInterpreter"},
		{"ghost", nil, "UnknownInterpreter"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			argv, err := Interpreter(filepath.Join(dir, tc.file), tc.overrides)
			var got string
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("untyped error %v", err)
				}
				got = e.Kind.Error()
			} else {
				var names []string
				for i, a := range argv {
					if i == 0 {
						if !filepath.IsAbs(a) {
							t.Errorf("interpreter %q is not an absolute path", a)
						}
						a = filepath.Base(a)
					}
					names = append(names, a)
				}
				got = strings.Join(names, " ")
			}
			if got != tc.want {
				t.Errorf("Interpreter(%s) = %q (%v), want %q", tc.file, got, err, tc.want)
			}
		})
	}
}

func TestParseOutput(t *testing.T) {
	for _, tc := range []struct {
		stdout string
		ok     bool
	}{
		{`{"a": 1}`, true}, {"\n  {\"a\": [1, {}]}\n\n", true}, {`{}`, true},
		{``, false}, {`  `, false}, {`[1]`, false}, {`"s"`, false}, {`1`, false}, {`null`, false},
		{`{"a": 1}{"b": 2}`, false}, {"{\"a\": 1}\n{\"b\": 2}", false}, {`log line` + "\n" + `{"a": 1}`, false},
		{`{"a": 1} trailing`, false}, {`{"a": }`, false},
	} {
		got, ok := ParseOutput([]byte(tc.stdout))
		if ok != tc.ok || ok && string(got) != strings.TrimSpace(tc.stdout) {
			t.Errorf("ParseOutput(%q) = %s, %v; want ok %v", tc.stdout, got, ok, tc.ok)
		}
	}
}

func TestSkillTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"120": 2 * time.Minute, " 5 ": 5 * time.Second, "": DefaultTimeout, "0": DefaultTimeout, "-3": DefaultTimeout, "1m": DefaultTimeout,
		// As the Python and TypeScript runners read it: decimal seconds only.
		"1.5": 1500 * time.Millisecond, "1e3": DefaultTimeout, "NaN": DefaultTimeout, "+2": DefaultTimeout, "1e400": DefaultTimeout} {
		s := &skillsvcv1.SkillSummary{Metadata: map[string]string{"timeout": v}}
		if got := SkillTimeout(s); got != want {
			t.Errorf("timeout %q = %v, want %v", v, got, want)
		}
	}
}

func TestCacheRoot(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SKILLSVC_SKILL_CACHE": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/c"},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/skillsvc/skills"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/skillsvc/skills"},
	} {
		if got, err := CacheRoot(func(k string) string { return tc.env[k] }); err != nil || got != tc.want {
			t.Errorf("CacheRoot(%v) = %q, %v", tc.env, got, err)
		}
	}
}

func TestInterpreterRoots(t *testing.T) {
	if got := interpreterRoots([]string{"/usr/bin/python3"}); len(got) != 0 {
		t.Errorf("system python: %v", got)
	}
	if got := interpreterRoots([]string{"/bin/sh"}); len(got) != 0 {
		t.Errorf("/bin/sh: %v", got)
	}
	if got := interpreterRoots([]string{"/opt/node-v20/bin/node"}); !slices.Equal(got, []string{"/opt/node-v20"}) {
		t.Errorf("node install: %v", got)
	}
	// A virtualenv: its prefix, and its base interpreter's when outside /usr.
	venv := filepath.Join(t.TempDir(), "venv")
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.Symlink("/usr/bin/python3", filepath.Join(venv, "bin", "python3"))
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	if got := interpreterRoots([]string{filepath.Join(venv, "bin", "python3")}); !slices.Equal(got, []string{venv}) {
		t.Errorf("venv: %v", got)
	}
}

// TestRunLimits: the limits hold in both local sandboxes without a server.
func TestRunLimits(t *testing.T) {
	for _, sb := range []Sandbox{None{}, Bwrap{}} {
		name := "none"
		if _, ok := sb.(Bwrap); ok {
			name = "bwrap"
		}
		t.Run(name, func(t *testing.T) {
			if name == "bwrap" {
				requireBwrap(t)
			}
			skill := skillDir(t, map[string]string{
				"mem.py":  "b = bytearray(2 << 30)\nprint('allocated')\n",
				"loud.sh": "yes stderr >&2\n",
				"ok.sh":   "echo hi\n",
				"term.sh": "echo dying\nkill -TERM $$\n",
			})
			spec := func(script string) Spec {
				return Spec{Interpreter: []string{"/bin/sh"}, Script: script, SkillDir: skill, WorkspaceDir: t.TempDir(),
					Env: map[string]string{"PATH": ScriptPATH}, Timeout: time.Minute, MaxOutputBytes: 4096, MemoryBytes: DefaultMemoryBytes}
			}
			s := spec("mem.py")
			s.Interpreter = []string{"/usr/bin/python3"}
			o, err := sb.Run(context.Background(), s)
			if err != nil || o.ExitCode == 0 || !strings.Contains(string(o.Stderr), "MemoryError") {
				t.Errorf("2 GiB under a 1 GiB cap: %v, exit %d, %s", err, o.ExitCode, o.Stderr)
			}
			o, err = sb.Run(context.Background(), spec("loud.sh"))
			if err != nil || !o.Truncated || len(o.Stderr) != 4096 || o.ExitCode != -1 {
				t.Errorf("loud: %v, truncated %v, %d bytes, exit %d", err, o.Truncated, len(o.Stderr), o.ExitCode)
			}
			// A script its own signal ends reports 128+signal, as a shell does.
			o, err = sb.Run(context.Background(), spec("term.sh"))
			if err != nil || o.ExitCode != 128+15 || string(o.Stdout) != "dying\n" {
				t.Errorf("term: %v, exit %d, %q", err, o.ExitCode, o.Stdout)
			}
			o, err = sb.Run(context.Background(), spec("ok.sh"))
			if err != nil || string(o.Stdout) != "hi\n" || o.ExitCode != 0 || o.Sandbox != name {
				t.Errorf("ok: %v, %+v", err, o)
			}
		})
	}
}

func TestSelectSandbox(t *testing.T) {
	if sb, err := SelectSandbox("none", nil); err != nil || sb != (None{}) {
		t.Errorf("none: %v, %v", sb, err)
	}
	if _, err := SelectSandbox("gvisor", nil); err == nil {
		t.Error("an unknown sandbox was accepted")
	}
	if bwrapWorks() == nil {
		if sb, err := SelectSandbox("auto", func(string) { t.Error("warned with bwrap available") }); err != nil || sb != (Bwrap{}) {
			t.Errorf("auto: %v, %v", sb, err)
		}
	}
}

// TestAlive: the timeout cases' process check finds a live process and
// not a dead one.
func TestAlive(t *testing.T) {
	marker := fmt.Sprintf("3600.%d9", os.Getpid())
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !skillruntest.Alive(marker) {
		t.Error("a live process was not found")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if skillruntest.Alive(marker) {
		t.Error("a dead process was found")
	}
}
