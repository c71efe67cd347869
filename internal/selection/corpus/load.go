package corpus

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Skill is one SKILL.md of the corpus or a target.
type Skill struct {
	Source string // the Source's ID
	Path   string // the SKILL.md's path in its archive
	// Dir is the skill's folder in the benchmark's library: the source's
	// ID, then its folder's name made unique within the source (-2, -3, …
	// in path order). It depends on the source's archive alone, so a
	// request's target stays put when other sources change.
	Dir     string
	Name    string   // its frontmatter name (a target: the Target's name)
	Text    []byte   // at most MaxSkillBytes
	Cut     bool     // Text was longer and is cut
	Files   []string // its folder's other files, relative to it
	License string   // its own frontmatter licence, else its package's
}

// Folder is the name of the folder that holds the skill in its archive.
func (s Skill) Folder() string { return path.Base(path.Dir(s.Path)) }

// Corpus is what Load read.
type Corpus struct {
	Targets []Skill
	Skills  []Skill
	// Sources are the corpus sources read, in order, with their counts.
	Sources []SourceCount
	// Downloaded is the archive bytes fetched by this call (the rest came
	// from the cache).
	Downloaded int64
	// Left out of Skills: byte-identical copies of a skill taken before,
	// skills in a proprietary-licensed folder, and SKILL.md files the
	// library would refuse (no frontmatter, no name or description).
	Copies, Proprietary, Refused int
}

// SourceCount is one source and the skills Load took from it.
type SourceCount struct {
	Source
	Taken int
}

// Options bound and shape one Load.
type Options struct {
	CacheDir string // "" = DefaultCacheDir()
	// Sources reads only the list's first n corpus sources; 0 = all.
	Sources int
	// Skills stops at the first n corpus skills; 0 = all. Sources past
	// the one that reached n are not downloaded.
	Skills int
	// MaxTotalBytes bounds the archives this Load may read (their pinned
	// sizes, summed before any download); 0 = DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// Concurrency is the archives fetched and read at once; 0 = 4.
	Concurrency int
	Client      *http.Client // nil = a client with a 10-minute timeout
}

// read is one source's skills, before copies across sources are dropped.
type read struct {
	skills      []Skill
	proprietary int
	refused     int
	downloaded  int64
}

