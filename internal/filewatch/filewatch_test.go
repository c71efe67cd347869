package filewatch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/filewatch"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// join parses by concatenating, refusing contents that say "bad".
func join(contents [][]byte) (string, error) {
	var parts []string
	for _, c := range contents {
		if string(c) == "bad" {
			return "", errors.New("bad contents")
		}
		parts = append(parts, string(c))
	}
	return strings.Join(parts, "+"), nil
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, "1")
	write(t, b, "x")
	parses := 0
	v, err := filewatch.Watch([]string{a, b}, -1, func(c [][]byte) (string, error) { parses++; return join(c) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := v.Load(); got != "1+x" {
		t.Fatalf("Load = %q", got)
	}
	if changed, err := v.Check(); changed || err != nil || parses != 1 {
		t.Fatalf("unchanged files: Check = %v, %v after %d parses; want no parse", changed, err, parses)
	}
	write(t, a, "bad")
	if changed, err := v.Check(); changed || err == nil {
		t.Fatalf("bad contents: Check = %v, %v; want an error", changed, err)
	}
	if got := v.Load(); got != "1+x" {
		t.Fatalf("after a bad change Load = %q, want the previous value", got)
	}
	write(t, a, "2")
	if changed, err := v.Check(); !changed || err != nil {
		t.Fatalf("good change: Check = %v, %v", changed, err)
	}
	if got := v.Load(); got != "2+x" {
		t.Fatalf("Load = %q, want 2+x", got)
	}
	// Bytes moving from one file to the other is a change.
	write(t, a, "2x")
	write(t, b, "")
	if changed, _ := v.Check(); !changed {
		t.Fatal("moving bytes between files was not seen as a change")
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Check(); err == nil {
		t.Fatal("a missing file: Check gave no error")
	}
	if got := v.Load(); got != "2x+" {
		t.Fatalf("after a missing file Load = %q, want the previous value", got)
	}
}

func TestWatchFailsOnStart(t *testing.T) {
	dir := t.TempDir()
	if _, err := filewatch.Watch([]string{filepath.Join(dir, "missing")}, -1, join, nil); err == nil {
		t.Error("missing file: no error")
	}
	p := filepath.Join(dir, "bad")
	write(t, p, "bad")
	if _, err := filewatch.Watch([]string{p}, -1, join, nil); err == nil {
		t.Error("unparsable file: no error")
	}
}

// A replaced file is picked up by the poller without anyone calling Check.
func TestPoll(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	write(t, p, "old")
	v, err := filewatch.Watch([]string{p}, 5*time.Millisecond, join, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// Replace it the way Kubernetes and editors do: a new file renamed over.
	tmp := filepath.Join(dir, "f.tmp")
	write(t, tmp, "new")
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v.Load() != "new" {
		if time.Now().After(deadline) {
			t.Fatalf("Load = %q 10s after the change, want new", v.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	v.Close()
	v.Close() // idempotent
}
