package skills

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// Config configures the skills library.
type Config struct {
	// Mount is the read-only mount whose template locates a user's library.
	Mount string `yaml:"mount"`
	// SharedPrefix holds the organization-wide library.
	SharedPrefix string `yaml:"shared_prefix"`
	// SettingsKey is the per-user settings object; {user} is replaced.
	SettingsKey string `yaml:"settings_key"`
	// IndexTTL is how long one listing of a library is reused. Libraries are
	// uploaded with ordinary S3 tools, so changes show up after at most this.
	IndexTTL    time.Duration `yaml:"index_ttl"`
	HeadBytes   int           `yaml:"head_bytes"`
	Concurrency int           `yaml:"concurrency"`
	// MaxSkills bounds the skills one library may hold.
	MaxSkills      int   `yaml:"max_skills"`
	MaxObjects     int   `yaml:"max_objects"`
	MaxExportBytes int64 `yaml:"max_export_bytes"`
	MaxFileBytes   int64 `yaml:"max_file_bytes"`
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Mount, prefix+"mount", "/skills", "Read-only mount holding each user's skill library.")
	f.StringVar(&c.SharedPrefix, prefix+"shared-prefix", "_shared/skills/", "Key prefix of the organization-wide skill library; its first segment must not be a valid user ID.")
	f.StringVar(&c.SettingsKey, prefix+"settings-key", "{user}/settings/skills.json", "Object holding a user's skill settings (disabled skills).")
	f.DurationVar(&c.IndexTTL, prefix+"index-ttl", 5*time.Second, "How long a library listing is reused; 0 lists on every call.")
	f.IntVar(&c.HeadBytes, prefix+"head-bytes", 8<<10, "Bytes fetched from the start of each SKILL.md to read its frontmatter.")
	f.IntVar(&c.Concurrency, prefix+"concurrency", 32, "SKILL.md heads fetched in parallel.")
	f.IntVar(&c.MaxSkills, prefix+"max-skills", 10000, "Most skills read from one library.")
	f.IntVar(&c.MaxObjects, prefix+"max-objects", 100000, "Most objects read from one library listing; the rest are ignored (and logged).")
	f.Int64Var(&c.MaxExportBytes, prefix+"max-export-bytes", 256<<20, "Largest skill folder ExportSkill packs.")
	f.Int64Var(&c.MaxFileBytes, prefix+"max-file-bytes", 1<<20, "Largest SKILL.md or skill file returned as text (GetSkill returns it twice, raw and body, within gRPC's default 4 MiB message limit).")
}

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the config against the mount table.
func (c *Config) Validate(table *mounts.Table) error {
	m, ok := table.Lookup(c.Mount)
	if !ok {
		return fmt.Errorf("skills: mount %q is not in the mount table", c.Mount)
	}
	if m.Mode != mounts.ReadOnly {
		return fmt.Errorf("skills: mount %q must be read-only", c.Mount)
	}
	// Disjoint checks the template syntax and the mounts; the first segment
	// must also be no valid ID, or it could alias a user's keys outside the
	// mounts (the settings object, say).
	if err := table.Disjoint(c.SharedPrefix); err != nil {
		return fmt.Errorf("skills: shared-prefix: %w", err)
	}
	if first, _, _ := strings.Cut(c.SharedPrefix, "/"); mounts.ValidateID("user", first) == nil {
		return fmt.Errorf("skills: shared-prefix %q must start with a segment that is no valid ID (e.g. _shared/skills/), so no user's keys can alias it", c.SharedPrefix)
	}
	if !strings.HasPrefix(c.SettingsKey, "{user}/") || strings.Count(c.SettingsKey, "{") != 1 || strings.HasSuffix(c.SettingsKey, "/") || !strings.Contains(c.SettingsKey[len("{user}/"):], "/") {
		return fmt.Errorf("skills: settings-key %q must be {user}/<dir>/<name>, an object outside every mount", c.SettingsKey)
	}
	// Workers must not be able to edit the settings as a file.
	if err := table.Disjoint(path.Dir(c.SettingsKey) + "/"); err != nil {
		return fmt.Errorf("skills: settings-key: %w", err)
	}
	if c.HeadBytes < 512 || c.Concurrency <= 0 || c.MaxSkills <= 0 || c.MaxObjects <= 0 || c.MaxExportBytes <= 0 || c.MaxFileBytes <= 0 || c.IndexTTL < 0 {
		return errors.New("skills: head-bytes must be at least 512 and the other limits positive")
	}
	return nil
}

var errTooManyObjects = errors.New("too many objects")

// listTimeout bounds one shared listing of a library.
const listTimeout = time.Minute

// Layer names.
const (
	LayerUser   = "user"
	LayerShared = "shared"
)

// Library is the skills library of every user: their own layer merged over
// the shared one. It is safe for concurrent use.
type Library struct {
	bucket objstore.Bucket
	table  *mounts.Table
	cfg    Config
	log    *slog.Logger

	listings *expirable.LRU[string, *listing] // by prefix
	views    *lru.Cache[string, *view]        // by user prefix
	flight   singleflight.Group
	parsed   *parseCache
}

