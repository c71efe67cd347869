package corpus

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Bounds on the folder ExtractTarget writes: a skill folder's own limits
// (internal/skillmd's MaxSkillFiles and MaxSkillBytes).
const (
	maxFolderFiles = 512
	maxFolderBytes = 16 << 20
)

// ExtractTarget fetches the package of the target name into o.CacheDir
// (through o.Client, as Load does), verified against its pin, and writes the target's
// whole folder (its SKILL.md's folder and everything under it) to
// dest/<folder name>, keeping the archive's executable bits; it returns
// that directory. Tests use it to run a public skill's scripts that may not
// be committed (the document skills' proprietary licence), as the
// benchmark uses Load.
func (l List) ExtractTarget(ctx context.Context, name, dest string, o Options) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	var t *Target
	for i := range l.Targets {
		if l.Targets[i].Name == name {
			t = &l.Targets[i]
		}
	}
	if t == nil {
		return "", fmt.Errorf("no target %q in the list", name)
	}
	var s *Source
	for _, c := range append(append([]Source(nil), l.TargetSources...), l.Sources...) {
		if c.ID == t.Source {
			s = &c
			break
		}
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Minute}
	}
	file, _, err := fetch(ctx, o.Client, o.CacheDir, *s)
	if err != nil {
		return "", err
	}
	folder := path.Dir(t.Path)
	out := filepath.Join(dest, path.Base(folder))
	files, total := 0, int64(0)
	err = walkArchive(file, archiveKind(s.URL), func(entry string, mode fs.FileMode, open func() (io.ReadCloser, error)) error {
		rel, ok := strings.CutPrefix(strings.TrimPrefix(entry, "./"), folder+"/")
		if !ok || rel == "" || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil
		}
		if files++; files > maxFolderFiles {
			return fmt.Errorf("%s has more than %d files", folder, maxFolderFiles)
		}
		target := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		perm := fs.FileMode(0o644)
		if mode.Perm()&0o111 != 0 {
			perm = 0o755
		}
		r, err := open()
		if err != nil {
			return err
		}
		defer r.Close()
		f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
		if err != nil {
			return err
		}
		n, err := io.Copy(f, io.LimitReader(r, maxFolderBytes-total+1))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if total += n; err == nil && total > maxFolderBytes {
			err = fmt.Errorf("%s holds more than %d bytes", folder, maxFolderBytes)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("%s %s@%s: %w", s.Ecosystem, s.Name, s.Version, err)
	}
	if files == 0 {
		return "", fmt.Errorf("%s %s@%s has no folder %s", s.Ecosystem, s.Name, s.Version, folder)
	}
	return out, nil
}
