package skills

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// Skill is a skill's summary: where it is, its frontmatter and problems.
type Skill struct {
	// Path is the skill folder under the mount, e.g. "/skills/docs/pdf".
	Path     string
	Dir      string // "docs/pdf"
	Folder   string // "pdf"
	Category string // "docs", or "" for a flat skill
	Layer    string // LayerUser or LayerShared
	ETag     string // of SKILL.md
	Disabled bool
	Frontmatter
	Problems
}

// Location is the virtual path of the skill's SKILL.md.
func (s Skill) Location() string { return s.Path + "/SKILL.md" }

// parsed is the cached result of parsing one SKILL.md head.
type parsed struct {
	fm       Frontmatter
	problems Problems
}

type parseKey struct{ key, etag string }

// parseCache keeps parsed frontmatter by key and ETag: an unchanged SKILL.md
// is never fetched twice, and an invalid one is logged once.
type parseCache struct {
	c *lru.Cache[parseKey, parsed]
}

func newParseCache(size int) *parseCache {
	c, _ := lru.New[parseKey, parsed](max(size, 16))
	return &parseCache{c: c}
}

// readHead returns enough of the start of SKILL.md to hold its frontmatter:
// HeadBytes first, more only when the frontmatter runs past them.
func (l *Library) readHead(ctx context.Context, o objstore.Object) ([]byte, error) {
	rc, a, err := l.bucket.GetRange(ctx, o.Key, 0, int64(l.cfg.HeadBytes))
	if err != nil {
		return nil, err
	}
	head, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(head)) >= a.Size {
		return head, nil
	}
	if end, opened := frontmatterEnd(bytes.TrimPrefix(head, []byte(bom))); !opened || (end > 0 && end < len(head)) {
		return head, nil
	}
	rc, _, err = l.bucket.GetRange(ctx, o.Key, 0, MaxFrontmatterBytes+int64(len(bom))+1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (l *Library) parse(ctx context.Context, s *skillRef) (parsed, error) {
	k := parseKey{s.skillMD.Key, s.skillMD.ETag}
	if p, ok := l.parsed.c.Get(k); ok {
		return p, nil
	}
	head, err := l.readHead(ctx, s.skillMD)
	if err != nil {
		return parsed{}, err
	}
	fm, _, problems := ParseSkillMD(head, s.name)
	p := parsed{fm: fm, problems: problems}
	if !problems.Valid() {
		l.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	l.parsed.c.Add(k, p)
	return p, nil
}

func (l *Library) summary(s *skillRef, p parsed, disabled map[string]bool) Skill {
	return Skill{
		Path: l.cfg.Mount + "/" + s.dir, Dir: s.dir, Folder: s.name, Category: s.category,
		Layer: s.layer, ETag: s.skillMD.ETag, Disabled: disabled[s.name],
		Frontmatter: p.fm, Problems: p.problems,
	}
}

// ListOptions filters Skills.
type ListOptions struct {
	Category        string
	FilterCategory  bool // Category "" then means flat skills only
	IncludeInvalid  bool
	IncludeDisabled bool
}

// Skills returns the summaries of the caller's skills, sorted by path.
func (l *Library) Skills(ctx context.Context, id mounts.Identity, opts ListOptions) ([]Skill, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return nil, err
	}
	var refs []*skillRef
	for _, s := range v.skills {
		if !opts.FilterCategory || s.category == opts.Category {
			refs = append(refs, s)
		}
	}
	settings, _, err := l.settings(ctx, id)
	if err != nil {
		return nil, err
	}
	disabled := settings.disabledSet()
	out := make([]Skill, len(refs))
	keep := make([]bool, len(refs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(l.cfg.Concurrency)
	for i, s := range refs {
		g.Go(panics.Guard(func() error {
			p, err := l.parse(gctx, s)
			if objstore.IsNotFound(err) {
				return nil // deleted since listed
			}
			if err != nil {
				return err
			}
			out[i] = l.summary(s, p, disabled)
			keep[i] = (opts.IncludeInvalid || p.problems.Valid()) && (opts.IncludeDisabled || !out[i].Disabled)
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	kept := out[:0]
	for i := range out {
		if keep[i] {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}

// Category is a category and how many skills it holds.
type Category struct {
	Name  string
	Count int
}

// Categories counts the listed (valid, enabled) skills per category; flat
// skills count under "".
func (l *Library) Categories(ctx context.Context, id mounts.Identity) ([]Category, error) {
	skills, err := l.Skills(ctx, id, ListOptions{})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, s := range skills {
		counts[s.Category]++
	}
	out := make([]Category, 0, len(counts))
	for name, n := range counts {
		out = append(out, Category{Name: name, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// find resolves a skill reference: a path under the mount (the folder or its
// SKILL.md), a folder path relative to the library, or a bare skill name.
func (l *Library) find(v *view, ref string) (*skillRef, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("%w: a skill path or name is required", errkind.InvalidArgument)
	}
	rel := ref
	if strings.HasPrefix(ref, "/") {
		if err := mounts.CleanPath(ref); err != nil {
			return nil, err
		}
		var ok bool
		if rel, ok = strings.CutPrefix(ref, l.cfg.Mount+"/"); !ok {
			return nil, fmt.Errorf("%w: %q is not under %s", errkind.InvalidArgument, ref, l.cfg.Mount)
		}
	} else if err := mounts.CleanPath("/" + ref); err != nil {
		return nil, err
	}
	rel = strings.TrimSuffix(rel, "/SKILL.md")
	if s, ok := v.byDir[rel]; ok {
		return s, nil
	}
	if s, ok := v.byName[rel]; ok && !strings.Contains(rel, "/") {
		return s, nil
	}
	return nil, fmt.Errorf("%w: no skill %q", errkind.NotFound, ref)
}

// File is one file of a skill folder.
type File struct {
	Path   string // relative to the skill folder, e.g. "scripts/run.py"
	Size   int64
	Binary bool
}

// Detail is everything GetSkill returns.
type Detail struct {
	Skill
	Raw   string // SKILL.md as stored
	Body  string // SKILL.md without its frontmatter
	Files []File // the other files
}

// sniffBytes is how much of a file decides whether it is binary.
const sniffBytes = 8 << 10

// Get loads a skill's SKILL.md and describes its other files. An invalid
// skill fails with ErrInvalidSkill and its problems.
func (l *Library) Get(ctx context.Context, id mounts.Identity, ref string) (Detail, error) {
	d, s, err := l.load(ctx, id, ref)
	if err != nil {
		return Detail{}, err
	}
	if d.Files, err = l.describe(ctx, s); err != nil {
		return Detail{}, err
	}
	return d, nil
}

// load reads and checks a skill's SKILL.md; Files is left empty.
func (l *Library) load(ctx context.Context, id mounts.Identity, ref string) (Detail, *skillRef, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return Detail{}, nil, err
	}
	s, err := l.find(v, ref)
	if err != nil {
		return Detail{}, nil, err
	}
	raw, a, err := l.readText(ctx, s.skillMD.Key, l.cfg.Mount+"/"+s.dir+"/SKILL.md")
	if err != nil {
		return Detail{}, nil, err
	}
	fm, body, problems := ParseSkillMD(raw, s.name)
	if !problems.Valid() {
		return Detail{}, nil, fmt.Errorf("%w: %s/%s: %s", ErrInvalidSkill, l.cfg.Mount, s.dir, strings.Join(problems.Errors, "; "))
	}
	settings, _, err := l.settings(ctx, id)
	if err != nil {
		return Detail{}, nil, err
	}
	d := Detail{Skill: l.summary(s, parsed{fm: fm, problems: problems}, settings.disabledSet()), Raw: string(raw), Body: body}
	d.ETag = a.ETag // of the bytes just read, which may be newer than the listing
	return d, s, nil
}

// describe lists a skill's files other than SKILL.md, sniffing each head.
func (l *Library) describe(ctx context.Context, s *skillRef) ([]File, error) {
	var files []File
	var objs []objstore.Object
	for _, e := range s.files {
		rel := strings.TrimPrefix(e.rel, s.dir+"/")
		if rel == "SKILL.md" {
			continue
		}
		files = append(files, File{Path: rel, Size: e.obj.Size})
		objs = append(objs, e.obj)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(l.cfg.Concurrency)
	for i, o := range objs {
		g.Go(panics.Guard(func() error {
			rc, _, err := l.bucket.GetRange(gctx, o.Key, 0, sniffBytes)
			if objstore.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			defer rc.Close()
			head, err := io.ReadAll(rc)
			if err != nil {
				return err
			}
			files[i].Binary = textfile.IsBinary(head, o.Size)
			return nil
		}))
	}
	return files, g.Wait()
}

// readText reads a whole text object up to MaxFileBytes.
func (l *Library) readText(ctx context.Context, key, vpath string) ([]byte, objstore.Attributes, error) {
	r := textfile.Reader{MaxBytes: l.cfg.MaxFileBytes, Hint: "download it from " + vpath + " with FilesystemService.Download or ExportSkill"}
	data, a, err := r.Read(ctx, l.bucket, key, vpath)
	if objstore.IsNotFound(err) {
		return nil, a, fmt.Errorf("%w: %q", errkind.NotFound, vpath)
	}
	return data, a, err
}

// Render returns the text handed to the model when the skill is invoked:
// its base directory, then its body with $ARGUMENTS replaced by arguments.
// Without the placeholder, non-empty arguments are appended. The returned
// Detail has no Files: invoking a skill does not read them.
func (l *Library) Render(ctx context.Context, id mounts.Identity, ref, arguments string) (string, Detail, error) {
	// Invoking a skill needs its body, not its file list.
	d, _, err := l.load(ctx, id, ref)
	if err != nil {
		return "", d, err
	}
	return RenderBody(d.Path, d.Body, arguments), d, nil
}

// RenderBody builds the invocation text of a skill at dir with body.
func RenderBody(dir, body, arguments string) string {
	switch {
	case strings.TrimSpace(arguments) == "":
	case strings.Contains(body, "$ARGUMENTS"):
		body = strings.ReplaceAll(body, "$ARGUMENTS", arguments)
	default:
		body = strings.TrimRight(body, "\n") + "\n\nARGUMENTS: " + arguments + "\n"
	}
	return "Base directory for this skill: " + dir + "\n\n" + body
}

// ReadFile returns one file of a skill as text. An unknown file fails with
// ErrNotFound naming the files that exist.
func (l *Library) ReadFile(ctx context.Context, id mounts.Identity, ref, file string) (string, string, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return "", "", err
	}
	s, err := l.find(v, ref)
	if err != nil {
		return "", "", err
	}
	file = strings.TrimPrefix(file, "./")
	if !mounts.Addressable(file) {
		return "", "", fmt.Errorf("%w: file %q must be a relative path inside the skill folder", errkind.InvalidArgument, file)
	}
	var names []string
	for _, e := range s.files {
		rel := strings.TrimPrefix(e.rel, s.dir+"/")
		if rel == file || (path.Ext(file) == "" && rel == file+".md") {
			vpath := l.cfg.Mount + "/" + e.rel
			data, _, err := l.readText(ctx, e.obj.Key, vpath)
			return string(data), vpath, err
		}
		names = append(names, rel)
	}
	return "", "", fmt.Errorf("%w: skill %s has no file %q; it has: %s", errkind.NotFound, s.dir, file, strings.Join(names, ", "))
}
