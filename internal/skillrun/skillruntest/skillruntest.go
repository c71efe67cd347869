// Package skillruntest loads the runners' conformance fixture, test/runner:
// the skill folder every runner's suite uploads and the cases each suite
// runs through its own public API (skillrun.Runner and skillctl run here;
// the Python and TypeScript clients read the same files). Check holds a
// runner's outcome to a case, so the three runners cannot drift apart
// without a test failing.
package skillruntest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Case is one case of test/runner/cases.json (README.md there describes
// the fields).
type Case struct {
	Name   string `json:"name"`
	Skill  string `json:"skill"`
	Script string `json:"script"`
	// JSONArgs, when set, selects JSON mode.
	JSONArgs        json.RawMessage   `json:"json_args"`
	Args            []string          `json:"args"`
	Sandboxes       []string          `json:"sandboxes"`
	Skillctl        bool              `json:"skillctl"`
	Timeout         float64           `json:"timeout"` // seconds; 0: the default
	MaxOutputBytes  int64             `json:"max_output_bytes"`
	MemoryBytes     int64             `json:"memory_bytes"`
	Network         bool              `json:"network"`
	Workspace       *bool             `json:"workspace"`
	Interpreters    map[string]string `json:"interpreters"`
	WorkspaceBefore map[string]string `json:"workspace_before"`
	// PathPrepend is a folder of test/runner the suite puts first on the
	// runner's own PATH for the run (interpreters found only there).
	PathPrepend string `json:"path_prepend"`
	// NoBwrap: the suite makes bubblewrap unavailable for the run.
	NoBwrap   bool              `json:"no_bwrap"`
	Expect    Expect            `json:"expect"`
	BySandbox map[string]Expect `json:"by_sandbox"`
}

// Expect is what a case's run must give. Absent fields are not checked;
// ExitCode and Output tell absent (nil) from null ("null").
type Expect struct {
	Error          string             `json:"error"`
	ExitCode       json.RawMessage    `json:"exit_code"`
	Output         json.RawMessage    `json:"output"`
	OutputSubset   map[string]any     `json:"output_subset"`
	Stdout         *string            `json:"stdout"`
	Stderr         *string            `json:"stderr"`
	StdoutRE       string             `json:"stdout_re"`
	StderrRE       string             `json:"stderr_re"`
	StdoutLen      *int               `json:"stdout_len"`
	StderrLen      *int               `json:"stderr_len"`
	Written        *[]string          `json:"written"`
	WorkspaceAfter map[string]*string `json:"workspace_after"`
	ChildrenDead   bool               `json:"children_dead"`
}

// Fixture is the skill (Name, Files by slash path), the cases, and each
// error kind's gRPC code name (Codes: "NOT_FOUND", …).
type Fixture struct {
	Name  string
	Files map[string]File
	Cases []Case
	Codes map[string]string
}

// File is one file of the fixture skill, with its mode as checked out.
type File struct {
	Body string
	Mode fs.FileMode
}

// Dir is test/runner in this checkout.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "test", "runner")
}

