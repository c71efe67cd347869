package skillmd

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNeedsXMLEscape: the byte-wise check agrees with the rule it
// implements, rune by rune, on ASCII, other scripts, characters XML does not
// allow and bytes that are not UTF-8.
func TestNeedsXMLEscape(t *testing.T) {
	pieces := []string{"a", " ", "&", "<", ">", "\"", "\t", "\n", "\x01", "\x7f", "é", "✓", "\ufffe", "\U0001F600", "\xff", "\xe2\x9c", "]]"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		for _, attr := range []bool{false, true} {
			want := strings.ContainsFunc(s, func(r rune) bool { return r == '&' || r == '<' || r == '>' || attr && r == '"' || !xmlChar(r) })
			if got := needsXMLEscape(s, attr); got != want {
				t.Fatalf("needsXMLEscape(%q, %t) = %t, want %t", s, attr, got, want)
			}
		}
	}
}

// TestCollapseSpace: the same as joining the fields, whatever the spaces.
func TestCollapseSpace(t *testing.T) {
	pieces := []string{"a", "bc", " ", "  ", "\t", "\n", "\u00a0", "\u2003", "é", "\x85", "\xff", "\u0085", "\r\n", "\xe2\x80", "…", "\u3000"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
