package skills

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Exporter packs skill folders for workers to run in their own sandboxes.
type Exporter struct {
	catalog *Catalog
}

// Export writes the skill folder as a tar.gz to w, with entries named
// <folder>/<path>, so a worker can unpack it into its own sandbox and run
// its scripts there (skillsvc never executes skill code). Each file has the
// mode its manifest lists (recorded at publish or upload, or by the
// shebang rule: filemode.Of), or for a skill over the manifest limits the
// one its read returns.
func (e *Exporter) Export(ctx context.Context, id mounts.Caller, ref string, w io.Writer) (skillview.Skill, error) {
	v, err := e.catalog.views.Get(ctx, id)
	if err != nil {
		return skillview.Skill{}, err
	}
	s, err := v.Find(e.catalog.cfg.Mount, ref)
	if err != nil {
		return skillview.Skill{}, err
	}
	// The archive is the files plus a header block or more per file, and
	// padding: bound all of it, not only the files' bytes.
	var size int64
	for _, f := range s.Files {
		size += archiveBytes(s.Folder()+"/"+strings.TrimPrefix(f.Rel, s.Dir+"/"), f.Obj.Size)
	}
	budget := e.catalog.cfg.MaxExportBytes
	if size > budget {
		return skillview.Skill{}, fmt.Errorf("%w: skill %s makes an archive of %d bytes (%d files), exports are limited to %d", errkind.ResourceExhausted, s.Dir, size, len(s.Files), budget)
	}
	problems := s.Problems()
	if !problems.Valid() {
		return skillview.Skill{}, invalidSkill(e.catalog.cfg.Mount, s, problems)
	}
	modes := map[string]fs.FileMode{}
	if s.Manifest != nil {
		for _, f := range s.Manifest.Files {
			modes[f.Path] = f.Mode
		}
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, f := range s.Files {
		if err := e.addFile(ctx, tw, s, f, modes[e.catalog.cfg.Mount+"/"+f.Rel], &budget); err != nil {
			return skillview.Skill{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return skillview.Skill{}, err
	}
	if err := gz.Close(); err != nil {
		return skillview.Skill{}, err
	}
	return e.catalog.summary(s, s.Head.Frontmatter, problems, nil), nil
}

// archiveBytes bounds what one file adds to a tar: a header block, a PAX
// block and record for a long name, the content padded to whole blocks.
func archiveBytes(name string, size int64) int64 {
	const block = 512
	n := block + (size+block-1)/block*block
	if len(name) > 100 {
		n += block + (int64(len(name))+64+block-1)/block*block
	}
	return n
}

// addFile writes one file, charging it to budget: the file may have grown
// since it was listed. It is read through the file cache, which hashing
// the skill for its manifest filled. listed is the file's mode in the
// manifest, 0 when it has none.
func (e *Exporter) addFile(ctx context.Context, tw *tar.Writer, s *skillview.Ref, f skillview.Entry, listed fs.FileMode, budget *int64) error {
	rc, a, err := e.catalog.files.Open(ctx, f.Obj, 0, -1)
	if objstore.IsNotFound(err) {
		return nil // deleted since listed
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	rel := strings.TrimPrefix(f.Rel, s.Dir+"/")
	if *budget -= archiveBytes(s.Folder()+"/"+rel, a.Size); *budget < 0 {
		return fmt.Errorf("%w: skill %s grew past the export limit of %d bytes while it was packed", errkind.ResourceExhausted, s.Dir, e.catalog.cfg.MaxExportBytes)
	}
	body := bufio.NewReader(rc)
	mode := listed
	if mode == 0 {
		start, _ := body.Peek(2)
		mode = filemode.Of(a.Mode, start)
	}
	// Whole seconds, as S3 serves Last-Modified on a read: a listing's
	// millisecond times would cost each file a PAX record. The listed time
	// where there is one: a pinned file is read from its blob, whose own
	// time is when it was copied.
	mod := a.ModTime
	if !f.Obj.ModTime.IsZero() {
		mod = f.Obj.ModTime
	}
	hdr := &tar.Header{Name: s.Folder() + "/" + rel, Mode: int64(mode), Size: a.Size, ModTime: mod.Truncate(time.Second), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, body)
	if err == nil && n != a.Size {
		err = fmt.Errorf("export %s: read %d of %d bytes", rel, n, a.Size)
	}
	return err
}
