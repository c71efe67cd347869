package layout

import (
	"fmt"
	"path"
	"strings"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// Validate checks the templates against the mount table, so that rendering
// and parsing them (ChangeOf) hold: each is outside every mount (no worker
// can write it as a file), its placeholders whole segments, a first
// segment that is no valid ID wherever no ID is, and the libraries apart.
// The messages name the flags (--skills.*).
func (k Keys) Validate(table *mounts.Table) error {
	m, ok := table.Lookup(k.Mount)
	if !ok {
		return fmt.Errorf("skills: mount %q is not in the mount table", k.Mount)
	}
	// Disjoint checks the template syntax and the mounts; the first segment
	// must also be no valid ID, or it could alias a user's keys outside the
	// mounts (the settings object, say).
	if err := table.Disjoint(k.SharedPrefix); err != nil {
		return fmt.Errorf("skills: shared-prefix: %w", err)
	}
	if first, _, _ := strings.Cut(k.SharedPrefix, "/"); mounts.ValidateID("user", first) == nil {
		return fmt.Errorf("skills: shared-prefix %q must start with a segment that is no valid ID (e.g. _shared/skills/), so no user's keys can alias it", k.SharedPrefix)
	}
	if !strings.HasPrefix(k.SettingsKey, "{user}/") || strings.Count(k.SettingsKey, "{") != 1 || strings.HasSuffix(k.SettingsKey, "/") || !strings.Contains(k.SettingsKey[len("{user}/"):], "/") {
		return fmt.Errorf("skills: settings-key %q must be {user}/<dir>/<name>, an object outside every mount", k.SettingsKey)
	}
	// Workers must not be able to edit the settings as a file.
	if err := table.Disjoint(path.Dir(k.SettingsKey) + "/"); err != nil {
		return fmt.Errorf("skills: settings-key: %w", err)
	}
	if strings.Contains(m.Template, "{thread}") || strings.Contains(m.Template, "{ticket}") {
		return fmt.Errorf("skills: mount %q must depend on {user} alone: a library and its index are per user", k.Mount)
	}
	if !strings.HasPrefix(k.IndexKey, "{user}/") || strings.Count(k.IndexKey, "{") != 1 || strings.HasSuffix(k.IndexKey, "/") || k.IndexKey == k.SettingsKey {
		return fmt.Errorf("skills: index-key %q must be {user}/<dir>/<name>, an object outside every mount", k.IndexKey)
	}
	if err := table.Disjoint(path.Dir(k.IndexKey) + "/"); err != nil {
		return fmt.Errorf("skills: index-key: %w", err)
	}
	if first, _, _ := strings.Cut(k.SharedIndexKey, "/"); mounts.ValidateID("user", first) == nil || strings.HasPrefix(k.SharedIndexKey, k.SharedPrefix) || strings.HasSuffix(k.SharedIndexKey, "/") {
		return fmt.Errorf("skills: shared-index-key %q must lie outside shared-prefix and start with a segment that is no valid ID", k.SharedIndexKey)
	}
	if err := table.Disjoint(path.Dir(k.SharedIndexKey) + "/"); err != nil {
		return fmt.Errorf("skills: shared-index-key: %w", err)
	}
	return k.validateTeams(table)
}

// validateTeams checks the team keys: {team} one whole segment of each,
// below a first segment that is no valid ID, outside every mount for any
// team ID (checked as if {team} were {user}: any ID), and apart from the
// shared library and from each other.
func (k Keys) validateTeams(table *mounts.Table) error {
	for flag, tmpl := range map[string]string{"team-prefix": k.TeamPrefix, "team-index-key": k.TeamIndexKey, "team-protected-key": k.TeamProtectedKey} {
		dir := tmpl
		if flag != "team-prefix" {
			if strings.HasSuffix(tmpl, "/") {
				return fmt.Errorf("skills: %s %q must name an object", flag, tmpl)
			}
			dir = path.Dir(tmpl) + "/"
		}
		first, _, _ := strings.Cut(tmpl, "/")
		if strings.Count(tmpl, "{team}") != 1 || strings.Count(tmpl, "{") != 1 || !strings.Contains(dir, "/{team}/") || mounts.ValidateID("user", first) == nil {
			return fmt.Errorf("skills: %s %q must hold {team} once as a whole segment, below a first segment that is no valid ID (e.g. _teams/{team}/skills/)", flag, tmpl)
		}
		if err := table.Disjoint(strings.Replace(dir, "{team}", "{user}", 1)); err != nil {
			return fmt.Errorf("skills: %s: %w", flag, err)
		}
	}
	// Rendered for one team, the keys must not meet the shared library's
	// or each other: a team's library must not hold its index, nor the
	// shared library a team's.
	prefix := strings.Replace(k.TeamPrefix, "{team}", "t", 1)
	index := strings.Replace(k.TeamIndexKey, "{team}", "t", 1)
	protected := strings.Replace(k.TeamProtectedKey, "{team}", "t", 1)
	staticFirst, _, _ := strings.Cut(k.TeamPrefix, "{team}")
	first, _, _ := strings.Cut(k.SharedProtectedKey, "/")
	switch {
	case strings.HasPrefix(index, prefix) || strings.HasPrefix(protected, prefix) || index == protected:
		return fmt.Errorf("skills: team-index-key %q and team-protected-key %q must differ and lie outside team-prefix %q", k.TeamIndexKey, k.TeamProtectedKey, k.TeamPrefix)
	case mounts.ValidateID("user", first) == nil || strings.HasSuffix(k.SharedProtectedKey, "/") || strings.HasPrefix(k.SharedProtectedKey, k.SharedPrefix) || strings.HasPrefix(k.SharedProtectedKey, staticFirst) || k.SharedProtectedKey == k.SharedIndexKey:
		return fmt.Errorf("skills: shared-protected-key %q must name an object outside both library prefixes, other than shared-index-key, under a first segment that is no valid ID", k.SharedProtectedKey)
	case strings.HasPrefix(k.SharedPrefix, staticFirst) || strings.HasPrefix(staticFirst, k.SharedPrefix):
		return fmt.Errorf("skills: team-prefix %q and shared-prefix %q must not overlap", k.TeamPrefix, k.SharedPrefix)
	case strings.HasPrefix(k.SharedIndexKey, staticFirst):
		return fmt.Errorf("skills: shared-index-key %q must lie outside team-prefix %q", k.SharedIndexKey, k.TeamPrefix)
	}
	if err := table.Disjoint(path.Dir(k.SharedProtectedKey) + "/"); err != nil {
		return fmt.Errorf("skills: shared-protected-key: %w", err)
	}
	return nil
}

// Apart checks that the versions roots lie apart from the libraries of k:
// the shared root from the shared library, and, rendered for one team, the
// team root from the team's library, index and protected list.
func (r VersionRoots) Apart(k Keys) error {
	if sh := r.Shared; strings.HasPrefix(sh, k.SharedPrefix) || strings.HasPrefix(k.SharedPrefix, sh) {
		return fmt.Errorf("library: shared-versions-prefix %q must lie apart from the shared library %q", sh, k.SharedPrefix)
	}
	team := func(tmpl string) string { return strings.Replace(tmpl, "{team}", "t", 1) }
	root := team(r.Team)
	for flag, key := range map[string]string{"team-prefix": team(k.TeamPrefix), "team-index-key": team(k.TeamIndexKey), "team-protected-key": team(k.TeamProtectedKey)} {
		if strings.HasPrefix(key, root) || strings.HasPrefix(root, key) {
			return fmt.Errorf("library: team-versions-prefix %q must lie apart from --skills.%s", r.Team, flag)
		}
	}
	return nil
}
