package skillview

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
)

// Scoped views: a scope is a named skill set a library defines (the
// organization's shared library and each team's in its side object beside
// the protected names; a user's in their settings object: the stored forms
// are internal/settings'), and
// a call names one (mounts.Caller.Scope: a request field, the
// x-skillsvc-scope header, a token's claim). The name resolves in the
// caller's nearest library first: the user's, then its teams' (in ID
// order), then the organization's. The view then serves only the skills
// the scope matches (view.inScope), on every surface that reads it.
//
// Each library's scopes are compiled once per state: the shared and team
// ones when their layer is built (the side object is in the index's
// generation), a user's by content (compiledScopes), so a warm call pays a
// map lookup and a predicate per skill, and no storage request.

// scope is a settings.ScopeDef compiled: immutable, shared by every call naming it.
type scope struct {
	Def     settings.ScopeDef
	digest  [sha256.Size]byte // of the definition: in the library digest and reply keys
	in, out rule
}

// rule is a settings.ScopeRule compiled.
type rule struct {
	categories map[string]bool
	tags       []string // matched ignoring case
	names      map[string]bool
	globs      []string
}

func compileRule(r settings.ScopeRule) rule {
	c := rule{categories: map[string]bool{}, names: map[string]bool{}, tags: r.Tags}
	for _, cat := range r.Categories {
		c.categories[cat] = true
	}
	for _, n := range r.Names {
		if strings.ContainsAny(n, `*?[\`) {
			c.globs = append(c.globs, n)
		} else {
			c.names[n] = true
		}
	}
	return c
}

// CompileScope compiles d, which was validated when stored; an entry that
// is not (written by other tools) matches nothing.
func CompileScope(d settings.ScopeDef) *scope {
	b, _ := json.Marshal(d)
	return &scope{Def: d, digest: sha256.Sum256(b), in: compileRule(d.Include), out: compileRule(d.Exclude)}
}

// CompileScopes compiles a library's scopes by name, leaving out those
// that fail validation.
func CompileScopes(defs []settings.ScopeDef) map[string]*scope {
	if len(defs) == 0 {
		return nil
	}
	out := make(map[string]*scope, len(defs))
	for _, d := range defs[:min(len(defs), settings.MaxScopes)] {
		if d.Validate() == nil {
			out[d.Name] = CompileScope(d)
		}
	}
	return out
}

// CompiledScopes compiles users' scopes once per definition, whatever user
// or replica copy of the settings names it: the views hold one (the model
// itself keeps no state).
type CompiledScopes struct {
	mu  sync.Mutex
	lru *simplelru.LRU[string, *scope]
}

// NewCompiledScopes holds the most recently named 4096 definitions.
func NewCompiledScopes() *CompiledScopes {
	l, _ := simplelru.NewLRU[string, *scope](4096, nil)
	return &CompiledScopes{lru: l}
}

// compiled returns d compiled, from c when it was compiled before.
func (c *CompiledScopes) compiled(d settings.ScopeDef) *scope {
	b, _ := json.Marshal(d)
	k := string(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.lru.Get(k); ok {
		return s
	}
	s := CompileScope(d)
	c.lru.Add(k, s)
	return s
}

// match reports whether the rule matches the skill s.
func (r *rule) match(s *Ref) bool {
	if r.categories[s.Category()] && s.Category() != "" || r.names[s.Name] {
		return true
	}
	for _, g := range r.globs {
		if ok, _ := path.Match(g, s.Name); ok {
			return true
		}
	}
	if len(r.tags) == 0 {
		return false
	}
	found := false
	skillTags(s.Head.Frontmatter, func(t string) bool {
		for _, want := range r.tags {
			if strings.EqualFold(t, want) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// skillTags calls yield with each tag of fm (tags and keywords: a list, or
// a comma-separated string; at the top level or under metadata) until it
// returns false.
func skillTags(fm skillmd.Frontmatter, yield func(string) bool) {
	each := func(v any) bool {
		switch x := v.(type) {
		case string:
			for t := range strings.SplitSeq(x, ",") {
				if t = strings.TrimSpace(t); t != "" && !yield(t) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if t, ok := e.(string); ok && !yield(strings.TrimSpace(t)) {
					return false
				}
			}
		}
		return true
	}
	for k := range skillsearch.TagFields {
		if !each(fm.Extra[k]) {
			return
		}
		if v, ok := fm.Metadata[k]; ok && !each(v) {
			return
		}
		if meta, ok := fm.Raw["metadata"].(map[string]any); ok {
			if _, isString := meta[k].(string); !isString && !each(meta[k]) {
				return
			}
		}
	}
}

// Admits reports whether the scope shows s to a caller of harness.
func (sc *scope) Admits(s *Ref, harness string) bool {
	if s.Nested || !sc.in.empty() && !sc.in.match(s) || sc.out.match(s) {
		return false
	}
	switch sc.Def.Compatibility {
	case settings.CompatibilityEmptyOrHarness:
		return s.Head.Frontmatter.Compatibility == "" || mentions(s.Head.Frontmatter.Compatibility, harness)
	case settings.CompatibilityHarness:
		return mentions(s.Head.Frontmatter.Compatibility, harness)
	}
	return true
}

func (r *rule) empty() bool {
	return len(r.categories) == 0 && len(r.tags) == 0 && len(r.names) == 0 && len(r.globs) == 0
}

// mentions reports whether text names word as a word of its own (bounded
// by anything but a letter, digit, '-' or '_'), ignoring case: "Claude
// Code, Codex" mentions "codex", "codex-cli" does not mention "codex".
func mentions(text, word string) bool {
	if word == "" {
		return false
	}
	for i := 0; i+len(word) <= len(text); i++ {
		if !strings.EqualFold(text[i:i+len(word)], word) {
			continue
		}
		if (i == 0 || !wordByte(text[i-1])) && (i+len(word) == len(text) || !wordByte(text[i+len(word)])) {
			return true
		}
	}
	return false
}

func wordByte(b byte) bool {
	return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// scoped is the scope a view applies and the caller's harness.
type scoped struct {
	Scope   *scope
	Harness string
	from    string // the layer defining it: LayerUser, a team's, LayerShared
}

// inScope reports whether the view shows s: every skill of an unscoped
// view, those its scope admits of a scoped one.
func (v *View) inScope(s *Ref) bool {
	return v.Scope == nil || v.Scope.Scope.Admits(s, v.Scope.Harness)
}

// ScopeKey is what the view's scope adds to reply keys and the library
// digest: nothing for an unscoped view.
func (v *View) ScopeKey() []byte {
	if v.Scope == nil {
		return nil
	}
	b := AppendField(nil, v.Scope.Scope.Def.Name)
	b = append(b, v.Scope.Scope.digest[:]...)
	return AppendField(b, v.Scope.Harness)
}

// ScopeOf finds the scope the caller names: in the user's settings, then
// the lower layers (its teams in ID order, then the shared library's). A
// user's scope is compiled once in c.
func ScopeOf(name string, user []settings.ScopeDef, lower []*Layer, c *CompiledScopes) (*scoped, error) {
	for _, d := range user {
		if d.Name == name {
			if d.Validate() != nil {
				break
			}
			return &scoped{Scope: c.compiled(d), from: LayerUser}, nil
		}
	}
	for _, l := range lower {
		if sc, ok := l.Scopes[name]; ok {
			return &scoped{Scope: sc, from: l.Name}, nil
		}
	}
	return nil, fmt.Errorf("%w: scope %q is not defined in the caller's library, its teams' or the organization's", errkind.NotFound, name)
}
