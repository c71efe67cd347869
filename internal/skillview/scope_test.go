package skillview

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// TestScopeAdmits: include (any of categories, tags ignoring case, exact
// or glob names), exclude, and the compatibility rules against a harness
// named as a word.
func TestScopeAdmits(t *testing.T) {
	skill := func(dir, name, compat string, extra map[string]any, meta map[string]string) *Ref {
		return &Ref{Dir: dir, Name: name, Head: Head{Frontmatter: skillmd.Frontmatter{Name: name, Compatibility: compat, Extra: extra, Metadata: meta}}}
	}
	contracts := skill("legal/contracts", "contracts", "", map[string]any{"tags": []any{"Contracts", "law"}}, nil)
	draft := skill("draft-contract", "draft-contract", "", map[string]any{"keywords": "drafts, contracts"}, nil)
	deploy := skill("eng/deploy", "deploy", "Claude Code, codex", nil, map[string]string{"tags": "ops"})
	cli := skill("eng/cli", "cli", "codex-cli", nil, nil)
	for _, tc := range []struct {
		name    string
		def     settings.ScopeDef
		harness string
		want    map[*Ref]bool
	}{
		{"category", settings.ScopeDef{Include: settings.ScopeRule{Categories: []string{"legal"}}}, "", map[*Ref]bool{contracts: true, draft: false, deploy: false}},
		{"tag ignoring case, list and string", settings.ScopeDef{Include: settings.ScopeRule{Tags: []string{"CONTRACTS"}}}, "", map[*Ref]bool{contracts: true, draft: true, deploy: false}},
		{"metadata tag", settings.ScopeDef{Include: settings.ScopeRule{Tags: []string{"ops"}}}, "", map[*Ref]bool{deploy: true, cli: false}},
		{"glob, excluded", settings.ScopeDef{Include: settings.ScopeRule{Names: []string{"*contract*"}}, Exclude: settings.ScopeRule{Names: []string{"draft-*"}}}, "", map[*Ref]bool{contracts: true, draft: false}},
		{"exclude only", settings.ScopeDef{Exclude: settings.ScopeRule{Categories: []string{"eng"}}}, "", map[*Ref]bool{contracts: true, draft: true, deploy: false}},
		{"empty or harness", settings.ScopeDef{Compatibility: settings.CompatibilityEmptyOrHarness}, "codex", map[*Ref]bool{contracts: true, deploy: true, cli: false}},
		{"harness only", settings.ScopeDef{Compatibility: settings.CompatibilityHarness}, "claude", map[*Ref]bool{contracts: false, deploy: true, cli: false}},
		{"no harness declared", settings.ScopeDef{Compatibility: settings.CompatibilityEmptyOrHarness}, "", map[*Ref]bool{contracts: true, deploy: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.def.Name = "s"
			if err := tc.def.Validate(); err != nil {
				t.Fatal(err)
			}
			sc := CompileScope(tc.def)
			for s, want := range tc.want {
				if got := sc.Admits(s, tc.harness); got != want {
					t.Errorf("%s admits %s (harness %q) = %t, want %t", tc.name, s.Name, tc.harness, got, want)
				}
			}
		})
	}
}

// TestUserScopeCompiledOnce: a user's scope is compiled once per
// definition, whichever call names it.
func TestUserScopeCompiledOnce(t *testing.T) {
	d := settings.ScopeDef{Name: "once", Include: settings.ScopeRule{Names: []string{"a*"}}}
	c := NewCompiledScopes()
	a, err := ScopeOf("once", []settings.ScopeDef{d}, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ScopeOf("once", []settings.ScopeDef{d}, nil, c)
	if a.Scope != b.Scope {
		t.Error("the same definition was compiled twice")
	}
	d.Include.Names = []string{"b*"}
	if c, _ := ScopeOf("once", []settings.ScopeDef{d}, nil, c); c.Scope == a.Scope {
		t.Error("a changed definition kept the old compiled scope")
	}
}

// FuzzScopeDefs: a library's scopes as stored (JSON written by SetScope
// or by other tools) and a skill matched against them. Property: only
// definitions Validate accepts are compiled, at most settings.MaxScopes of them;
// matching is deterministic and a harness is admitted only where the
// compatibility field holds it (ignoring case).
func FuzzScopeDefs(f *testing.F) {
	f.Add([]byte(`[{"name":"contracts","include":{"categories":["legal"],"tags":["Contracts"]},"exclude":{"names":["draft-*"]},"compatibility":"empty-or-harness"}]`),
		"legal/contracts", "contracts", "Claude Code", "contracts", "claude")
	f.Add([]byte(`[{"name":"a","include":{"names":["[","*"]}},{"name":"../x"}]`), "x", "x", "", "", "")
	f.Fuzz(func(t *testing.T, doc []byte, dir, name, compat, tag, harness string) {
		var defs []settings.ScopeDef
		if json.Unmarshal(doc, &defs) != nil {
			return
		}
		if mounts.ValidateID("harness", harness) != nil {
			harness = "" // as mounts.Table.Identify admits a caller's
		}
		compiled := CompileScopes(defs)
		if len(compiled) > settings.MaxScopes {
			t.Fatalf("%d scopes compiled", len(compiled))
		}
		s := &Ref{Dir: dir, Name: name, Head: Head{Frontmatter: skillmd.Frontmatter{Name: name, Compatibility: compat, Extra: map[string]any{"tags": []any{tag}}}}}
		for n, sc := range compiled {
			if err := sc.Def.Validate(); err != nil || n != sc.Def.Name {
				t.Fatalf("compiled %q: %v", n, err)
			}
			got := sc.Admits(s, harness)
			if got != sc.Admits(s, harness) {
				t.Fatal("admits is not deterministic")
			}
			if got && sc.Def.Compatibility == settings.CompatibilityHarness && !strings.Contains(strings.ToLower(compat), strings.ToLower(harness)) {
				t.Fatalf("harness %q admitted by compatibility %q", harness, compat)
			}
		}
	})
}
