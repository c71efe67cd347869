package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/mounts"
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
	// Files stops there.
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
		if len(s.Files) == skillmd.MaxSkillFiles {
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

// checkLocal applies the publishing rules to a skill folder on disk.
func checkLocal(s localSkill) ([]*skillsvcv1.SkillProblem, error) {
	var md []byte
	paths := make([]string, 0, len(s.Files)+1)
	for _, f := range s.Files {
		paths = append(paths, f.Rel)
		if f.Rel != "SKILL.md" {
			continue
		}
		// The frontmatter is all the rules read; its bound is the parser's.
		b, err := readHead(f.Abs, skillmd.MaxFrontmatterBytes+1)
		if err != nil {
			return nil, err
		}
		md = b
	}
	if s.Truncated {
		paths = append(paths, "") // one more than the limit; never read
	}
	ps := checkFolder(s.Name, paths, s.TotalBytes, md)
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

// checkFolder is the one place skillctl decides whether a skill folder may
// be published, as PublishSkill does: name is the folder's name, paths its
// files (relative), bytes their total size and skillMD the head of its
// SKILL.md. It mirrors the server's skillmd.CheckFolder rule for rule (the
// same rule names, fields and order: folder, paths, SKILL.md): the
// catalog's rules for SKILL.md (ParseSkillMD with the folder's name), the
// name warnings a bucket's skill gets made errors (the name must be the
// folder's, a valid skill name), canonical paths, no nested SKILL.md, the
// MCP extension's limits.
//
// TODO(issue 23): call skillmd.CheckFolder once it is on main, so
// skillctl and PublishSkill share one function; this copy reads only
// SKILL.md's head, CheckFolder takes every file's bytes.
func checkFolder(name string, paths []string, bytes int64, skillMD []byte) []*skillsvcv1.SkillProblem {
	var out []*skillsvcv1.SkillProblem
	add := func(sev skillsvcv1.SkillProblem_Severity, file, field, rule, value, msg string) {
		out = append(out, &skillsvcv1.SkillProblem{Severity: sev, File: file, Field: field, Rule: rule, Value: clip(value, 80), Message: msg})
	}
	errorSev, warnSev := skillsvcv1.SkillProblem_SEVERITY_ERROR, skillsvcv1.SkillProblem_SEVERITY_WARNING
	if !skillmd.ValidName(name) || utf8.RuneCountInString(name) > skillmd.MaxNameLen {
		add(errorSev, "", "name", "folder-name", name, fmt.Sprintf("folder name %q must be a skill name: at most %d lowercase letters, digits and single hyphens", clip(name, 80), skillmd.MaxNameLen))
	}
	if len(paths) > skillmd.MaxSkillFiles {
		add(errorSev, "", "files", "max-files", fmt.Sprint(len(paths)), fmt.Sprintf("the folder has more than %d files", skillmd.MaxSkillFiles))
	}
	if bytes > skillmd.MaxSkillBytes {
		add(errorSev, "", "size", "max-bytes", fmt.Sprint(bytes), fmt.Sprintf("the folder holds %d bytes, at most %d are allowed", bytes, skillmd.MaxSkillBytes))
	}
	found, badPaths := false, 0
	for _, p := range paths {
		switch {
		case p == "":
			// readSkillDir's marker of a file past the limit.
		case !mounts.Addressable(p):
			if badPaths++; badPaths <= maxReported {
				add(errorSev, p, "path", "path-canonical", p, fmt.Sprintf("path %q must be relative to the folder in the canonical spelling (no control characters or backslashes; NFC)", clip(p, 80)))
			}
		case p == "SKILL.md":
			found = true
		case strings.HasSuffix(p, "/SKILL.md"):
			add(errorSev, p, "path", "nested-skill", p, fmt.Sprintf("%s: a skill folder holds no other SKILL.md (libraries read it as another skill)", p))
		}
	}
	if !found {
		add(errorSev, "SKILL.md", "", "skill-md-required", "", "the folder has no SKILL.md")
		return out
	}
	fm, _, parsed := skillmd.ParseSkillMD(skillMD, name)
	report := func(sev skillsvcv1.SkillProblem_Severity, m string) {
		field, rule := ruleOf(m)
		value := valueOf(fm, field)
		// The catalog serves a bucket's skill whose name is not its
		// folder's under the folder's name; a publish names it right.
		switch rule {
		case "name-format":
			sev, m = errorSev, fmt.Sprintf("name %q must be a skill name equal to the folder's, %q", clip(value, 80), clip(name, 80))
		case "name-matches-folder":
			sev, m = errorSev, fmt.Sprintf("name %q must equal the folder's name %q", clip(value, 80), clip(name, 80))
		}
		add(sev, "SKILL.md", field, rule, value, m)
	}
	for _, m := range parsed.Errors {
		report(errorSev, m)
	}
	for _, m := range parsed.Warnings {
		report(warnSev, m)
	}
	return out
}

// problemRules names the rule and field of each of skillmd's problem
// messages, as the server's structured problems name them.
// TODO(issue 23): gone with skillmd.CheckFolder.
var problemRules = []struct {
	re          *regexp.Regexp
	field, rule string
}{
	{regexp.MustCompile(`^SKILL\.md is not UTF-8`), "", "utf8"},
	{regexp.MustCompile(`^SKILL\.md has no YAML frontmatter`), "frontmatter", "frontmatter"},
	{regexp.MustCompile(`^frontmatter is not closed`), "frontmatter", "frontmatter"},
	{regexp.MustCompile(`^frontmatter is larger`), "frontmatter", "frontmatter"},
	{regexp.MustCompile(`^frontmatter is not valid YAML`), "frontmatter", "yaml"},
	{regexp.MustCompile(`^name is required`), "name", "name-required"},
	{regexp.MustCompile(`^name .* (must be lowercase|is not a skill name)`), "name", "name-format"},
	{regexp.MustCompile(`^name is \d+ characters`), "name", "name-length"},
	{regexp.MustCompile(`^name .* differs from its folder`), "name", "name-matches-folder"},
	{regexp.MustCompile(`^description is required`), "description", "description-required"},
	{regexp.MustCompile(`^description is \d+ characters`), "description", "description-length"},
	{regexp.MustCompile(`^compatibility is \d+ characters`), "compatibility", "compatibility-length"},
	{regexp.MustCompile(`^allowed-tools`), "allowed-tools", "field-type"},
	{regexp.MustCompile(`^metadata should be`), "metadata", "field-type"},
}

var fieldTypeRE = regexp.MustCompile(`^([a-zA-Z0-9.\-_]+) should be a string$`)

func ruleOf(msg string) (field, rule string) {
	for _, r := range problemRules {
		if r.re.MatchString(msg) {
			return r.field, r.rule
		}
	}
	if m := fieldTypeRE.FindStringSubmatch(msg); m != nil {
		return m[1], "field-type"
	}
	return "", ""
}

func valueOf(fm skillmd.Frontmatter, field string) string {
	if field == "" || field == "frontmatter" {
		return ""
	}
	key, sub, nested := strings.Cut(field, ".")
	v, ok := fm.Raw[key]
	if !ok {
		return ""
	}
	if nested {
		m, _ := v.(map[string]any)
		v = m[sub]
	}
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
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