// Load fetches and reads l's targets and corpus. It fails on any source it
// cannot fetch or read, naming it: a benchmark on a different corpus than
// the list pins would not be comparable.
func Load(ctx context.Context, l List, o Options) (*Corpus, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Minute}
	}
	sources := l.Sources
	if o.Sources > 0 && o.Sources < len(sources) {
		sources = sources[:o.Sources]
	}
	byID := map[string]Source{}
	var total int64
	for _, s := range append(append([]Source(nil), l.TargetSources...), sources...) {
		byID[s.ID] = s
		total += s.Size
	}
	if total > o.MaxTotalBytes {
		return nil, fmt.Errorf("the sources total %d bytes, more than the %d allowed", total, o.MaxTotalBytes)
	}

	c := &Corpus{}
	seen := map[[32]byte]bool{}
	if err := c.loadTargets(ctx, l, byID, o, seen); err != nil {
		return nil, err
	}
	// Sources are read a window at a time so that o.Skills stops the
	// downloads; within a window, concurrently.
	for start := 0; start < len(sources); start += o.Concurrency {
		window := sources[start:min(start+o.Concurrency, len(sources))]
		reads := make([]read, len(window))
		g, gctx := errgroup.WithContext(ctx)
		for i, s := range window {
			g.Go(func() error {
				r, err := readSource(gctx, o, s, func(name string) bool { return matchAny(s.Skills, name) })
				reads[i] = r
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		for i, r := range reads {
			c.Downloaded += r.downloaded
			c.Proprietary += r.proprietary
			c.Refused += r.refused
			taken := 0
			for _, s := range r.skills {
				if o.Skills > 0 && len(c.Skills) == o.Skills {
					break
				}
				sum := sha256.Sum256(s.Text)
				if seen[sum] {
					c.Copies++
					continue
				}
				seen[sum] = true
				c.Skills = append(c.Skills, s)
				taken++
			}
			c.Sources = append(c.Sources, SourceCount{Source: window[i], Taken: taken})
		}
		if o.Skills > 0 && len(c.Skills) == o.Skills {
			break
		}
	}
	return c, nil
}

// loadTargets reads each target from its source (each source once) and
// marks their texts seen, so a byte-identical copy in the corpus is left
// out rather than competing with its original.
func (c *Corpus) loadTargets(ctx context.Context, l List, byID map[string]Source, o Options, seen map[[32]byte]bool) error {
	bySource := map[string][]Target{}
	var order []string
	for _, t := range l.Targets {
		if bySource[t.Source] == nil {
			order = append(order, t.Source)
		}
		bySource[t.Source] = append(bySource[t.Source], t)
	}
	var mu sync.Mutex
	found := map[string]Skill{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Concurrency)
	for _, id := range order {
		s, ok := byID[id]
		if !ok {
			return fmt.Errorf("target source %q is not among the sources read (Options.Sources cut it)", id)
		}
		paths := map[string]bool{}
		for _, t := range bySource[id] {
			paths[t.Path] = true
		}
		g.Go(func() error {
			file, n, err := fetch(gctx, o.Client, o.CacheDir, s)
			if err != nil {
				return err
			}
			arc, err := readArchive(file, archiveKind(s.URL), func(name string) bool { return paths[name] })
			if err != nil {
				return fmt.Errorf("%s %s@%s: %w", s.Ecosystem, s.Name, s.Version, err)
			}
			mu.Lock()
			defer mu.Unlock()
			c.Downloaded += n
			for _, t := range bySource[id] {
				text, ok := arc.skills[t.Path]
				if !ok {
					return fmt.Errorf("target %s: %s %s@%s has no %s", t.Name, s.Ecosystem, s.Name, s.Version, t.Path)
				}
				lic := t.License
				if lic == "" {
					lic = s.License
				}
				found[t.Name] = Skill{Source: id, Path: t.Path, Name: t.Name, Text: text, Cut: arc.cut[t.Path], Files: arc.filesIn(path.Dir(t.Path)), License: lic}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, t := range l.Targets {
		sk := found[t.Name]
		seen[sha256.Sum256(sk.Text)] = true
		c.Targets = append(c.Targets, sk)
	}
	return nil
}

// readSource fetches s and returns its skills in path order.
func readSource(ctx context.Context, o Options, s Source, want wanted) (read, error) {
	var r read
	file, n, err := fetch(ctx, o.Client, o.CacheDir, s)
	if err != nil {
		return r, err
	}
	r.downloaded = n
	arc, err := readArchive(file, archiveKind(s.URL), want)
	if err != nil {
		return r, fmt.Errorf("%s %s@%s: %w", s.Ecosystem, s.Name, s.Version, err)
	}
	paths := make([]string, 0, len(arc.skills))
	for p := range arc.skills {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	used := map[string]bool{}
	for _, p := range paths {
		text, dir := arc.skills[p], path.Dir(p)
		fm, _, problems := skillmd.ParseSkillMD(text, path.Base(dir))
		if len(problems.Errors) > 0 || fm.Name == "" || fm.Description == "" || len(text) < minSkillBytes {
			r.refused++
			continue
		}
		if proprietary(arc.licenses[dir]) || strings.Contains(strings.ToLower(fm.License), "proprietary") {
			r.proprietary++
			continue
		}
		lic := s.License
		if fm.License != "" {
			lic = fm.License
		}
		r.skills = append(r.skills, Skill{Source: s.ID, Path: p, Dir: uniqueDir(used, s.ID, dir), Name: fm.Name, Text: text, Cut: arc.cut[p], Files: arc.filesIn(dir), License: lic})
	}
	return r, nil
}

// minSkillBytes leaves out stubs: a SKILL.md shorter than this is a
// placeholder or a test's, not a skill anyone wrote to be used.
const minSkillBytes = 150

// testFolders hold packages' own test data, not skills.
var testFolders = map[string]bool{"fixtures": true, "__fixtures__": true, "testdata": true, "golden": true}

// matchAny reports whether name matches one of globs, outside test folders.
var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a folder or category name of s: lower-case letters, digits
// and single hyphens, at most 64 characters.
func Slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		return "skill"
	}
	return s
}

// uniqueDir is category/<the slug of dir's last folder>, made unique among
// used by a suffix -2, -3, ….
func uniqueDir(used map[string]bool, category, dir string) string {
	base := Slug(path.Base(dir))
	d := category + "/" + base
	for i := 2; used[d]; i++ {
		d = fmt.Sprintf("%s/%s-%d", category, base, i)
	}
	used[d] = true
	return d
}

func matchAny(globs []string, name string) bool {
	for _, seg := range strings.Split(name, "/") {
		if testFolders[seg] {
			return false
		}
	}
	for _, g := range globs {
		if matchGlob(g, name) {
			return true
		}
	}
	return false
}
