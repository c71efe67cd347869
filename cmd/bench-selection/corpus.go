package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/skillsvc/skillsvc/internal/selection/corpus"
)

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

// loadLibrary downloads (once, into the cache) and reads the pinned list's
// packages: the targets, each under targetCategory by its name, and the
// first n corpus skills (all when n <= 0) under their sources' folders.
func loadLibrary(ctx context.Context, o options) (targets, skills []skill, note string, err error) {
	l, err := corpus.ReadList(o.list)
	if err != nil {
		return nil, nil, "", err
	}
	c, err := corpus.Load(ctx, l, corpus.Options{CacheDir: o.cacheDir, Skills: max(o.size, 0), Concurrency: 2})
	if err != nil {
		return nil, nil, "", err
	}
	for _, t := range c.Targets {
		targets = append(targets, skill{Dir: targetCategory + "/" + corpus.Slug(t.Name), Text: t.Text, Files: t.Files, Target: true})
	}
	for _, s := range c.Skills {
		skills = append(skills, skill{Dir: s.Dir, Text: s.Text, Files: s.Files})
	}
	if o.size > 0 && len(skills) < o.size {
		note = fmt.Sprintf("The registries gave %d distinct skills, not %d.", len(skills), o.size)
	}
	return targets, skills, note, nil
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
