//go:build doctest

// The pages' examples run only under the doctest build tag, which
// `make test-docs` sets after building what they need (bin/skillsvc and
// bin/skillctl, the venv, the built TypeScript client, the tools). A tag
// rather than an environment variable: without it `go test ./...` (make
// test-go) does not compile these tests at all, so they neither run without
// their prerequisites nor show up as skipped; with it a missing prerequisite
// fails.
package doctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestDocs runs README.md, every docs/**/*.md page and the clients'
// READMEs, or the pages
// SKILLSVC_DOCS names (space separated, relative to the repository: make
// test-docs DOCS=docs/operators/helm.md).
func TestDocs(t *testing.T) {
	r := newRunner(t)
	pages := strings.Fields(os.Getenv("SKILLSVC_DOCS"))
	if len(pages) == 0 {
		pages = allPages(t, r.Root)
	}
	for _, page := range pages {
		page = filepath.ToSlash(filepath.Clean(page))
		t.Run(page, func(t *testing.T) { runFile(t, r, page) })
	}
}

// TestFixturePage runs the harness's own page, which uses every feature of
// the contract (servers, background, file=, fails, skip, python, ts).
func TestFixturePage(t *testing.T) {
	runFile(t, newRunner(t), "internal/doctest/testdata/features.md")
}

// newRunner checks the prerequisites make test-docs builds, failing (never
// skipping) when one is missing.
func newRunner(t *testing.T) *Runner {
	t.Helper()
	root, err := testserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Root: root}
	r.defaults()
	for _, p := range []struct{ path, from string }{
		{filepath.Join(root, "bin", "skillsvc"), "make build"},
		{filepath.Join(root, "bin", "skillctl"), "make build"},
		{r.Python, "make pyenv"},
		{filepath.Join(r.TSClient, "node_modules", ".bin", "tsc"), "make tsenv"},
		{filepath.Join(r.TSClient, "dist", "index.js"), "npm run build in clients/ts"},
	} {
		if _, err := os.Stat(p.path); err != nil {
			t.Fatalf("%v: run make test-docs, which builds it (%s)", err, p.from)
		}
	}
	for _, bin := range []string{"bash", "node"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%v (make tools installs it)", err)
		}
	}
	return r
}

// allPages is README.md, docs/**/*.md and the clients' READMEs (the pages
// a reader runs commands from), relative to root.
func allPages(t *testing.T, root string) []string {
	t.Helper()
	pages := []string{"README.md", "clients/python/README.md", "clients/ts/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		pages = append(pages, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pages[3:])
	return pages
}

func runFile(t *testing.T, r *Runner, page string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(page, src)
	if err != nil {
		t.Fatal(err)
	}
	run := *r
	run.Log = logWriter{t}
	before := repoStatus(t, r.Root)
	if err := run.Run(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	// The page's directory links to the repository, so a block can write
	// into it (npm ci in clients/ts, make, pip install -e): such a block
	// belongs in skip, or its output in a file= path of the page's own.
	if after := repoStatus(t, r.Root); after != before {
		t.Fatalf("%s changed the repository's files (git status before:\n%s\nafter:\n%s)", page, before, after)
	}
}

// repoStatus is git status of the tracked and the untracked, not ignored,
// files.
func repoStatus(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	return string(out)
}

// logWriter puts the runner's progress lines in the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}
