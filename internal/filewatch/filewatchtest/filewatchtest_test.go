package filewatchtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
)

func TestWriteAndReplace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t testing.TB, path string, data string)
	}{
		{"Write", filewatchtest.Write[string]},
		{"Replace", filewatchtest.Replace[string]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			tc.change(t, p, "old")
			tc.change(t, p, "new")
			if got, err := os.ReadFile(p); err != nil || string(got) != "new" {
				t.Fatalf("ReadFile = %q, %v; want new", got, err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
				t.Errorf("dir holds %d entries, want only the file", len(entries))
			}
		})
	}
}
