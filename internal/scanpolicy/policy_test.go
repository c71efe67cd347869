package scanpolicy

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/layout"
)

// TestPolicy: the flag's value gives each kind of library its mode (one
// team's over the teams', the kind's over the default); its text form
// reads back as the same policy; a bad value is refused.
func TestPolicy(t *testing.T) {
	org, eng, sec, alice := layout.LibraryRef{Shared: true}, layout.LibraryRef{Team: "eng"}, layout.LibraryRef{Team: "security"}, layout.LibraryRef{User: "alice"}
	for _, tc := range []struct {
		value              string
		org, eng, sec, usr Mode
	}{
		{"warn", Warn, Warn, Warn, Warn},
		{"off", Off, Off, Off, Off},
		{"block,users=warn", Block, Block, Block, Warn},
		{"warn,shared=block,team:security=block", Block, Warn, Block, Warn},
		{"off,teams=warn,team:security=block,organization=warn", Warn, Warn, Block, Off},
	} {
		t.Run(tc.value, func(t *testing.T) {
			var p Policy
			if err := p.Set(tc.value); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				l    layout.LibraryRef
				want Mode
			}{{org, tc.org}, {eng, tc.eng}, {sec, tc.sec}, {alice, tc.usr}} {
				if got := p.For(c.l); got != c.want {
					t.Errorf("For(%+v) = %s, want %s", c.l, got, c.want)
				}
			}
			var again Policy
			if err := again.Set(p.String()); err != nil || again.String() != p.String() {
				t.Errorf("String() %q reads back as %q, %v", p.String(), again.String(), err)
			}
		})
	}
	for _, bad := range []string{"", "strict", "warn,block", "warn,groups=off", "warn,team:Bad Team=block", "warn,shared=maybe"} {
		var p Policy
		if err := p.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted: %s", bad, p.String())
		}
	}
	if d := DefaultPolicy(); d.For(org) != Warn || !d.Any() {
		t.Errorf("default policy %s", d.String())
	}
	var off Policy
	_ = off.Set("off")
	if off.Any() {
		t.Error("off scans some library")
	}
}
