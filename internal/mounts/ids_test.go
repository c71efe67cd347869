package mounts

import (
	"regexp"
	"testing"
)

// FuzzIDChars: idChars agrees with the pattern ValidateID documents.
func FuzzIDChars(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	for _, s := range []string{"", "a", "alice", ".a", "a.b_c-d", "_x", "-", "é", "a b", "A9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := idChars(s), re.MatchString(s); got != want {
			t.Errorf("idChars(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
