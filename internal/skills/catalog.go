package skills

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
	"github.com/skillsvc/skillsvc/internal/skilltree"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// Catalog answers what a caller's library holds: listings, a skill's
// instructions and files, and which skills are enabled.
type Catalog struct {
	bucket   objstore.Bucket
	cfg      Config
	views    *views.Builder
	files    *libindex.Files
	tree     *skilltree.Tree // skill files are read as text as /skills reads them
	settings *settings.Store
	searchIx *skillsearch.Indexes             // each layer's, for Search and a query's Prompt
	skillMDs *cache.Shelf[*skillview.SkillMD] // by key and ETag
	// Which of a user's own parses and GetSkill replies to keep: apart, so
	// one call's two first asks never take each other's slot.
	admitParse, admitReply *skillview.Admission
	listener               listenerSlot
	uses                   skillview.Uses // UseUsage: a prompt block's order, a search's ties
}

// heldSkillMD is the kind of the parsed SKILL.md files on the held budget.
const heldSkillMD = "skillmd"

// skillPath is the virtual path of the skill folder r (Skill.Path).
func (c *Catalog) skillPath(r *skillview.Ref) string {
	if r.Location != "" { // made with the layer
		return r.Location[:len(r.Location)-len("/SKILL.md")]
	}
	return c.cfg.Mount + "/" + r.Dir
}

// skillLocation is the virtual path of r's SKILL.md (Skill.Location).
func (c *Catalog) skillLocation(r *skillview.Ref) string {
	if r.Location != "" {
		return r.Location
	}
	return skillview.Location(c.skillPath(r))
}

// summary describes s from its frontmatter p; settings key by the name as
// listed, so disabled is by name.
func (c *Catalog) summary(s *skillview.Ref, p skillmd.Frontmatter, problems skillmd.Problems, disabled map[string]bool) skillview.Skill {
	sk := skillview.Skill{
		Path: c.skillPath(s), Dir: s.Dir, Folder: s.Folder(), Category: s.Category(),
		Layer: s.Layer, ETag: s.SkillMD.ETag, Disabled: disabled[s.Name], Manifest: s.Manifest,
		Frontmatter: p, Problems: problems,
	}
	// p is the head's frontmatter but in detail, which resets it.
	sk.Written = s.Head.Written
	sk.Name = s.Name // as the view resolved it, so every RPC agrees on it
	return sk
}

// skills returns the summaries of the caller's skills, sorted by path,
// and the library digest of the caller's library, which does not depend
// on opts. Invalid skills, and SKILL.md files nested too deep to be
// skills, are listed only with IncludeInvalid.
func (c *Catalog) skills(ctx context.Context, id mounts.Caller, opts skillview.ListOptions) ([]skillview.Skill, string, error) {
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return nil, "", err
	}
	return c.list(s, opts), s.digest(), nil
}

// snapshot is what every listing of the caller's library is made from: the
// merged view and the settings, as of one call.
type snapshot struct {
	v  *skillview.View
	st settings.User
	id mounts.Caller
}

func (c *Catalog) snapshot(ctx context.Context, id mounts.Caller) (snapshot, error) {
	v, err := c.views.Get(ctx, id)
	if err != nil {
		return snapshot{}, err
	}
	st, err := c.settings.Get(ctx, id)
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{v: v, st: st, id: id}, nil
}

// digest is the library digest of the snapshot (Page.LibraryDigest).
func (s snapshot) digest() string { return skillview.LibraryDigest(s.v, s.st) }

// list is Skills of the snapshot s.
func (c *Catalog) list(s snapshot, opts skillview.ListOptions) []skillview.Skill {
	disabled := s.st.DisabledSet()
	var out []skillview.Skill
	for r := range s.listed(opts, disabled) {
		out = append(out, c.summary(r, r.Head.Frontmatter, s.v.Problems(c.cfg.Mount, r), disabled))
	}
	return out
}

// listed yields the skills of s a listing with opts holds, in path order:
// the one rule of Skills, Page and Prompt.
func (s snapshot) listed(opts skillview.ListOptions, disabled map[string]bool) iter.Seq[*skillview.Ref] {
	return func(yield func(*skillview.Ref) bool) {
		for r := range s.v.All() {
			if s.lists(r, opts, disabled) && !yield(r) {
				return
			}
		}
	}
}

