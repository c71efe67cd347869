package main

import (
	"slices"
	"testing"
)

// TestUsageFlag: -usage sets --usage.enabled on every skillsvc (skillsvc's
// default, true, unless -usage=false), before the -skillsvc-flag ones.
func TestUsageFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"--usage.enabled=true"}},
		{[]string{"-usage=false"}, []string{"--usage.enabled=false"}},
		{[]string{"-usage=false", "-skillsvc-flag=--usage.enabled=true"}, []string{"--usage.enabled=false", "--usage.enabled=true"}},
	} {
		o, err := parseOptions(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.extraFlags(); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.args, got, tc.want)
		}
	}
}
