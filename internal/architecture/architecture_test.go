package architecture

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root, two levels up from this package.
const root = "../.."

// goFiles returns the non-test, hand-written Go files under dir (generated
// files say so in their first lines, as go generate's convention asks).
func goFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != dir && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(b) {
			return nil
		}
		out[path] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// generated is the marker of generated code (https://go.dev/s/generatedcode).
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func TestPackageSizes(t *testing.T) {
	lines := map[string]int{}
	for path, b := range goFiles(t, filepath.Join(root, "internal")) {
		lines[filepath.Dir(path)] += bytes.Count(b, []byte("\n"))
	}
	if len(lines) < 10 {
		t.Fatalf("found %d packages under internal/: wrong root?", len(lines))
	}
	for dir, n := range lines {
		rel, _ := filepath.Rel(root, dir)
		t.Logf("%5d %s", n, rel)
		if n > MaxPackageLines {
			t.Errorf("%s has %d lines of non-test code, more than %d: split it by job (ARCHITECTURE.md)", rel, n, MaxPackageLines)
		}
	}
}

// TestOneGRPCServer: the process serves gRPC from one grpc.Server; the HTTP
// front ends (JSON, MCP) call the services in process, not through a
// second server of their own.
func TestOneGRPCServer(t *testing.T) {
	var at []string
	for _, dir := range []string{"internal", "cmd"} {
		for path, b := range goFiles(t, filepath.Join(root, dir)) {
			if bytes.Contains(b, []byte("grpc.NewServer(")) {
				rel, _ := filepath.Rel(root, path)
				at = append(at, rel)
			}
		}
	}
	if len(at) != 1 || at[0] != filepath.Join("internal", "app", "app.go") {
		t.Errorf("grpc.NewServer is called in %v; want only internal/app/app.go", at)
	}
}
