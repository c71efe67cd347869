package settings

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Scope definitions as a library stores them: a user's in their settings
// object, the organization's shared library's and each team's in the
// library's side object (side.go). How a view compiles and applies them is
// internal/skills' (scope.go there).

// Bounds on what a library defines: a scope is read on every call that
// names it, and its lists are matched against every skill.
const (
	MaxScopes        = 100      // per library
	MaxScopeEntries  = 200      // per list (include or exclude categories, tags or names)
	maxScopeEntryLen = 128      // bytes, per entry
	maxScopesBytes   = 64 << 10 // a library's scopes, as JSON
)

// Compatibility rules: how a scope matches a skill's compatibility field
// against the harness the caller declares (mounts.Caller.Harness).
const (
	// CompatibilityAny ignores the field.
	CompatibilityAny = ""
	// CompatibilityEmptyOrHarness keeps skills whose compatibility is
	// empty or mentions the caller's harness (as a word, ignoring case).
	CompatibilityEmptyOrHarness = "empty-or-harness"
	// CompatibilityHarness keeps only skills whose compatibility
	// mentions the caller's harness.
	CompatibilityHarness = "harness"
)

// ScopeRule is one side of a scope: a skill matches it when its category
// is one of Categories, or one of its tags (the frontmatter's tags and
// keywords, at the top level or under metadata) is one of Tags (ignoring
// case), or its name is one of Names (exact, or a path.Match glob such as
// "contract-*").
type ScopeRule struct {
	Categories []string `json:"categories,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Names      []string `json:"names,omitempty"`
}

// ScopeDef is a scope as stored: a skill is in it when Include is empty or
// matches it, Exclude does not match it, and Compatibility (one of the
// Compatibility* rules) admits it for the caller's harness.
type ScopeDef struct {
	Name          string    `json:"name"`
	Include       ScopeRule `json:"include,omitzero"`
	Exclude       ScopeRule `json:"exclude,omitzero"`
	Compatibility string    `json:"compatibility,omitempty"`
}

// Validate checks d within the bounds, as SetScope stores it.
func (d ScopeDef) Validate() error {
	if err := mounts.ValidateID("scope", d.Name); err != nil {
		return fmt.Errorf("%w: scope name: %v", errkind.InvalidArgument, err)
	}
	switch d.Compatibility {
	case CompatibilityAny, CompatibilityEmptyOrHarness, CompatibilityHarness:
	default:
		return fmt.Errorf("%w: scope %q: compatibility %q: want %q, %q or empty", errkind.InvalidArgument, d.Name, d.Compatibility, CompatibilityEmptyOrHarness, CompatibilityHarness)
	}
	for side, r := range map[string]ScopeRule{"include": d.Include, "exclude": d.Exclude} {
		for field, list := range map[string][]string{"categories": r.Categories, "tags": r.Tags, "names": r.Names} {
			if len(list) > MaxScopeEntries {
				return fmt.Errorf("%w: scope %q: %s.%s lists %d entries; at most %d", errkind.InvalidArgument, d.Name, side, field, len(list), MaxScopeEntries)
			}
			for _, e := range list {
				if e == "" || len(e) > maxScopeEntryLen || strings.TrimSpace(e) != e {
					return fmt.Errorf("%w: scope %q: %s.%s entry %q must be 1..%d bytes without surrounding spaces", errkind.InvalidArgument, d.Name, side, field, e, maxScopeEntryLen)
				}
				if _, err := path.Match(e, ""); field == "names" && err != nil {
					return fmt.Errorf("%w: scope %q: %s.names entry %q is not a valid glob", errkind.InvalidArgument, d.Name, side, e)
				}
			}
		}
	}
	return nil
}

// CheckScopes validates a library's scopes as stored together.
func CheckScopes(defs []ScopeDef) error {
	if len(defs) > MaxScopes {
		return fmt.Errorf("%w: a library defines at most %d scopes; delete one first", errkind.InvalidArgument, MaxScopes)
	}
	if b, _ := json.Marshal(defs); len(b) > maxScopesBytes {
		return fmt.Errorf("%w: a library's scopes take at most %d bytes as JSON, these %d", errkind.InvalidArgument, maxScopesBytes, len(b))
	}
	return nil
}

// PutScope returns defs with d in place of its namesake (or added), by
// name; DeleteScope without the scope named.
func PutScope(defs []ScopeDef, d ScopeDef) []ScopeDef {
	defs = slices.DeleteFunc(slices.Clone(defs), func(o ScopeDef) bool { return o.Name == d.Name })
	defs = append(defs, d)
	slices.SortFunc(defs, func(a, b ScopeDef) int { return strings.Compare(a.Name, b.Name) })
	return defs
}

func DeleteScope(defs []ScopeDef, name string) ([]ScopeDef, bool) {
	out := slices.DeleteFunc(slices.Clone(defs), func(o ScopeDef) bool { return o.Name == name })
	return out, len(out) != len(defs)
}
