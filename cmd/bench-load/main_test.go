package main

import (
	"errors"
	"slices"
	"testing"
	"time"
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

// TestUsageCosts: the cost is the median over rounds of the counted
// replica's figures over the other's, paired by round, errors left out.
func TestUsageCosts(t *testing.T) {
	row := func(round int, counted bool, rate float64, cpu time.Duration) usageRow {
		return usageRow{name: "one", round: round, counted: counted, rate: rate, calls: 1000, cpu: cpu}
	}
	rows := []usageRow{
		row(1, true, 990, 1010*time.Millisecond), row(1, false, 1000, time.Second),
		row(2, false, 2000, time.Second), row(2, true, 1960, 1030*time.Millisecond),
		row(3, true, 500, 990*time.Millisecond), row(3, false, 500, time.Second),
		{name: "one", round: 4, counted: true, err: errors.New("down")}, row(4, false, 1, time.Second),
	}
	got := usageCosts(rows)
	want := []string{"one: throughput -1.0%, skillsvc CPU per call +1.0% (medians of 3 rounds)"}
	if !slices.Equal(got, want) {
		t.Errorf("usageCosts = %q, want %q", got, want)
	}
}
