package skillarchive

import (
	"errors"
	"io"
	"strings"

	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Packed reports whether files are m's, path by path and byte for byte.
func Packed(files []File, m *skillview.Manifest) bool {
	if m == nil || len(files) != len(m.Files) {
		return false
	}
	for i, f := range files {
		if !strings.HasSuffix(m.Files[i].Path, "/"+f.Path) || m.Files[i].SHA256 != f.SHA256 {
			return false
		}
	}
	return true
}

// PackRoot runs export, which writes a folder-layout archive, through
// Repack into w: the root layout. The export's own error wins
// over what the repack made of it.
func PackRoot(export func(io.Writer) (skillview.Skill, error), w io.Writer) (skillview.Skill, []File, error) {
	pr, pw := io.Pipe()
	var (
		sk        skillview.Skill
		exportErr error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sk, exportErr = export(pw)
		pw.CloseWithError(exportErr) // nil: the reader sees EOF
	}()
	files, err := Repack(w, pr)
	pr.CloseWithError(errRepackStopped) // an export still writing stops
	<-done
	if exportErr != nil && !errors.Is(exportErr, errRepackStopped) {
		return sk, nil, exportErr
	}
	return sk, files, err
}

var errRepackStopped = errors.New("the repack stopped reading")