// lists reports whether a listing with opts holds r, a skill the view
// serves: the one test of every listing surface (Skills, Page, Prompt,
// Search), so a filter added here applies to all of them.
func (s snapshot) lists(r *skillview.Ref, opts skillview.ListOptions, disabled map[string]bool) bool {
	valid := len(r.Head.Problems.Errors) == 0 && len(r.Note().Errors) == 0 // as Skill.Valid of its summary
	return !(opts.FilterCategory && r.Category() != opts.Category ||
		!opts.IncludeInvalid && !valid || !opts.IncludeDisabled && disabled[r.Name] ||
		opts.ServedOverMCP && r.ExtensionProblem() != "")
}

// pageQuery is a Page request checked and with its defaults applied: what
// the page depends on besides the library.
type pageQuery struct {
	opts  skillview.ListOptions
	count int32
	after string // the last path of the previous page
	scope string // what the page token is bound to
}

func (c *Catalog) pageQuery(opts skillview.ListOptions, pageSize int32, token string) (pageQuery, error) {
	count, err := limits.Count("page_size", pageSize, c.cfg.DefaultPageSize, c.cfg.MaxPageSize)
	if err != nil {
		return pageQuery{}, err
	}
	scope := fmt.Sprintf("skills category=%q filter=%t invalid=%t disabled=%t", opts.Category, opts.FilterCategory, opts.IncludeInvalid, opts.IncludeDisabled)
	if opts.ServedOverMCP {
		scope += " mcp=true" // a gRPC listing's token does not continue an MCP one
	}
	after, err := pagetoken.Decode(scope, token)
	if err != nil {
		return pageQuery{}, err
	}
	return pageQuery{opts: opts, count: count, after: after, scope: scope}, nil
}

// page cuts the page q asks for from the snapshot s.
func (c *Catalog) page(s snapshot, q pageQuery) skillview.Page {
	list := c.list(s, q.opts)
	list = list[sort.Search(len(list), func(i int) bool { return list[i].Path > q.after }):]
	n := min(len(list), int(q.count))
	if n == len(list) {
		return skillview.Page{Skills: list, LibraryDigest: s.digest(), TokenScope: q.scope}
	}
	list = list[:n]
	return skillview.Page{Skills: list, NextPageToken: pagetoken.Encode(q.scope, list[n-1].Path), LibraryDigest: s.digest(), TokenScope: q.scope}
}

// MaxPageBytes is --skills.max-page-bytes: the most a reply of Page's or
// Search's skills may encode to, which the caller that encodes it applies.
func (c *Catalog) MaxPageBytes() int { return c.cfg.MaxPageBytes }

