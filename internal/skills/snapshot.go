package skills

import (
	"context"
	"math"
	"path"
	"slices"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Snapshot is one caller's library as of one call: the merged view and the
// settings every answer it gives is made from, and the keys that name those
// answers. A key names what the answer holds on every replica, so a reply
// encoded from the answer may be kept under its key (internal/replies) and
// sent for every later query of the same key; as both come from one
// snapshot, a key and the content it names always agree.
type Snapshot struct {
	c      *Catalog
	id     mounts.Caller
	s      snapshot
	pinned bool // a pinned thread's call: no GetSkill reply of it is kept
}

// Snapshot returns the caller's library as of now.
func (c *Catalog) Snapshot(ctx context.Context, id mounts.Caller) (Snapshot, error) {
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{c: c, id: id, s: s, pinned: c.views.Pinned(ctx)}, nil
}

// LibraryDigest is the digest of the caller's library (Page.LibraryDigest).
func (s Snapshot) LibraryDigest() string { return s.s.digest() }

// State is every served skill of s, disabled ones included, sorted by path:
// Catalog.State as of this snapshot, made without a storage request (what
// a change feed keeps of a listing for resuming a watch from its digest).
func (s Snapshot) State() []skillview.Skill {
	return s.c.list(s.s, skillview.ListOptions{IncludeDisabled: true})
}

// ReplyCacheBytes is --skills.reply-cache-bytes: the most the encoded
// replies of one replica's snapshots may cost.
func (c *Catalog) ReplyCacheBytes() int64 { return c.cfg.ReplyCacheBytes }

// Key kinds: the first field of every key, so no two kinds of answer share
// one. They are part of the keys in the shared cache: renaming one is a new
// key for every reply of its kind.
const (
	keyList   = "list"
	keyFormat = "format"
	keySearch = "search"
	keyGet    = "get"
)

// PageQuery is a Page request checked and with its defaults applied.
type PageQuery struct{ q pageQuery }

// PageQuery checks a Page request: pageSize skills (0 means the configured
// default) after the position in token, which only continues a listing
// with the same options.
func (c *Catalog) PageQuery(opts skillview.ListOptions, pageSize int32, token string) (PageQuery, error) {
	q, err := c.pageQuery(opts, pageSize, token)
	return PageQuery{q}, err
}

// PageKey is the key of the reply of q's page, encoded as variant names:
// whatever else the encoding depends on (a view of the reply), so
// differently encoded replies of one page are kept apart.
func (s Snapshot) PageKey(q PageQuery, variant string) string {
	return s.s.replyKey(keyList).Str(variant).Str(q.q.scope).Int(int64(q.q.count)).Str(q.q.after).Sum()
}

// Page is the page q asks for.
func (s Snapshot) Page(q PageQuery) skillview.Page { return s.c.page(s.s, q.q) }

// PromptQuery is a Prompt request checked and with its defaults applied.
type PromptQuery struct {
	opts skillview.ListOptions
	f    skillmd.FormatOptions
}

// PromptQuery checks a Prompt request (Catalog.Prompt).
func (c *Catalog) PromptQuery(opts skillview.ListOptions, f skillmd.FormatOptions) (PromptQuery, error) {
	f, err := c.formatOptions(f)
	return PromptQuery{opts: opts, f: f}, err
}

// PromptKey is the key of the reply of q's block.
func (s Snapshot) PromptKey(q PromptQuery) string {
	f := q.f
	k := s.s.replyKey(keyFormat).Str(q.opts.Category).Bool(q.opts.FilterCategory).
		Str(f.Format).Int(int64(f.CharBudget)).Int(int64(f.MaxSkills)).Bool(f.GroupByCategory).Str(f.SearchTool).Str(f.Query)
	return s.c.usesKey(k, s.id, f.Query == "" && s.c.cfg.OrderByUse).Sum()
}

// Prompt is the block q asks for (Catalog.Prompt), without LibraryDigest:
// users who see the same block, whatever else their libraries hold, then
// share one kept reply (internal/replies keeps equal bytes once), and the
// caller adds the digest of its own library (LibraryDigest) to each.
func (s Snapshot) Prompt(ctx context.Context, q PromptQuery) (skillview.Block, error) {
	b, err := s.c.prompt(ctx, s.s, q.opts, q.f)
	b.LibraryDigest = ""
	return b, err
}

// SearchQuery is a Search request checked and with its defaults applied.
type SearchQuery struct{ opts skillview.SearchOptions }

// SearchQuery checks a Search request (Catalog.Search).
func (c *Catalog) SearchQuery(opts skillview.SearchOptions) (SearchQuery, error) {
	opts, err := c.searchOptions(opts)
	return SearchQuery{opts}, err
}

// SearchKey is the key of the reply of q's results.
func (s Snapshot) SearchKey(q SearchQuery) string {
	o := q.opts
	k := s.s.replyKey(keySearch).Str(o.Query).Int(int64(o.Limit)).Str(o.Category).Bool(o.FilterCategory).
		Int(int64(math.Float64bits(o.MinRelevance)))
	return s.c.usesKey(k, s.id, s.c.cfg.SearchUsePrior).Sum()
}

// Search is the results q asks for (Catalog.Search).
func (s Snapshot) Search(ctx context.Context, q SearchQuery) (skillview.Results, error) {
	return s.c.search(ctx, s.s, q.opts)
}

// Resolved is one skill of a snapshot, as GetSkill answers it.
type Resolved struct {
	c      *Catalog
	r      resolved
	pinned bool
}

// Skill finds ref in the snapshot; a skill the listing found invalid fails
// with ErrInvalidSkill.
func (s Snapshot) Skill(ref string) (Resolved, error) {
	c, v := s.c, s.s.v
	sk, err := v.Find(c.cfg.Mount, ref)
	if err != nil {
		return Resolved{}, err
	}
	if !sk.Note().Valid() {
		return Resolved{}, invalidSkill(c.cfg.Mount, sk, sk.Note())
	}
	return Resolved{c: c, r: resolved{v: v, s: sk, st: s.s.st, notes: v.Notes(c.cfg.Mount, sk)}, pinned: s.pinned}, nil
}

// Ref is the skill r found (read-only): what a usage record names of it.
func (r Resolved) Ref() *skillview.Ref { return r.r.s }

// Origin is what a served skill's provenance is looked up by: its folder's
// name, its layer and its manifest digest ("" over the limits).
func (r Resolved) Origin() (folder, layer, digest string) {
	if r.r.s.Manifest != nil {
		digest = r.r.s.Manifest.Digest
	}
	return path.Base(r.r.s.Dir), r.r.s.Layer, digest
}

// ReplyKey is the key of r's GetSkill reply, "" for a pinned thread's call
// (its reply is never kept). early reports whether a reply kept under it
// answers the call before the SKILL.md is read: the key names the
// SKILL.md's version when the listing has one, and a kept reply then needs
// the file neither read nor parsed (with many users, their parsed files are
// not all held).
//
// Unlike the other keys it does not name the caller's library: a shared
// skill's reply serves every user who sees it alike, so the replies a
// replica keeps grow with the skills in use, not the users.
func (r Resolved) ReplyKey() (key string, early bool) {
	if r.pinned {
		return "", false
	}
	return r.r.replyKey().Sum(), r.r.s.SkillMD.ETag != ""
}

// Admit reports whether r's reply under key is to be kept now: any
// library's at once, the user's own from its second ask (admission).
func (r Resolved) Admit(key string) bool { return r.c.admitReply.Keeps(r.r.s, key) }

// Read reads r's SKILL.md.
func (r Resolved) Read(ctx context.Context) (Loaded, error) {
	f, err := r.c.skillMD(ctx, r.r.s)
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{r: r, f: f}, nil
}

// Loaded is a skill with its SKILL.md read.
type Loaded struct {
	r Resolved
	f *skillview.SkillMD
}

// Current reports whether l's reply may be kept under its ReplyKey: the
// SKILL.md read is the version the listing names (a newer one is answered
// without keeping it), and the call is not a pinned thread's.
func (l Loaded) Current() bool { return !l.r.pinned && l.f.ETag == l.r.r.s.SkillMD.ETag }

// Detail is everything GetSkill returns of l (Catalog.Get). An invalid
// SKILL.md fails with ErrInvalidSkill.
func (l Loaded) Detail(ctx context.Context) (skillview.Detail, error) {
	c := l.r.c
	d, err := c.detail(l.r.r, l.f)
	if err != nil {
		return skillview.Detail{}, err
	}
	if d.Files, d.FilesOmitted, err = c.describe(ctx, l.r.r.s); err != nil {
		return skillview.Detail{}, err
	}
	return d, nil
}

// replyKey is the key of r's GetSkill reply. A layer's generation names
// its files, manifests and protections on every replica, so the skill's
// layer and generation, its dir and name (as the view resolved it), its
// notes and whether the caller disabled it say everything the reply holds.
// A user's own skill is keyed by the user's library and both generations
// (what the user's layer makes of the shared one can change its notes);
// any other by the generation of the layers under the user's, the same
// for every user over them.
func (r resolved) replyKey() *skillview.Key {
	s := r.s
	k := (&skillview.Key{}).Str(keyGet).Str(s.Layer).Str(s.Dir).Str(s.Name).Str(s.SkillMD.Key).Str(s.SkillMD.ETag)
	if s.Layer == skillview.LayerUser {
		k.Str(r.v.UserBase).Int(int64(r.v.UserGen))
	}
	k.Int(int64(r.v.SharedGen)).Bool(slices.Contains(r.st.Disabled, s.Name))
	for _, p := range [][]string{s.Note().Warnings, r.notes} {
		k.Int(int64(len(p)))
		for _, w := range p {
			k.Str(w)
		}
	}
	return k
}

// replyKey starts the key of a reply of kind made from s. A view is rebuilt
// exactly when one of its indexes' generations changes (and a generation
// names one content of its library on every replica), so the user's
// library, the two generations and the settings say everything a reply
// depends on besides the request. The library digest alone would not: it
// leaves out invalid skills (listed with include_invalid), a SKILL.md's
// ETag and which layer serves a skill.
func (s snapshot) replyKey(kind string) *skillview.Key {
	k := (&skillview.Key{}).Str(kind).Str(s.v.UserBase).Int(int64(s.v.UserGen)).Int(int64(s.v.SharedGen))
	k.Int(int64(len(s.st.Disabled)))
	for _, name := range s.st.Disabled {
		k.Str(name)
	}
	return k.Str(string(s.v.ScopeKey()))
}
