package skillmd_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/alloctest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// TestFormatBlockCostIsBoundedByBudget: fitting 10,000 long descriptions
// into a small budget costs memory in proportion to the budget, not to the
// library (each size probe stops once over budget).
func TestFormatBlockCostIsBoundedByBudget(t *testing.T) {
	list := make([]skillmd.Entry, 10_000)
	desc := strings.Repeat("word ", 200)
	for i := range list {
		list[i] = skillmd.Entry{Location: fmt.Sprintf("/skills/c/s%05d/SKILL.md", i), Name: fmt.Sprintf("s%05d", i), Description: desc}
	}
	var b skillmd.Block
	var err error
	// The descriptions alone are 10 MB; the skills are given, so only what
	// FormatBlock adds counts.
	used := alloctest.Bytes(func() { b, err = skillmd.FormatBlock(list, skillmd.FormatOptions{CharBudget: 12000}) })
	if err != nil || b.Included == 0 || utf8.RuneCountInString(b.Text) > 12000 {
		t.Fatalf("FormatBlock = %d included, %d bytes, %v", b.Included, len(b.Text), err)
	}
	if bound := uint64(32 << 20); used > bound {
		t.Errorf("FormatBlock allocated %d bytes, want at most %d", used, bound)
	}
}
