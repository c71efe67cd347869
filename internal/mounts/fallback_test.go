package mounts

import "testing"

// TestFallback: a path without an extension is tried again with ".md";
// one with an extension (in its last segment) is not.
func TestFallback(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"bare name", "reference", "reference.md", true},
		{"nested", "docs/guide", "docs/guide.md", true},
		{"dotted folder", "v1.2/guide", "v1.2/guide.md", true},
		{"has extension", "reference.txt", "", false},
		{"markdown already", "docs/guide.md", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := Fallback(tc.in); got != tc.want || ok != tc.ok {
				t.Fatalf("Fallback(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
