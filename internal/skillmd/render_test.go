package skillmd_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// FuzzRenderedSize: the size computed up front is the size of the text.
func FuzzRenderedSize(f *testing.F) {
	f.Add("/skills/x", "$ARGUMENTS and $ARGUMENTS", "a $1 b")
	f.Add("/skills/x", "no placeholder\n\n", "args")
	f.Add("/skills/x", "body", "  ")
	f.Add("/skills/x", "$ARGUMENTS$ARGUMENTS", "")
	f.Fuzz(func(t *testing.T, dir, body, args string) {
		if got, want := skillmd.RenderedSize(dir, body, args), int64(len(skillmd.RenderBody(dir, body, args))); got != want {
			t.Errorf("RenderedSize(%q, %q, %q) = %d, len(RenderBody) = %d", dir, body, args, got, want)
		}
	})
}
