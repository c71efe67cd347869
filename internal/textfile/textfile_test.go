package textfile

import "testing"

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		head string
		size int64
		want bool
	}{
		{"text", "hello\n", 6, false},
		{"NUL", "a\x00b", 3, true},
		{"invalid UTF-8", "a\xffb", 3, true},
		{"head cut mid-rune", "caf\xc3", 100, false},
		{"whole file ending mid-rune", "caf\xc3", 4, true},
		{"empty", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsBinary([]byte(tc.head), tc.size); got != tc.want {
				t.Errorf("IsBinary(%q, %d) = %v, want %v", tc.head, tc.size, got, tc.want)
			}
		})
	}
}
