package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// List is the committed, pinned description of the corpus.
type List struct {
	// Sources are the corpus's packages, in the order their skills are
	// taken (a byte-identical copy counts for the first source that has it).
	Sources []Source `json:"sources"`
	// Targets are the skills requests are written for, each from a package.
	Targets []Target `json:"targets"`
	// TargetSources are packages read for targets only.
	TargetSources []Source `json:"target_sources,omitempty"`
}

// Source is one registry package, pinned.
type Source struct {
	// ID names the source in the benchmark's library (its category there)
	// and in a Target.
	ID        string `json:"id"`
	Ecosystem string `json:"ecosystem"` // npm or pypi
	Name      string `json:"name"`
	Version   string `json:"version"`
	URL       string `json:"url"`
	SHA256    string `json:"sha256"`
	License   string `json:"license"`
	// Size is the archive's length in bytes, checked before it is read.
	Size int64 `json:"size"`
	// Skills are the archive paths of its SKILL.md files, as globs whose
	// "**" segment matches any number of folders.
	Skills []string `json:"skills"`
}

// Target is a skill taken whole from one source: the SKILL.md at Path.
type Target struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Path   string `json:"path"`
	// License is the target's own, where it differs from its package's.
	License string `json:"license,omitempty"`
}

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	sourceID  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
)

// ReadList reads and checks a list file.
func ReadList(file string) (List, error) {
	var l List
	data, err := os.ReadFile(file)
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w", file, err)
	}
	if err := l.Validate(); err != nil {
		return l, fmt.Errorf("%s: %w", file, err)
	}
	return l, nil
}

// Validate checks what Load relies on: unique IDs, https URLs, digests,
// sizes within MaxArchiveBytes, globs, targets that name a source.
func (l List) Validate() error {
	ids := map[string]bool{}
	var errs []error
	for _, s := range append(append([]Source(nil), l.Sources...), l.TargetSources...) {
		switch {
		case !sourceID.MatchString(s.ID):
			errs = append(errs, fmt.Errorf("source %q: the id must be lower-case letters, digits and hyphens", s.ID))
		case ids[s.ID]:
			errs = append(errs, fmt.Errorf("source %q: listed twice", s.ID))
		case !strings.HasPrefix(s.URL, "https://"):
			errs = append(errs, fmt.Errorf("source %q: url %q is not https", s.ID, s.URL))
		case archiveKind(s.URL) == "":
			errs = append(errs, fmt.Errorf("source %q: url %q is not a .tgz, .tar.gz, .whl or .zip", s.ID, s.URL))
		case !sha256Hex.MatchString(s.SHA256):
			errs = append(errs, fmt.Errorf("source %q: sha256 %q is not 64 lower-case hex digits", s.ID, s.SHA256))
		case s.Size <= 0 || s.Size > MaxArchiveBytes:
			errs = append(errs, fmt.Errorf("source %q: size %d is not within 1..%d bytes", s.ID, s.Size, int64(MaxArchiveBytes)))
		case len(s.Skills) == 0 && !l.targetOnly(s.ID):
			errs = append(errs, fmt.Errorf("source %q: no skills globs", s.ID))
		}
		for _, g := range s.Skills {
			if _, err := path.Match(strings.ReplaceAll(g, "**", "x"), ""); err != nil || path.Base(g) != "SKILL.md" {
				errs = append(errs, fmt.Errorf("source %q: glob %q must end in /SKILL.md", s.ID, g))
			}
		}
		ids[s.ID] = true
	}
	names := map[string]bool{}
	for _, t := range l.Targets {
		switch {
		case !ids[t.Source]:
			errs = append(errs, fmt.Errorf("target %q: no source %q", t.Name, t.Source))
		case names[t.Name]:
			errs = append(errs, fmt.Errorf("target %q: listed twice", t.Name))
		case path.Base(t.Path) != "SKILL.md":
			errs = append(errs, fmt.Errorf("target %q: path %q is not a SKILL.md", t.Name, t.Path))
		}
		names[t.Name] = true
	}
	return errors.Join(errs...)
}

func (l List) targetOnly(id string) bool {
	for _, s := range l.TargetSources {
		if s.ID == id {
			return true
		}
	}
	return false
}

// archiveKind is how an archive is read, from its URL: "tgz" (npm
// tarballs, sdists) or "zip" (wheels).
func archiveKind(url string) string {
	switch {
	case strings.HasSuffix(url, ".tgz"), strings.HasSuffix(url, ".tar.gz"):
		return "tgz"
	case strings.HasSuffix(url, ".whl"), strings.HasSuffix(url, ".zip"):
		return "zip"
	}
	return ""
}

// matchGlob reports whether name matches the slash-separated glob g, whose
// "**" segments match zero or more segments and other segments as
// path.Match does.
func matchGlob(g, name string) bool {
	return matchSegs(strings.Split(g, "/"), strings.Split(name, "/"))
}

func matchSegs(g, n []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(n); i++ {
				if matchSegs(g[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], n[0]); !ok {
			return false
		}
		g, n = g[1:], n[1:]
	}
	return len(n) == 0
}