// New returns the library.
func New(bucket objstore.Bucket, table *mounts.Table, cfg Config, log *slog.Logger) (*Library, error) {
	if err := cfg.Validate(table); err != nil {
		return nil, err
	}
	l := &Library{bucket: bucket, table: table, cfg: cfg, log: log, parsed: newParseCache(4 * cfg.MaxSkills)}
	if cfg.IndexTTL > 0 {
		l.listings = expirable.NewLRU[string, *listing](1024, nil, cfg.IndexTTL)
		l.views, _ = lru.New[string, *view](256)
	}
	return l, nil
}

// list returns every object under prefix, reusing a listing younger than
// IndexTTL and sharing one listing among concurrent callers.
// listing is one listing of a library prefix. Views remember the listings
// they were built from, so a view is rebuilt only when a listing is new.
type listing struct {
	objs []objstore.Object
}

func (l *Library) list(ctx context.Context, prefix string) (*listing, error) {
	if l.listings != nil {
		if ls, ok := l.listings.Get(prefix); ok {
			return ls, nil
		}
	}
	ch := l.flight.DoChan(prefix, func() (any, error) {
		// Callers share this listing, so one caller giving up must not fail
		// the others; the timeout bounds it instead.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
		defer cancel()
		var objs []objstore.Object
		err := objstore.Walk(lctx, l.bucket, prefix, func(o objstore.Object) error {
			if len(objs) == l.cfg.MaxObjects {
				return errTooManyObjects
			}
			objs = append(objs, o)
			return nil
		})
		if errors.Is(err, errTooManyObjects) {
			// Serve what fits rather than fail every call for this library.
			l.log.WarnContext(lctx, "skill library truncated", "prefix", prefix, "max_objects", l.cfg.MaxObjects)
			err = nil
		}
		if err != nil {
			return nil, err
		}
		ls := &listing{objs: objs}
		if l.listings != nil {
			l.listings.Add(prefix, ls)
		}
		return ls, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*listing), nil
	}
}

// entry is one file of the merged view.
type entry struct {
	rel string // path inside the library
	obj objstore.Object
}

// skillRef locates one skill folder.
type skillRef struct {
	dir      string // "category/name" or "name"
	name     string // folder name
	category string
	layer    string
	skillMD  objstore.Object
	files    []entry // every file of the folder, SKILL.md included, by rel
}

// view is one user's merged library. It is shared by concurrent callers
// once built, so nothing changes it after view returns it.
type view struct {
	userSrc, sharedSrc *listing // what it was built from
	entries            []entry  // sorted by rel
	skills             []*skillRef
	byDir              map[string]*skillRef
	byName             map[string]*skillRef
	userBase           string // the user's layer prefix
}

func (l *Library) userPrefix(id mounts.Identity) (string, error) {
	r, err := l.table.Resolve(id, l.cfg.Mount)
	if err != nil {
		return "", err
	}
	return r.Prefix, nil
}

// findSkills returns the skill folders among the rel paths of one layer:
// <name>/SKILL.md, or <category>/<name>/SKILL.md when <category> is not
// itself a skill.
func findSkills(entries []entry, layer string) []*skillRef {
	flat := map[string]bool{}
	for _, e := range entries {
		if d, f := path.Split(e.rel); f == "SKILL.md" && d != "" && !strings.Contains(strings.TrimSuffix(d, "/"), "/") {
			flat[strings.TrimSuffix(d, "/")] = true
		}
	}
	var out []*skillRef
	for _, e := range entries {
		dir, file := path.Split(e.rel)
		dir = strings.TrimSuffix(dir, "/")
		if file != "SKILL.md" || dir == "" {
			continue
		}
		cat, name, categorized := strings.Cut(dir, "/")
		switch {
		case !categorized:
			cat, name = "", dir
		case strings.Contains(name, "/") || flat[cat]:
			continue // deeper, or inside a flat skill's folder
		}
		out = append(out, &skillRef{dir: dir, name: name, category: cat, layer: layer, skillMD: e.obj})
	}
	return out
}

// addressable drops keys that no virtual path can name (written by other tools).
func addressable(objs []objstore.Object, prefix string) []entry {
	out := make([]entry, 0, len(objs))
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix)
		if mounts.Addressable(rel) {
			out = append(out, entry{rel: rel, obj: o})
		}
	}
	return out
}

