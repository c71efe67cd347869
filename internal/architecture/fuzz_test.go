package architecture

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFuzzTargetsExist: every entry of the Makefile's FUZZ_TARGETS names a
// fuzz function of its package's tests. go test -fuzz with a pattern that
// matches nothing passes without fuzzing, so a target moved in a split
// would otherwise go unfuzzed, silently.
func TestFuzzTargetsExist(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\nFUZZ_TARGETS :=(.*?)\n\n`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no FUZZ_TARGETS := block in the Makefile")
	}
	entries := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	if len(entries) < 10 {
		t.Fatalf("FUZZ_TARGETS has %d entries: %q", len(entries), entries)
	}
	for _, e := range entries {
		parts := strings.Split(e, ":")
		if len(parts) != 3 {
			t.Errorf("FUZZ_TARGETS entry %q is not pkg:Func:budget", e)
			continue
		}
		dir, fn := filepath.Join(root, parts[0]), parts[1]
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		def := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(fn) + `\(\w+ \*testing\.F\)`)
		found := false
		for _, f := range tests {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if def.Match(b) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("FUZZ_TARGETS entry %q: no func %s(*testing.F) in %s's tests", e, fn, parts[0])
		}
	}
}
