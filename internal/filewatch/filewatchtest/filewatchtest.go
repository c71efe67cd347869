// Package filewatchtest changes files the two ways a watched file changes
// under a running service: written in place, or replaced by a new file
// renamed over it, as Kubernetes secret mounts, editors and key rotation do.
package filewatchtest

import (
	"os"
	"testing"
)

// Write writes data to path in place, failing the test if it cannot.
func Write[Data string | []byte](t testing.TB, path string, data Data) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Replace writes data beside path and renames it over path, so a reader
// sees the old file or the new one, never half of either.
func Replace[Data string | []byte](t testing.TB, path string, data Data) {
	t.Helper()
	tmp := path + ".tmp"
	Write(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
