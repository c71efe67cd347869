package doctest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/doctest"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Quick start":                        "quick-start",
		"The HTTP edges (MCP and JSON)":      "the-http-edges-mcp-and-json",
		"`skillctl push`: publish a version": "skillctl-push-publish-a-version",
		"Load harness (`make bench-load`)":   "load-harness-make-bench-load",
		"Versions vs. pins":                  "versions-vs-pins",
		"Garbage collection — what is kept":  "garbage-collection--what-is-kept",
	} {
		if got := doctest.Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLinksFindBroken(t *testing.T) {
	root := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "# A\n\n## Same\n\n## Same\n\nSee [b](b.md#part-two), [self](#same-1), [up](../README.md), [web](https://example.com/x).\n\n```sh\n[not](a-link.md)\n```\n`[no](code.md)`\n")
	write("docs/b.md", "# B\n\n## Part two\n")
	write("README.md", "[a](docs/a.md#same) [gone](docs/gone.md) [bad](docs/b.md#part-three) [out](../x.md)\n")
	if errs := doctest.Links(root, "docs/a.md"); len(errs) != 0 {
		t.Errorf("docs/a.md: %v", errs)
	}
	errs := doctest.Links(root, "README.md")
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"no such file docs/gone.md", "has no heading #part-three", "leaves the repository"} {
		if !strings.Contains(all, want) {
			t.Errorf("want an error with %q, got:\n%s", want, all)
		}
	}
	if len(errs) != 3 {
		t.Errorf("want 3 errors, got:\n%s", all)
	}
}

// TestLinks checks every relative link of the project's pages: the pages
// moved from one README into docs/ by audience, and a link that breaks
// sends a reader nowhere.
func TestLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && (strings.HasPrefix(name, ".") && p != root || name == "node_modules" || name == "testdata" || name == "bin" || name == "data") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			rel, _ := filepath.Rel(root, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages under %s", len(pages), root)
	}
	for _, p := range pages {
		for _, err := range doctest.Links(root, p) {
			t.Error(err)
		}
	}
}
