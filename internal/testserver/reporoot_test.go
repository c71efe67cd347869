package testserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoRoot: inside the checkout RepoRoot finds it; outside, under
// another module or none, it says so rather than build from the wrong tree.
// (Not parallel: it changes the working directory.)
func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "skillsvc")); err != nil {
		t.Errorf("RepoRoot = %s, which has no cmd/skillsvc: %v", root, err)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("// a user's project\nmodule example.com/agent\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(other, "tests")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	if got, err := RepoRoot(); err == nil || !strings.Contains(err.Error(), "not a skillsvc checkout") {
		t.Errorf("RepoRoot under another module = %q, %v; want an error saying it is no skillsvc checkout", got, err)
	}
}

func TestModulePath(t *testing.T) {
	for gomod, want := range map[string]string{
		"module github.com/skillsvc/skillsvc\n\ngo 1.26\n": "github.com/skillsvc/skillsvc",
		"// x\nmodule \"example.com/q\"\n":                 "example.com/q",
		"modules are not this\n":                           "",
		"go 1.26\n":                                        "",
	} {
		if got := modulePath([]byte(gomod)); got != want {
			t.Errorf("modulePath(%q) = %q, want %q", gomod, got, want)
		}
	}
}
