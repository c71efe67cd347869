package skillrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// CacheRoot is where materialized skills live: $SKILLSVC_SKILL_CACHE, else
// $XDG_CACHE_HOME/skillsvc/skills, else ~/.cache/skillsvc/skills.
func CacheRoot(getenv func(string) string) (string, error) {
	if d := getenv("SKILLSVC_SKILL_CACHE"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "skillsvc", "skills"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("skill cache: set SKILLSVC_SKILL_CACHE: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".cache", "skillsvc", "skills"), nil
}

// Materialized is a skill on local disk.
type Materialized struct {
	// Dir holds the skill's files, read-only: <cache root>/<hex of the
	// manifest digest>.
	Dir    string
	Digest string // "sha256:<hex>"
	Skill  *skillsvcv1.SkillSummary
	// Fetched is false when the cache already held this content: nothing
	// was downloaded. Bytes is what was unpacked.
	Fetched bool
	Bytes   int64
}

// Materialize puts the skill (its live copy, or version) into the cache
// and returns its directory. The content is addressed by its manifest
// digest, so a directory that exists holds the right files: it is not
// fetched again, only checked cheaply (every manifest file there with its
// size and executable bit; a directory failing that is removed and fetched
// anew). A fetch unpacks the export into a temporary directory, checks
// every file's size, sha256 and executable bit against the manifest (and
// that no other file exists), makes the files read-only and publishes the
// directory by renaming it: a mismatch is ErrVerify and nothing is kept.
func (r *Runner) Materialize(ctx context.Context, skill, version string) (*Materialized, error) {
	resp, err := r.Skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: skill, Version: version})
	if err != nil {
		return nil, err
	}
	s := resp.GetSkill()
	m := s.GetManifest()
	if m.GetOverLimits() || s.GetManifestDigest() == "" {
		return nil, newError(ErrOverLimits, "skill %s is over the manifest limits (%d files, %d bytes; at most 512 files and 16 MiB): its files cannot be verified, so it is not run", s.GetName(), m.GetFileCount(), m.GetTotalBytes())
	}
	hexDigest, ok := strings.CutPrefix(s.GetManifestDigest(), "sha256:")
	if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("skill %s: unexpected manifest digest %q", s.GetName(), s.GetManifestDigest())
	}
	files, err := manifestFiles(s)
	if err != nil {
		return nil, err
	}
	root := r.CacheDir
	if root == "" {
		if root, err = CacheRoot(os.Getenv); err != nil {
			return nil, err
		}
	}
	out := &Materialized{Dir: filepath.Join(root, hexDigest), Digest: s.GetManifestDigest(), Skill: s}
	if _, err := os.Stat(out.Dir); err == nil {
		if sizesMatch(out.Dir, files) {
			return out, nil
		}
		if err := removeAll(out.Dir); err != nil {
			return nil, fmt.Errorf("skill cache %s is damaged and cannot be removed: %w", out.Dir, err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(root, ".fetch-")
	if err != nil {
		return nil, err
	}
	defer removeAll(tmp) // gone after the rename; on failure nothing is kept
	stream, err := r.Skills.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: skill, Version: version})
	if err != nil {
		return nil, err
	}
	er := &ExportReader{Recv: stream.Recv}
	n, _, err := ExtractSkill(er, filepath.Join(tmp, "skill"), m.GetTotalBytes())
	if er.Err != nil {
		return nil, er.Err
	}
	if err != nil {
		return nil, newError(ErrVerify, "skill %s: the export does not match its manifest (%v): fetch again; the skill may have changed meanwhile", s.GetName(), err)
	}
	if err := verify(filepath.Join(tmp, "skill"), files); err != nil {
		return nil, newError(ErrVerify, "skill %s: %v: fetch again; the skill may have changed meanwhile", s.GetName(), err)
	}
	if err := readOnly(filepath.Join(tmp, "skill")); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(tmp, "skill"), out.Dir); err != nil {
		// Another run published the same content first: use it.
		if _, serr := os.Stat(out.Dir); serr != nil {
			return nil, err
		}
	}
	out.Fetched, out.Bytes = true, n
	return out, nil
}

// manifestFiles maps each of the skill's files, relative to its folder, to
// its manifest entry.
func manifestFiles(s *skillsvcv1.SkillSummary) (map[string]*skillsvcv1.ManifestFile, error) {
	files := map[string]*skillsvcv1.ManifestFile{}
	prefix := strings.TrimSuffix(s.GetPath(), "/") + "/"
	for _, f := range s.GetManifest().GetFiles() {
		rel, ok := strings.CutPrefix(f.GetPath(), prefix)
		if !ok || rel == "" {
			return nil, fmt.Errorf("skill %s: manifest file %q is outside %s", s.GetName(), f.GetPath(), s.GetPath())
		}
		if _, _, err := entryPath("x/" + rel); err != nil {
			return nil, fmt.Errorf("skill %s: manifest file %q: %v", s.GetName(), f.GetPath(), err)
		}
		files[rel] = f
	}
	return files, nil
}

// verify checks that dir holds exactly files, each with its size and
// sha256.
func verify(dir string, files map[string]*skillsvcv1.ManifestFile) error {
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		want, ok := files[rel]
		if !ok {
			return fmt.Errorf("the export holds %s, which the manifest does not list", rel)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		if n != want.GetSize() || hex.EncodeToString(h.Sum(nil)) != want.GetSha256() {
			return fmt.Errorf("%s differs from the manifest (%d bytes, want %d with sha256 %s)", rel, n, want.GetSize(), want.GetSha256())
		}
		if !modeMatches(d, want) {
			return fmt.Errorf("%s has mode %#o in the export, the manifest lists %#o", rel, modeOf(d), want.GetMode())
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(files) {
		for rel := range files {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("the export lacks %s", rel)
			}
		}
	}
	return nil
}

// sizesMatch is the cheap check of a cached directory on use: every
// manifest file is there with its size (a same-size edit is not caught;
// the files are read-only, and the sandbox mounts them read-only).
func sizesMatch(dir string, files map[string]*skillsvcv1.ManifestFile) bool {
	for rel, f := range files {
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || !st.Mode().IsRegular() || st.Size() != f.GetSize() || !modeMatches(fs.FileInfoToDirEntry(st), f) {
			return false
		}
	}
	return true
}

// modeMatches reports whether the file d is executable exactly when the
// manifest says so (a manifest without a mode, from a snapshot pinned
// before modes were recorded, says nothing). Only the executable bit is
// compared: the cached copy is read-only.
func modeMatches(d fs.DirEntry, want *skillsvcv1.ManifestFile) bool {
	return want.GetMode() == 0 || (modeOf(d)&0o111 != 0) == (want.GetMode()&0o111 != 0)
}

func modeOf(d fs.DirEntry) fs.FileMode {
	st, err := d.Info()
	if err != nil {
		return 0
	}
	return st.Mode().Perm()
}

// readOnly takes the write bits off everything under dir.
func readOnly(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p) // after their contents
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chmod(p, st.Mode().Perm()&^0o222)
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}

// removeAll removes a tree whose folders readOnly made unwritable.
func removeAll(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
