package scan

import "testing"

// TestExpressionsCompile: every expression compiles (they compile lazily,
// so a bad one would otherwise surface only on the first line that passes
// its prefilter).
func TestExpressionsCompile(t *testing.T) {
	for _, p := range append(append([]pattern{}, instructionPatterns...), scriptPatterns...) {
		p.re()
	}
	for _, re := range []func() any{
		func() any { return networkRE() }, func() any { return secretSourceRE() }, func() any { return rawIPRE() },
		func() any { return devTCPRE() }, func() any { return blobRE() }, func() any { return commentRE() },
		func() any { return addresseeRE() }, func() any { return imperativeRE() },
	} {
		re()
	}
}
