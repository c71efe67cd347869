package requestid_test

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/requestid"
)

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given []string
		keep  bool
	}{
		{"none", nil, false},
		{"uuid", []string{"0f8fad5b-d9cb-469f-a165-70867728950e"}, true},
		{"trace style", []string{"req:42.a_b"}, true},
		{"two values", []string{"a", "b"}, false},
		{"empty", []string{""}, false},
		{"newline", []string{"a\nfake audit line"}, false},
		{"space", []string{"a b"}, false},
		{"too long", []string{strings.Repeat("a", 65)}, false},
		{"non-ASCII", []string{"é"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := requestid.Pick(tc.given)
			if tc.keep {
				if got != tc.given[0] {
					t.Errorf("Pick(%q) = %q, want it kept", tc.given, got)
				}
				return
			}
			if len(got) != 32 || strings.Trim(got, "0123456789abcdef") != "" {
				t.Errorf("Pick(%q) = %q, want 32 random hex digits", tc.given, got)
			}
		})
	}
	if a, b := requestid.Pick(nil), requestid.Pick(nil); a == b {
		t.Errorf("two new IDs are equal: %q", a)
	}
}
