package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFormatCount(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {425.6, "426"}, {-1500, "-1,500"},
	}
	for _, tt := range tests {
		if got := formatCount(tt.in); got != tt.want {
			t.Errorf("formatCount(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRank(t *testing.T) {
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
		{name: "p99 of 1", sorted: ds[:1], p: 99, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rank(tt.sorted, tt.p); got != tt.want {
				t.Errorf("rank(p%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

// The seeded SKILL.md must look like a real one: about 3 KiB, with the
// frontmatter fields the harness promises and a name equal to its folder.
func TestSkillMD(t *testing.T) {
	for _, i := range []int{0, 42, 999} {
		md := string(skillMD(i, 1000))
		if n := len(md); n < skillMDSize-300 || n > skillMDSize+300 {
			t.Errorf("skill %d: SKILL.md is %d bytes, want about %d", i, n, skillMDSize)
		}
		for _, field := range []string{"\nname: " + skillName(i) + "\n", "\ndescription: ", "\nlicense: ", "\nmetadata:\n"} {
			if !strings.Contains(md, field) {
				t.Errorf("skill %d: SKILL.md lacks %q", i, field)
			}
		}
		if folder := skillFolder(i, 1000); !strings.HasSuffix(folder, "/"+skillName(i)) {
			t.Errorf("skill %d: folder %q does not end in its name", i, folder)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, [][]string{{"case", "10 skills"}, {"a|b", "1 ms"}})
	want := "" +
		"| case | 10 skills |\n" +
		"|------|----------:|\n" +
		"| a\\|b |      1 ms |\n"
	if got := b.String(); got != want {
		t.Errorf("writeTable:\n%s\nwant:\n%s", got, want)
	}
}
