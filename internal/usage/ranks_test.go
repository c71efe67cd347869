package usage

import "testing"

// TestOrderVersion: counts that order skills alike share a version (a kept
// reply is rebuilt when its order changes, not on every activation); a new
// order, or a new tie, is a new version; no use at all is "".
func TestOrderVersion(t *testing.T) {
	v := orderVersion(map[string]int64{"pdf": 5, "xlsx": 3})
	for _, tc := range []struct {
		name   string
		counts map[string]int64
		same   bool
	}{
		{"more of the same order", map[string]int64{"pdf": 6, "xlsx": 3}, true},
		{"a new order", map[string]int64{"pdf": 3, "xlsx": 5}, false},
		{"a tie", map[string]int64{"pdf": 5, "xlsx": 5}, false},
		{"a new skill", map[string]int64{"pdf": 5, "xlsx": 3, "docx": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orderVersion(tc.counts) == v; got != tc.same {
				t.Errorf("same version %v, want %v", got, tc.same)
			}
		})
	}
	if orderVersion(nil) != "" || orderVersion(map[string]int64{"pdf": 0}) != "" {
		t.Error("no use has a version")
	}
}
