package skillview

import "testing"

// TestParsedCodecRefuses: a cached parse without its flags and digest, or
// with flags this build does not know, is undecodable (the caller parses
// the head again), never a parse of something else.
func TestParsedCodecRefuses(t *testing.T) {
	good, ok := EncodeHead(Head{Src: 42, Derived: true})
	if !ok {
		t.Fatal("encode failed")
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"flags only":    {headDerived},
		"unknown flags": append([]byte{0x80}, good[1:]...),
		"a bare parse":  good[9:],
	} {
		if p, err := DecodeHead(b); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, p)
		}
	}
}
