package skills_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
)

func TestConfigValidate(t *testing.T) {
	rwSkills, err := mounts.Parse("/workspace={user}/threads/{thread}/:rw,/skills={user}/skills/:rw")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		table *mounts.Table
		edit  func(*skills.Config)
		ok    bool
	}{
		{"defaults", mounts.Default(), func(*skills.Config) {}, true},
		{"no such mount", mounts.Default(), func(c *skills.Config) { c.Mount = "/library" }, false},
		{"writable mount", rwSkills, func(*skills.Config) {}, false},
		{"shared prefix a user could own", mounts.Default(), func(c *skills.Config) { c.SharedPrefix = "org/skills/" }, false},
		{"shared prefix a user could own outside the mounts", mounts.Default(), func(c *skills.Config) { c.SharedPrefix = "org/settings/" }, false},
		{"shared prefix without slash", mounts.Default(), func(c *skills.Config) { c.SharedPrefix = "_shared/skills" }, false},
		{"other shared prefix", mounts.Default(), func(c *skills.Config) { c.SharedPrefix = "_org/library/" }, true},
		{"settings inside a mount", mounts.Default(), func(c *skills.Config) { c.SettingsKey = "{user}/threads/settings.json" }, false},
		{"settings not per user", mounts.Default(), func(c *skills.Config) { c.SettingsKey = "settings/skills.json" }, false},
		{"settings beside the mounts", mounts.Default(), func(c *skills.Config) { c.SettingsKey = "{user}/prefs/skills.json" }, true},
		{"team prefix a team ID could make a user's", mounts.Default(), func(c *skills.Config) { c.TeamPrefix = "{team}/skills/" }, false},
		{"team prefix under a user-like segment", mounts.Default(), func(c *skills.Config) { c.TeamPrefix = "teams/{team}/skills/" }, false},
		{"team prefix without {team}", mounts.Default(), func(c *skills.Config) { c.TeamPrefix = "_teams/skills/" }, false},
		{"team prefix with {team} inside a segment", mounts.Default(), func(c *skills.Config) { c.TeamPrefix = "_teams/t-{team}/skills/" }, false},
		{"team prefix inside the shared library", mounts.Default(), func(c *skills.Config) { c.TeamPrefix = "_shared/skills/{team}/" }, false},
		{"team index inside the team library", mounts.Default(), func(c *skills.Config) { c.TeamIndexKey = "_teams/{team}/skills/skills.index" }, false},
		{"team protected key is the team index", mounts.Default(), func(c *skills.Config) { c.TeamProtectedKey = c.TeamIndexKey }, false},
		{"shared protected key inside the shared library", mounts.Default(), func(c *skills.Config) { c.SharedProtectedKey = "_shared/skills/protected.json" }, false},
		{"shared protected key a user could own", mounts.Default(), func(c *skills.Config) { c.SharedProtectedKey = "org/protected.json" }, false},
		{"other team prefix", mounts.Default(), func(c *skills.Config) {
			c.TeamPrefix, c.TeamIndexKey, c.TeamProtectedKey = "_groups/{team}/lib/", "_groups/{team}/idx/skills.index", "_groups/{team}/idx/protected.json"
		}, true},
		{"tiny head", mounts.Default(), func(c *skills.Config) { c.HeadBytes = 10 }, false},
		{"no held budget", mounts.Default(), func(c *skills.Config) { c.MaxHeldBytes = 0 }, false},
		{"deprecated held indexes, ignored", mounts.Default(), func(c *skills.Config) { c.MaxHeldIndexes = 256 }, true},
		{"search tool", mounts.Default(), func(c *skills.Config) { c.SearchTool = "search_skills" }, true},
		{"download tool", mounts.Default(), func(c *skills.Config) { c.DownloadTool = "mcp__files__download" }, true},
		{"search tool that is no name", mounts.Default(), func(c *skills.Config) { c.SearchTool = "search skills" }, false},
		{"download tool that ends a comment", mounts.Default(), func(c *skills.Config) { c.DownloadTool = "x-->" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := skills.DefaultConfig()
			tc.edit(&c)
			if err := c.Validate(tc.table); (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
