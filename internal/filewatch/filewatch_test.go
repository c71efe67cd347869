package filewatch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/filewatch"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
)

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
	filewatchtest.Write(t, a, "1")
	filewatchtest.Write(t, b, "x")
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
	filewatchtest.Write(t, a, "bad")
	if changed, err := v.Check(); changed || err == nil {
		t.Fatalf("bad contents: Check = %v, %v; want an error", changed, err)
	}
	if got := v.Load(); got != "1+x" {
		t.Fatalf("after a bad change Load = %q, want the previous value", got)
	}
	filewatchtest.Write(t, a, "2")
	if changed, err := v.Check(); !changed || err != nil {
		t.Fatalf("good change: Check = %v, %v", changed, err)
	}
	if got := v.Load(); got != "2+x" {
		t.Fatalf("Load = %q, want 2+x", got)
	}
	// Bytes moving from one file to the other is a change.
	filewatchtest.Write(t, a, "2x")
	filewatchtest.Write(t, b, "")
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
	filewatchtest.Write(t, p, "bad")
	if _, err := filewatch.Watch([]string{p}, -1, join, nil); err == nil {
		t.Error("unparsable file: no error")
	}
}

// A replaced file is picked up by the poller without anyone calling Check.
func TestPoll(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	filewatchtest.Write(t, p, "old")
	v, err := filewatch.Watch([]string{p}, 5*time.Millisecond, join, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// Replace it the way Kubernetes and editors do: a new file renamed over.
	filewatchtest.Replace(t, p, "new")
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