// Load reads the fixture.
func Load(t testing.TB) *Fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Skill string            `json:"skill"`
		Cases []Case            `json:"cases"`
		Codes map[string]string `json:"codes"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	delete(f.Codes, "$comment")
	fx := &Fixture{Name: f.Skill, Cases: f.Cases, Files: map[string]File{}, Codes: f.Codes}
	root := filepath.Join(Dir(), f.Skill)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fx.Files[filepath.ToSlash(rel)] = File{Body: string(body), Mode: st.Mode().Perm()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range fx.Cases {
		if fx.Cases[i].Skill == "" {
			fx.Cases[i].Skill = f.Skill
		}
		if len(fx.Cases[i].Sandboxes) == 0 {
			fx.Cases[i].Sandboxes = []string{"none"}
		}
	}
	return fx
}

// Vars are the values a run puts for the cases' placeholders: {{marker}},
// a number unique to the run that the script's processes carry in their
// command lines, and {{port}}, a TCP port on 127.0.0.1 that accepts.
type Vars struct{ Marker, Port string }

// NewVars makes a marker and, when the case names {{port}}, a listener
// that lives as long as t.
func NewVars(t testing.TB, c Case) Vars {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	if err != nil {
		t.Fatal(err)
	}
	v := Vars{Marker: fmt.Sprintf("%09d", n.Int64()+1e9)[1:]}
	if strings.Contains(string(c.JSONArgs)+strings.Join(c.Args, " "), "{{port}}") {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		v.Port = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	}
	return v
}

// Apply returns c with its placeholders filled in.
func (v Vars) Apply(c Case) Case {
	r := strings.NewReplacer("{{marker}}", v.Marker, "{{port}}", v.Port)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = r.Replace(a)
	}
	c.Args = args
	if c.JSONArgs != nil {
		c.JSONArgs = json.RawMessage(r.Replace(string(c.JSONArgs)))
	}
	return c
}

// Outcome is a run as any runner reports it: Error the kind of a failed
// run ("" for a result); ExitCode nil where the runner killed the script
// or it never ran; Output nil outside JSON mode.
type Outcome struct {
	Error          string
	ExitCode       *int
	Stdout, Stderr string
	Output         json.RawMessage
	Written        []string
}

// Workspace reads a path under the thread's /workspace: its content, or
// false when there is no such file.
type Workspace func(rel string) (string, bool, error)

// Check holds o, a run of c under sandbox, to the case's expectations.
func Check(t testing.TB, c Case, sandbox string, v Vars, o Outcome, ws Workspace) {
	t.Helper()
	check(t, c.Expect, v, o, ws)
	if e, ok := c.BySandbox[sandbox]; ok {
		check(t, e, v, o, ws)
	}
}

func check(t testing.TB, e Expect, v Vars, o Outcome, ws Workspace) {
	t.Helper()
	if o.Error != e.Error {
		t.Errorf("error = %q, want %q (stdout %q, stderr %q)", o.Error, e.Error, clip(o.Stdout), clip(o.Stderr))
	}
	if e.ExitCode != nil {
		got := "null"
		if o.ExitCode != nil {
			got = fmt.Sprint(*o.ExitCode)
		}
		if got != string(e.ExitCode) {
			t.Errorf("exit code = %s, want %s (stderr %q)", got, e.ExitCode, clip(o.Stderr))
		}
	}
	if e.Output != nil {
		if string(e.Output) == "null" {
			if o.Output != nil {
				t.Errorf("output = %s, want none", o.Output)
			}
		} else if !jsonEqual(o.Output, e.Output) {
			t.Errorf("output = %s, want %s", o.Output, e.Output)
		}
	}
	if e.OutputSubset != nil {
		var got map[string]any
		if err := json.Unmarshal(o.Output, &got); err != nil {
			t.Errorf("output %s: %v", o.Output, err)
		}
		for k, want := range e.OutputSubset {
			if !reflect.DeepEqual(got[k], want) {
				t.Errorf("output[%q] = %#v, want %#v", k, got[k], want)
			}
		}
	}
	for _, s := range []struct {
		name, got string
		want      *string
		re        string
		n         *int
	}{{"stdout", o.Stdout, e.Stdout, e.StdoutRE, e.StdoutLen}, {"stderr", o.Stderr, e.Stderr, e.StderrRE, e.StderrLen}} {
		if s.want != nil && s.got != *s.want {
			t.Errorf("%s = %q, want %q", s.name, clip(s.got), *s.want)
		}
		if s.re != "" && !regexp.MustCompile(s.re).MatchString(s.got) {
			t.Errorf("%s = %q, want a match of %s", s.name, clip(s.got), s.re)
		}
		if s.n != nil && len(s.got) != *s.n {
			t.Errorf("%s has %d bytes, want %d", s.name, len(s.got), *s.n)
		}
	}
	if e.Written != nil && !reflect.DeepEqual(nonNil(o.Written), *e.Written) {
		t.Errorf("written = %q, want %q", o.Written, *e.Written)
	}
	for rel, want := range e.WorkspaceAfter {
		got, ok, err := ws(rel)
		switch {
		case err != nil:
			t.Errorf("/workspace/%s: %v", rel, err)
		case want == nil && ok:
			t.Errorf("/workspace/%s = %q, want no such file", rel, got)
		case want != nil && (!ok || got != *want):
			t.Errorf("/workspace/%s = %q (there: %v), want %q", rel, got, ok, *want)
		}
	}
	if e.ChildrenDead && Alive(v.Marker) {
		t.Errorf("a process of the script (marker %s) outlived the run", v.Marker)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Download reads a file of the caller's whole, or false when there is no
// such file.
func Download(ctx context.Context, files skillsvcv1.FilesystemServiceClient, p string) (string, bool, error) {
	stream, err := files.Download(ctx, &skillsvcv1.DownloadRequest{Path: p})
	if err != nil {
		return "", false, err
	}
	var b bytes.Buffer
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), true, nil
		}
		if status.Code(err) == codes.NotFound {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		b.Write(m.GetData())
	}
}

// Alive reports whether a process whose command line holds marker is
// still alive (zombies waiting to be reaped are dead).
func Alive(marker string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), marker) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(st), ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue
		}
		return true
	}
	return false
}
