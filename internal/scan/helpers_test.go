package scan_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsvc/skillsvc/internal/scan"
)

// readFolder reads a skill folder as scan.Files (test helper).
func readFolder(t *testing.T, dir string) []scan.File {
	t.Helper()
	var files []scan.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, scan.File{Path: filepath.ToSlash(rel), Data: b, Executable: info.Mode()&0o111 != 0})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
