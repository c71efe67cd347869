package limits_test

import (
	"errors"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, def, max  int32
		want         int32
		wantArgError bool
	}{
		{"zero means default", 0, 100, 1000, 100, false},
		{"default above max is max", 0, 100, 10, 10, false},
		{"in range", 7, 100, 1000, 7, false},
		{"max", 1000, 100, 1000, 1000, false},
		{"above max is clamped", 5000, 100, 1000, 1000, false},
		{"negative", -1, 100, 1000, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := limits.Count("page_size", tc.n, tc.def, tc.max)
			if tc.wantArgError != errors.Is(err, errkind.InvalidArgument) || (err != nil && !tc.wantArgError) {
				t.Fatalf("err = %v, want InvalidArgument: %v", err, tc.wantArgError)
			}
			if got != tc.want {
				t.Errorf("Count(%d, %d, %d) = %d, want %d", tc.n, tc.def, tc.max, got, tc.want)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, def, max  int
		want         int
		wantArgError bool
	}{
		{"zero means default", 0, 12000, 1 << 20, 12000, false},
		{"in range", 500, 12000, 1 << 20, 500, false},
		{"max", 1 << 20, 12000, 1 << 20, 1 << 20, false},
		{"above max", 1<<20 + 1, 12000, 1 << 20, 0, true},
		{"negative", -5, 12000, 1 << 20, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := limits.Within("char_budget", tc.n, tc.def, tc.max)
			if tc.wantArgError != errors.Is(err, errkind.InvalidArgument) || (err != nil && !tc.wantArgError) {
				t.Fatalf("err = %v, want InvalidArgument: %v", err, tc.wantArgError)
			}
			if got != tc.want {
				t.Errorf("Within(%d) = %d, want %d", tc.n, got, tc.want)
			}
		})
	}
}