// view lists both layers and merges them: every user file, plus the folders
// of shared skills that the user neither overrides by name nor shadows by
// path.
func (l *Library) view(ctx context.Context, id mounts.Identity) (*view, error) {
	userBase, err := l.userPrefix(id)
	if err != nil {
		return nil, err
	}
	var userLs, sharedLs *listing
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { userLs, err = l.list(gctx, userBase); return err })
	g.Go(func() (err error) { sharedLs, err = l.list(gctx, l.cfg.SharedPrefix); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Every VFS call under the skills mount needs the view: merging costs
	// about as much as the call itself, so reuse it while both listings do.
	if l.views != nil {
		if v, ok := l.views.Get(userBase); ok && v.userSrc == userLs && v.sharedSrc == sharedLs {
			return v, nil
		}
	}
	v := buildView(userBase, userLs, sharedLs, l.cfg.SharedPrefix, l.cfg.MaxSkills)
	if l.views != nil {
		l.views.Add(userBase, v)
	}
	return v, nil
}

// buildView merges the two layers of one user.
func buildView(userBase string, userLs, sharedLs *listing, sharedPrefix string, maxSkills int) *view {
	user := addressable(userLs.objs, userBase)
	shared := addressable(sharedLs.objs, sharedPrefix)

	v := &view{userSrc: userLs, sharedSrc: sharedLs, userBase: userBase, byDir: map[string]*skillRef{}, byName: map[string]*skillRef{}}
	userPaths := map[string]bool{} // every user file and ancestor directory
	for _, e := range user {
		for p := e.rel; p != "." && p != ""; p = path.Dir(p) {
			if userPaths[p] {
				break
			}
			userPaths[p] = true
		}
	}
	add := func(s *skillRef) {
		v.skills = append(v.skills, s)
		v.byDir[s.dir] = s
		if _, dup := v.byName[s.name]; !dup {
			v.byName[s.name] = s
		}
	}
	for _, s := range findSkills(user, LayerUser) {
		add(s)
	}
	userFiles := map[string]bool{}
	for _, e := range user {
		userFiles[e.rel] = true
	}
	// A shared skill is hidden by a user skill of the same name, by any user
	// file or folder at its path, or by a user file or flat skill where its
	// category is (a folder inside a flat skill is part of that skill).
	visibleShared := map[string]bool{}
	for _, s := range findSkills(shared, LayerShared) {
		_, overridden := v.byName[s.name]
		_, inFlatSkill := v.byDir[s.category]
		if overridden || inFlatSkill || userPaths[s.dir] || (s.category != "" && userFiles[s.category]) {
			continue
		}
		visibleShared[s.dir] = true
		add(s)
	}
	v.entries = append(v.entries, user...)
	for _, e := range shared {
		if d := skillDirOf(e.rel, visibleShared); d != "" {
			v.entries = append(v.entries, e)
		}
	}
	sort.Slice(v.entries, func(i, j int) bool { return v.entries[i].rel < v.entries[j].rel })
	sort.Slice(v.skills, func(i, j int) bool { return v.skills[i].dir < v.skills[j].dir })
	if len(v.skills) > maxSkills {
		v.skills = v.skills[:maxSkills]
	}
	// Attach each file to its skill.
	for _, e := range v.entries {
		if d := skillDirOf(e.rel, v.byDir); d != "" {
			s := v.byDir[d]
			s.files = append(s.files, e)
		}
	}
	return v
}

// skillDirOf returns the skill folder (a key of dirs) that holds rel, or "".
func skillDirOf[V any](rel string, dirs map[string]V) string {
	first, rest, ok := strings.Cut(rel, "/")
	if !ok {
		return ""
	}
	if _, ok := dirs[first]; ok {
		return first
	}
	second, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	if _, ok := dirs[first+"/"+second]; ok {
		return first + "/" + second
	}
	return ""
}

// The Tree methods let the VFS serve the merged library at the skills mount.

// Key implements vfs.Tree.
func (l *Library) Key(ctx context.Context, id mounts.Identity, rel string) (string, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return "", err
	}
	if d := skillDirOf(rel, v.byDir); d != "" && v.byDir[d].layer == LayerShared {
		return l.cfg.SharedPrefix + rel, nil
	}
	return v.userBase + rel, nil
}

// List implements vfs.Tree.
func (l *Library) List(ctx context.Context, id mounts.Identity, rel string) ([]vfs.TreeEntry, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	start := sort.Search(len(v.entries), func(i int) bool { return v.entries[i].rel >= prefix })
	var out []vfs.TreeEntry
	for _, e := range v.entries[start:] {
		if !strings.HasPrefix(e.rel, prefix) {
			break
		}
		name, _, isDir := strings.Cut(e.rel[len(prefix):], "/")
		if isDir {
			if n := len(out); n > 0 && out[n-1].IsDir && out[n-1].Name == name {
				continue
			}
			out = append(out, vfs.TreeEntry{Name: name, IsDir: true})
			continue
		}
		out = append(out, vfs.TreeEntry{Name: name, Object: e.obj})
	}
	if len(out) == 0 && rel != "" {
		return nil, fmt.Errorf("%w: not a directory", objstore.ErrNotFound)
	}
	// Entries are already in key order, as vfs.Tree requires: the view is
	// sorted by path, and a directory's files are contiguous in it.
	return out, nil
}

// Walk implements vfs.Tree.
func (l *Library) Walk(ctx context.Context, id mounts.Identity, rel string, fn func(string, objstore.Object) error) error {
	v, err := l.view(ctx, id)
	if err != nil {
		return err
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	for _, e := range v.entries {
		if strings.HasPrefix(e.rel, prefix) {
			if err := fn(e.rel, e.obj); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ vfs.Tree = (*Library)(nil)
