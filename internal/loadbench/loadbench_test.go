package loadbench

import (
	"bytes"
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {425.6, "426"}, {-1500, "-1,500"},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i))
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{name: "p50 of 200", sorted: ds, p: 50, want: 100},
		{name: "p99 of 200", sorted: ds, p: 99, want: 198},
		{name: "p100 of 200", sorted: ds, p: 100, want: 200},
		{name: "p99 of 1", sorted: ds[:1], p: 99, want: 1},
		{name: "p50 of 3", sorted: ds[:3], p: 50, want: 2},
		{name: "none", sorted: nil, p: 50, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(p%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, [][]string{{"case", "10 skills"}, {"a|b", "1 ms"}})
	want := "" +
		"| case | 10 skills |\n" +
		"|------|----------:|\n" +
		"| a\\|b |      1 ms |\n"
	if got := b.String(); got != want {
		t.Errorf("WriteTable:\n%s\nwant:\n%s", got, want)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{420 * time.Microsecond, "420 µs"}, {2500 * time.Microsecond, "2.50 ms"}, {21300 * time.Microsecond, "21.3 ms"},
		{456 * time.Millisecond, "456 ms"}, {12345 * time.Millisecond, "12.35 s"},
	}
	for _, tt := range tests {
		if got := Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Cleanups run last first, once; one added after Run runs at once.
func TestCleanups(t *testing.T) {
	var c Cleanups
	var order []int
	c.Add(func() { order = append(order, 1) })
	c.Add(func() { order = append(order, 2) })
	c.Run()
	c.Run()
	c.Add(func() { order = append(order, 3) })
	if want := []int{2, 1, 3}; len(order) != 3 || order[0] != 2 || order[1] != 1 || order[2] != 3 {
		t.Errorf("order = %v, want %v", order, want)
	}
}
