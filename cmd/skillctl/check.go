package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// localFile is one file of a skill folder on disk.
type localFile struct {
	Rel  string // slash-separated, relative to the skill folder
	Abs  string
	Size int64
	Exec bool
}

// localSkill is a skill folder on disk, as push sends it.
type localSkill struct {
	Dir        string
	Name       string // the folder's name
	Files      []localFile
	TotalBytes int64
	// Truncated: the folder holds more than skillmd.MaxSkillFiles files;
	// Files stops at one past the limit.
	Truncated bool
	// Irregular lists symlinks, devices and the like: never published.
	Irregular []string
}

// errNotFolder: the path given is not a directory.
var errNotFolder = errors.New("not a directory")

// readSkillDir lists a skill folder without reading its files. Names
// starting with "." (.git, .DS_Store, editor files) are skipped, as git
// and the bucket tools' sync skip them by habit: they are never part of a
// skill. Symlinks and other non-regular files are refused: what would be
// published must be what is in the folder. The walk stops past
// skillmd.MaxSkillFiles files, so a huge tree costs little to refuse.
func readSkillDir(ctx context.Context, dir string) (localSkill, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return localSkill{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return localSkill{}, err
	}
	if !st.IsDir() {
		return localSkill{}, fmt.Errorf("%s: %w", dir, errNotFolder)
	}
	s := localSkill{Dir: abs, Name: filepath.Base(abs)}
	errStop := errors.New("stop")
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == abs {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			if len(s.Irregular) < maxReported {
				s.Irregular = append(s.Irregular, rel)
			}
			return nil
		}
		if len(s.Files) > skillmd.MaxSkillFiles {
			s.Truncated = true
			return errStop
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s.Files = append(s.Files, localFile{Rel: rel, Abs: p, Size: info.Size(), Exec: info.Mode()&0o111 != 0})
		s.TotalBytes += info.Size()
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return s, err
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Rel < s.Files[j].Rel })
	return s, nil
}

// checkLocal applies the publishing rules to a skill folder on disk: the
// server's own, skillmd.CheckFolder, so there is one rule set. Only
// SKILL.md is read (no rule looks into the other files; their sizes
// stand in for them). What only a folder on disk can hold, a symlink or
// device, is refused here besides.
func checkLocal(s localSkill) ([]*skillsvcv1.SkillProblem, error) {
	files := make([]skillmd.File, 0, len(s.Files))
	for _, f := range s.Files {
		sf := skillmd.File{Path: f.Rel, Size: f.Size}
		if f.Rel == skillmd.SkillFile {
			// A SKILL.md past the folder's limit is refused for that;
			// its head is enough to list its other problems.
			b, err := readHead(f.Abs, min(f.Size, skillmd.MaxSkillBytes))
			if err != nil {
				return nil, err
			}
			sf.Data = b
		}
		if f.Rel == skillmd.EvalQueriesFile && f.Size <= skillmd.MaxSkillBytes {
			// Checked as the server checks it (a warning when malformed).
			b, err := readHead(f.Abs, f.Size)
			if err != nil {
				return nil, err
			}
			sf.Data = b
		}
		files = append(files, sf)
	}
	var ps []*skillsvcv1.SkillProblem
	for _, p := range skillmd.CheckFolder(s.Name, files) {
		if p.Rule == skillmd.RuleMaxFiles && s.Truncated {
			// The walk stopped past the limit: the count is a lower bound.
			p.Message = fmt.Sprintf("the folder has more than %d files", skillmd.MaxSkillFiles)
		}
		ps = append(ps, &skillsvcv1.SkillProblem{Severity: skillsvcv1.SkillProblem_Severity(p.Severity), File: p.File,
			Field: p.Field, Rule: p.Rule, Value: p.Value, Message: p.Message})
	}
	for _, rel := range s.Irregular {
		ps = append(ps, &skillsvcv1.SkillProblem{Severity: skillsvcv1.SkillProblem_SEVERITY_ERROR, File: rel, Field: "path",
			Rule: "regular-files", Value: rel, Message: "only regular files are published, not symlinks or devices"})
	}
	return ps, nil
}

// maxReported bounds the irregular files listed.
const maxReported = 20

func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// hasErrors reports whether any problem is an error.
func hasErrors(ps []*skillsvcv1.SkillProblem) bool {
	for _, p := range ps {
		if p.GetSeverity() != skillsvcv1.SkillProblem_SEVERITY_WARNING {
			return true
		}
	}
	return false
}

// findSkills returns the skill folders under dir: dir itself when it holds
// a SKILL.md; else, as a library lays them out, each folder below it (or
// one level further, under a category) that holds one. A folder holding
// none of them is returned as itself, so it is reported as such.
func findSkills(dir string) ([]string, error) {
	if filepath.Base(dir) == "SKILL.md" && isFile(dir) {
		return []string{filepath.Dir(dir)}, nil // the file named instead of its folder
	}
	if isFile(filepath.Join(dir, "SKILL.md")) {
		return []string{dir}, nil
	}
	var skills []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if isFile(filepath.Join(sub, "SKILL.md")) {
			skills = append(skills, sub)
			continue
		}
		inner, err := os.ReadDir(sub)
		if err != nil {
			return nil, err
		}
		for _, f := range inner {
			if f.IsDir() && !strings.HasPrefix(f.Name(), ".") && isFile(filepath.Join(sub, f.Name(), "SKILL.md")) {
				skills = append(skills, filepath.Join(sub, f.Name()))
			}
		}
		if len(skills) > maxLibrarySkills {
			return nil, fmt.Errorf("%s holds more than %d skills", dir, maxLibrarySkills)
		}
	}
	if len(skills) == 0 {
		return []string{dir}, nil
	}
	return skills, nil
}

// maxLibrarySkills bounds one validate run.
const maxLibrarySkills = 10000

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
