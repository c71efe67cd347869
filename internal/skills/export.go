package skills

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Export writes the skill folder as a tar.gz to w, with entries named
// <folder>/<path>, so a worker can unpack it into its own sandbox and run
// its scripts there (skillsvc never executes skill code). Scripts keep an
// executable mode.
func (l *Library) Export(ctx context.Context, id mounts.Identity, ref string, w io.Writer) (Skill, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return Skill{}, err
	}
	s, err := l.find(v, ref)
	if err != nil {
		return Skill{}, err
	}
	var size int64
	for _, e := range s.files {
		size += e.obj.Size
	}
	if size > l.cfg.MaxExportBytes {
		return Skill{}, fmt.Errorf("%w: skill %s holds %d bytes, exports are limited to %d", errkind.ResourceExhausted, s.dir, size, l.cfg.MaxExportBytes)
	}
	p, err := l.parse(ctx, s)
	if err != nil {
		return Skill{}, err
	}
	if !p.problems.Valid() {
		return Skill{}, fmt.Errorf("%w: %s/%s: %s", ErrInvalidSkill, l.cfg.Mount, s.dir, strings.Join(p.problems.Errors, "; "))
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, e := range s.files {
		if err := l.addFile(ctx, tw, s, e); err != nil {
			return Skill{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Skill{}, err
	}
	if err := gz.Close(); err != nil {
		return Skill{}, err
	}
	return l.summary(s, p, nil), nil
}

func (l *Library) addFile(ctx context.Context, tw *tar.Writer, s *skillRef, e entry) error {
	rc, a, err := l.bucket.Get(ctx, e.obj.Key)
	if objstore.IsNotFound(err) {
		return nil // deleted since listed
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	rel := strings.TrimPrefix(e.rel, s.dir+"/")
	mode := int64(0o644)
	if strings.HasPrefix(rel, "scripts/") {
		mode = 0o755
	}
	hdr := &tar.Header{Name: s.name + "/" + rel, Mode: mode, Size: a.Size, ModTime: a.ModTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, rc)
	if err == nil && n != a.Size {
		err = fmt.Errorf("export %s: read %d of %d bytes", rel, n, a.Size)
	}
	return err
}