// Categories counts the listed (valid, enabled) skills per category; flat
// skills count under "".
func (c *Catalog) Categories(ctx context.Context, id mounts.Caller) ([]skillview.Category, error) {
	skills, _, err := c.skills(ctx, id, skillview.ListOptions{})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, s := range skills {
		counts[s.Category]++
	}
	out := make([]skillview.Category, 0, len(counts))
	for name, n := range counts {
		out = append(out, skillview.Category{Name: name, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// formatOptions checks f and applies its defaults: what a prompt block
// depends on besides the library and the category.
func (c *Catalog) formatOptions(f skillmd.FormatOptions) (skillmd.FormatOptions, error) {
	budget, err := limits.Within("char_budget", f.CharBudget, skillmd.DefaultCharBudget, int(c.cfg.MaxCharBudget))
	if err != nil {
		return f, err
	}
	if f.MaxSkills < 0 {
		return f, fmt.Errorf("%w: max_skills must not be negative", errkind.InvalidArgument)
	}
	if !skillmd.ValidFormat(f.Format) {
		return f, fmt.Errorf("%w: format %q: want %s", errkind.InvalidArgument, f.Format, strings.Join(skillmd.FormatNames(), ", "))
	}
	if f.SearchTool, err = toolName("search_tool", f.SearchTool, c.cfg.SearchTool); err != nil {
		return f, err
	}
	if len(f.Query) > c.cfg.MaxQueryBytes {
		return f, fmt.Errorf("%w: query must be at most %d bytes", errkind.InvalidArgument, c.cfg.MaxQueryBytes)
	}
	f.Format = cmp.Or(f.Format, skillmd.FormatXML)
	f.CharBudget = budget
	f.Unlisted = 0
	return f, nil
}

// minEntryChars is about the fewest characters a block entry takes (its
// markup, a short name and location, a description cut to the shortest):
// a block of budget characters never holds more than budget/minEntryChars
// skills, so no more are ranked for it.
const minEntryChars = 64

// prompt renders the block of the snapshot s; f is checked. It makes the
// entries from the view without the summaries a listing makes: a block a
// reply cache does not hold is made on every call.
func (c *Catalog) prompt(ctx context.Context, s snapshot, opts skillview.ListOptions, f skillmd.FormatOptions) (skillview.Block, error) {
	lp := entryLists.Get().(*[]skillmd.Entry)
	list := (*lp)[:0]
	entry := func(r *skillview.Ref) skillmd.Entry {
		return skillmd.Entry{Name: r.Name, Description: r.Head.Frontmatter.Description, Category: r.Category(), Location: c.skillLocation(r), Layer: r.Layer, Version: r.Digest()}
	}
	lo := skillview.ListOptions{Category: opts.Category, FilterCategory: opts.FilterCategory}
	disabled := s.st.DisabledSet()
	if f.Query != "" {
		limit := f.CharBudget / minEntryChars
		if f.MaxSkills > 0 {
			limit = min(limit, f.MaxSkills)
		}
		hits, err := c.ranked(ctx, s, lo, f.Query, max(limit, 1))
		if err != nil {
			return skillview.Block{}, err
		}
		if len(hits) > 0 {
			n := 0
			for range s.listed(lo, disabled) {
				n++
			}
			for _, h := range hits {
				list = append(list, entry(h.r))
			}
			f.Unlisted = n - len(hits) // found by searching, as the note says
		}
	}
	if len(list) == 0 {
		// The caller's own first, then its teams', then the organization's:
		// a user's skills are never cut before the shared library's.
		list = slices.Grow(list, len(s.v.Own.All)+len(s.v.Shared.All)) // at most
		var refs []*skillview.Ref
		for _, near := range []int{rankOwn, rankTeam, rankShared} {
			refs = refs[:0]
			for r := range s.listed(lo, disabled) {
				if layerRank(r.Layer) == near {
					refs = append(refs, r)
				}
			}
			if c.cfg.OrderByUse { // each layer's most used first
				skillview.ByUse(c.uses, s.id, refs, func(r *skillview.Ref) *skillview.Ref { return r })
			}
			for _, r := range refs {
				list = append(list, entry(r))
			}
		}
	}
	b, offered, err := skillmd.FormatBlockOffered(list, f) // keeps nothing of list
	// The pool holds no skill's strings.
	clear(list)
	if cap(list) <= maxPooledEntries {
		*lp = list[:0]
		entryLists.Put(lp)
	}
	return skillview.Block{Block: b, LibraryDigest: s.digest(), Offered: offered}, err
}

// entryLists keeps prompt's entry lists for reuse: a block a reply cache
// does not hold is made on every call, of every skill the caller sees.
var entryLists = sync.Pool{New: func() any { return new([]skillmd.Entry) }}

// maxPooledEntries bounds the lists entryLists keeps.
const maxPooledEntries = 4096

// Get loads a skill's SKILL.md and describes its other files. An invalid
// skill fails with ErrInvalidSkill and its problems.
func (c *Catalog) Get(ctx context.Context, id mounts.Caller, ref string) (skillview.Detail, error) {
	d, s, err := c.load(ctx, id, ref)
	if err != nil {
		return skillview.Detail{}, err
	}
	if d.Files, d.FilesOmitted, err = c.describe(ctx, s); err != nil {
		return skillview.Detail{}, err
	}
	return d, nil
}

// load reads and checks a skill's SKILL.md; Files is left empty.
func (c *Catalog) load(ctx context.Context, id mounts.Caller, ref string) (skillview.Detail, *skillview.Ref, error) {
	r, err := c.resolve(ctx, id, ref)
	if err != nil {
		return skillview.Detail{}, nil, err
	}
	f, err := c.skillMD(ctx, r.s)
	if err != nil {
		return skillview.Detail{}, nil, err
	}
	d, err := c.detail(r, f)
	return d, r.s, err
}

// resolved is a skill as one call found it: in the caller's view, with the
// caller's settings and what the view notes of it.
type resolved struct {
	v     *skillview.View
	s     *skillview.Ref
	st    settings.User
	notes []string // the view's notes on shadowing (view.notes)
}

// resolve finds ref in the caller's view; a skill the listing found
// invalid fails with ErrInvalidSkill.
func (c *Catalog) resolve(ctx context.Context, id mounts.Caller, ref string) (resolved, error) {
	v, err := c.views.Get(ctx, id)
	if err != nil {
		return resolved{}, err
	}
	s, err := v.Find(c.cfg.Mount, ref)
	if err != nil {
		return resolved{}, err
	}
	if !s.Note().Valid() {
		return resolved{}, invalidSkill(c.cfg.Mount, s, s.Note())
	}
	st, err := c.settings.Get(ctx, id)
	if err != nil {
		return resolved{}, err
	}
	return resolved{v: v, s: s, st: st, notes: v.Notes(c.cfg.Mount, s)}, nil
}

// detail is r's skill as f, its SKILL.md, says; Files is left empty. An
// invalid SKILL.md fails with ErrInvalidSkill.
func (c *Catalog) detail(r resolved, f *skillview.SkillMD) (skillview.Detail, error) {
	problems := f.Problems
	if !problems.Valid() {
		return skillview.Detail{}, invalidSkill(c.cfg.Mount, r.s, problems)
	}
	problems.Warnings = slices.Concat(problems.Warnings, r.s.Note().Warnings, r.notes)
	d := skillview.Detail{Skill: c.summary(r.s, f.FullFrontmatter(), problems, r.st.DisabledSet()), Raw: f.Raw, Body: f.Body}
	// Of the file read, which may be newer than the head: checked when asked.
	d.Skill.Written = 0
	d.ETag = f.ETag // of the bytes read, which may be newer than the listing
	return d, nil
}

// skillMD reads and parses the SKILL.md of s, or returns the version the
// listing names as parsed before: parsing is most of a warm GetSkill's
// work. The file cache would return the same bytes (by key and ETag), so
// the answer is the same; the parse is held on the budget of what the
// replica keeps decoded, keyed by the object's key and ETag (which
// determine the folder the parse checks the name against).
func (c *Catalog) skillMD(ctx context.Context, s *skillview.Ref) (*skillview.SkillMD, error) {
	key := s.SkillMD.Key + "\x00" + s.SkillMD.ETag
	if f, ok := c.skillMDs.Get(key); ok && s.SkillMD.ETag != "" {
		return f, nil
	}
	raw, a, err := c.readText(ctx, *s.SkillMD, c.skillLocation(s), "")
	if err != nil {
		return nil, err
	}
	f := skillview.SkillMDOf(raw, a.ETag, s)
	if s.SkillMD.ETag != "" && a.ETag == s.SkillMD.ETag && c.admitParse.Keeps(s, key) { // a version, not whatever is there now
		c.skillMDs.Add(key, f, f.HeldBytes(key))
	}
	return f, nil
}

func invalidSkill(mount string, s *skillview.Ref, p skillmd.Problems) error {
	return fmt.Errorf("%w: %s/%s: %s", ErrInvalidSkill, mount, s.Dir, strings.Join(p.Errors, "; "))
}

// describe lists a skill's files other than SKILL.md and whether each is
// binary. At most MaxListedFiles are described (each may cost a ranged
// read, and the answer must fit a message); the rest are counted.
func (c *Catalog) describe(ctx context.Context, s *skillview.Ref) ([]skillview.File, int, error) {
	var files []skillview.File
	var objs []objstore.Object
	omitted := 0
	for _, e := range s.Files {
		rel := strings.TrimPrefix(e.Rel, s.Dir+"/")
		if rel == "SKILL.md" {
			continue
		}
		if len(files) == c.cfg.MaxListedFiles {
			omitted++
			continue
		}
		files = append(files, skillview.File{Path: rel, Size: e.Obj.Size})
		objs = append(objs, e.Obj)
	}
	binary, err := c.files.Binary(ctx, objs, c.cfg.Concurrency)
	if err != nil {
		return nil, 0, err
	}
	for i := range files {
		files[i].Binary = binary[i]
	}
	return files, omitted, nil
}

// readText reads a whole text file as the /skills mount reads it (Tree's
// readText: the file cache, --skills.max-file-bytes). A refusal names
// downloadTool, the caller's tool for fetching files, or says what to do
// in neutral words: a model reads these messages, and has no tools by our
// RPCs' names.
func (c *Catalog) readText(ctx context.Context, o objstore.Object, vpath, downloadTool string) ([]byte, objstore.Attributes, error) {
	hint := "fetch the file itself instead of reading it as text"
	if downloadTool != "" {
		hint = "fetch it with " + downloadTool + " instead"
	}
	return c.tree.ReadText(ctx, o, vpath, hint)
}

// Render returns the text handed to the model when the skill is invoked:
// its base directory, then its body with $ARGUMENTS replaced by the
// arguments. Without the placeholder, non-empty arguments are appended. The
// returned Detail has no Files: invoking a skill does not read them.
func (c *Catalog) Render(ctx context.Context, id mounts.Caller, ref string, opts skillview.RenderOptions) (string, skillview.Detail, error) {
	if err := skillmd.CheckBaseDir(opts.BaseDir); err != nil {
		return "", skillview.Detail{}, err
	}
	d, _, err := c.load(ctx, id, ref)
	if err != nil {
		return "", d, err
	}
	dir := cmp.Or(opts.BaseDir, d.Path)
	// Each placeholder copies the arguments: size the text before making it.
	if n := skillmd.RenderedSize(dir, d.Body, opts.Arguments); n > c.cfg.MaxRenderBytes {
		return "", d, fmt.Errorf("%w: rendering %s with these arguments makes %d bytes (%d placeholders), at most %d are returned",
			errkind.ResourceExhausted, d.Path, n, strings.Count(d.Body, skillmd.ArgumentsPlaceholder), c.cfg.MaxRenderBytes)
	}
	return skillmd.RenderBody(dir, d.Body, opts.Arguments), d, nil
}

// ReadFile returns one file of a skill as text, and its virtual path: the
// file the VFS's Read of that path reads (without an extension, the ".md"
// file when there is no other), with the same limit. An unknown file fails
// with NotFound naming the files that exist.
func (c *Catalog) ReadFile(ctx context.Context, id mounts.Caller, ref, file string, opts skillview.ReadOptions) (string, string, error) {
	content, vpath, _, err := c.ReadSkillFile(ctx, id, ref, file, opts)
	return content, vpath, err
}

// ReadSkillFile is ReadFile and the skill read from (what its use names).
func (c *Catalog) ReadSkillFile(ctx context.Context, id mounts.Caller, ref, file string, opts skillview.ReadOptions) (content, vpath string, skill *skillview.Ref, err error) {
	tool, err := toolName("download_tool", opts.DownloadTool, c.cfg.DownloadTool)
	if err != nil {
		return "", "", nil, err
	}
	v, err := c.views.Get(ctx, id)
	if err != nil {
		return "", "", nil, err
	}
	s, err := v.Find(c.cfg.Mount, ref)
	if err != nil {
		return "", "", nil, err
	}
	file = strings.TrimPrefix(file, "./")
	if !mounts.Addressable(file) {
		return "", "", nil, fmt.Errorf("%w: file %q must be a relative path inside the skill folder", errkind.InvalidArgument, file)
	}
	e, ok := v.SkillFile(s, s.Dir+"/"+file)
	if alt, hasAlt := mounts.Fallback(file); !ok && hasAlt {
		e, ok = v.SkillFile(s, s.Dir+"/"+alt)
	}
	if ok {
		vpath := c.cfg.Mount + "/" + e.Rel
		data, _, err := c.readText(ctx, e.Obj, vpath, tool)
		return string(data), vpath, s, err
	}
	return "", "", nil, fmt.Errorf("%w: skill %s has no file %q; it has: %s", errkind.NotFound, s.Dir, file, fileNames(s, maxNamedFiles))
}

// maxNamedFiles bounds the file names an error message lists: a skill may
// hold thousands, and the message is for a model to act on.
const maxNamedFiles = 20

// fileNames lists up to max of the skill's files, saying how many more.
func fileNames(s *skillview.Ref, max int) string {
	var b strings.Builder
	for i, e := range s.Files {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(s.Files)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.TrimPrefix(e.Rel, s.Dir+"/"))
	}
	return b.String()
}

// SetEnabled enables or disables a skill for the user, by the name it is
// listed under, without touching the skill. It returns the skill's summary.
// A name no skill has any more can still be enabled (removed from the
// settings).
func (c *Catalog) SetEnabled(ctx context.Context, id mounts.Caller, ref string, enabled bool) (skillview.Skill, error) {
	v, err := c.views.Get(ctx, id)
	if err != nil {
		return skillview.Skill{}, err
	}
	ref = strings.TrimSpace(ref)
	sk, findErr := v.Find(c.cfg.Mount, ref)
	name := ref
	switch {
	case findErr == nil:
		name = sk.Name
	case !enabled || !errors.Is(findErr, errkind.NotFound):
		return skillview.Skill{}, findErr
	}
	stored := false
	err = c.settings.Update(ctx, id, func(s *settings.User) bool {
		i := slices.Index(s.Disabled, name)
		stored = i >= 0
		switch {
		case enabled && i < 0, !enabled && i >= 0:
			return false // already so
		case enabled:
			s.Disabled = slices.Delete(s.Disabled, i, i+1)
		default:
			s.Disabled = append(s.Disabled, name)
			slices.Sort(s.Disabled)
		}
		return true
	})
	if err != nil {
		return skillview.Skill{}, err
	}
	c.changed(layout.LibraryRef{User: id.User()}, true)
	if sk == nil {
		if !stored && !skillmd.ValidName(name) {
			return skillview.Skill{}, findErr
		}
		return skillview.Skill{Folder: name, Frontmatter: skillmd.Frontmatter{Name: name}, Disabled: !enabled}, nil
	}
	return c.summary(sk, sk.Head.Frontmatter, v.Problems(c.cfg.Mount, sk), map[string]bool{name: !enabled}), nil
}

// DropIndex forgets every cached copy of user's library index and settings:
// in this process, in the shared cache and the persisted index object, so
// the next call lists the library afresh (on other replicas within
// --skills.index-refresh). For an operator, after a bulk upload.
func (c *Catalog) DropIndex(ctx context.Context, user string) error {
	own, _, err := c.views.UserLayers(user) // validates user
	if err != nil {
		return err
	}
	c.views.Forget(own.Prefix)
	err = errors.Join(c.views.Indexes.Drop(ctx, own), c.settings.Forget(ctx, user))
	c.changed(layout.LibraryRef{User: user}, true)
	return err
}

// DropSharedIndex does what DropIndex does for the shared library.
func (c *Catalog) DropSharedIndex(ctx context.Context) error {
	_, shared, err := c.views.UserLayers("index")
	if err != nil {
		return err
	}
	err = c.views.Indexes.Drop(ctx, shared)
	c.changed(layout.LibraryRef{Shared: true}, true)
	return err
}

// layer resolves l, which names exactly one library.
func (c *Catalog) layer(l layout.LibraryRef) (libindex.Layer, error) {
	lib, err := c.views.Layout.Of(l)
	if err != nil {
		return libindex.Layer{}, err
	}
	return views.IndexLayer(l, lib), nil
}

// libraryKey resolves rel, a path relative to the library's root in the
// canonical spelling of virtual paths, to its key.
func (c *Catalog) libraryKey(l layout.LibraryRef, rel string) (libindex.Layer, string, error) {
	ly, err := c.layer(l)
	if err != nil {
		return libindex.Layer{}, "", err
	}
	if rel == "" {
		return libindex.Layer{}, "", fmt.Errorf("%w: path is required", errkind.InvalidArgument)
	}
	if err := mounts.CleanPath("/" + rel); err != nil {
		return libindex.Layer{}, "", err
	}
	return ly, ly.Prefix + rel, nil
}

// DropLibraryIndex is DropIndex or DropSharedIndex for the library l
// names, so a change to it is visible to the next call.
func (c *Catalog) DropLibraryIndex(ctx context.Context, l layout.LibraryRef) error {
	if err := l.Validate(); err != nil {
		return err
	}
	switch {
	case l.Shared:
		return c.DropSharedIndex(ctx)
	case l.Team != "":
		ly := c.views.TeamLayer(l.Team)
		err := c.views.Indexes.Drop(ctx, ly)
		c.changed(l, true)
		return err
	}
	return c.DropIndex(ctx, l.User)
}

// SetProtected protects (or no longer protects) the skill name of the
// shared library or a team's: no lower layer's skill of that name or path
// then replaces it. It returns the library's protected names; every
// replica applies the change as it applies a dropped index.
func (c *Catalog) SetProtected(ctx context.Context, l layout.LibraryRef, name string, protect bool) ([]string, error) {
	key, err := c.views.Layout.ProtectedList(l)
	if err != nil {
		return nil, err
	}
	names, err := settings.Sides{Bucket: c.bucket}.SetProtected(ctx, key, name, protect)
	if err != nil {
		return nil, err
	}
	// Listed with the library's index: dropping it lists the new version.
	return names, c.DropLibraryIndex(ctx, l)
}

// Protected returns the protected names of the shared library or a team's.
func (c *Catalog) Protected(ctx context.Context, l layout.LibraryRef) ([]string, error) {
	key, err := c.views.Layout.ProtectedList(l)
	if err != nil {
		return nil, err
	}
	doc, _, err := settings.Sides{Bucket: c.bucket}.Load(ctx, key)
	return doc.Names, err
}

// SetUserEnabled is SetEnabled for an operator acting for user.
func (c *Catalog) SetUserEnabled(ctx context.Context, user, ref string, enabled bool) (skillview.Skill, error) {
	id, err := c.views.Operator(user)
	if err != nil {
		return skillview.Skill{}, err
	}
	return c.SetEnabled(ctx, id, ref, enabled)
}

// PutLibraryFile stores data at rel in the library (atomically, under
// opts' conditions) and drops its index so the next call lists the change.
func (c *Catalog) PutLibraryFile(ctx context.Context, l layout.LibraryRef, rel string, data []byte, opts objstore.PutOptions) (objstore.Attributes, error) {
	_, key, err := c.libraryKey(l, rel)
	if err != nil {
		return objstore.Attributes{}, err
	}
	attrs, err := c.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), opts)
	switch {
	case errors.Is(err, objstore.ErrPrecondition) && opts.IfNoneMatch:
		return objstore.Attributes{}, fmt.Errorf("%w: %q", errkind.AlreadyExists, rel)
	case err != nil:
		return objstore.Attributes{}, libraryErr(err, rel)
	}
	return attrs, c.DropLibraryIndex(ctx, l)
}

// DeleteLibraryFile removes rel from the library and drops its index.
func (c *Catalog) DeleteLibraryFile(ctx context.Context, l layout.LibraryRef, rel string) error {
	_, key, err := c.libraryKey(l, rel)
	if err != nil {
		return err
	}
	if _, err := c.bucket.Stat(ctx, key); err != nil {
		return libraryErr(err, rel)
	}
	if err := c.bucket.Delete(ctx, key); err != nil {
		return libraryErr(err, rel)
	}
	return c.DropLibraryIndex(ctx, l)
}

// libraryErr restates a storage error about rel without the key.
func libraryErr(err error, rel string) error {
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return fmt.Errorf("%w: %q", errkind.NotFound, rel)
	case errors.Is(err, objstore.ErrPrecondition):
		return fmt.Errorf("%w: %q changed (etag does not match)", errkind.FailedPrecondition, rel)
	case errors.Is(err, objstore.ErrConflict):
		return fmt.Errorf("%w: %q was written concurrently", errkind.Aborted, rel)
	}
	return err
}
