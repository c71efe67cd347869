package library_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// TestConfigValidate: the versions roots lie outside every mount and the
// shared library, so no worker can write a version or a label.
func TestConfigValidate(t *testing.T) {
	sk := skills.DefaultConfig()
	for _, tc := range []struct {
		name   string
		tune   func(*library.Config)
		wantOK bool
	}{
		{"defaults", func(*library.Config) {}, true},
		{"under the workspace mount", func(c *library.Config) { c.Roots.User = "{user}/threads/versions/" }, false},
		{"under the skills mount", func(c *library.Config) { c.Roots.User = "{user}/skills/versions/" }, false},
		{"no user", func(c *library.Config) { c.Roots.User = "versions/" }, false},
		{"the user's root", func(c *library.Config) { c.Roots.User = "{user}/" }, false},
		{"no trailing slash", func(c *library.Config) { c.Roots.User = "{user}/versions" }, false},
		{"shared under the shared library", func(c *library.Config) { c.Roots.Shared = "_shared/skills/v/" }, false},
		{"shared under a user's keys", func(c *library.Config) { c.Roots.Shared = "alice/versions/" }, false},
		{"team without {team}", func(c *library.Config) { c.Roots.Team = "_teams/versions/" }, false},
		{"team as a user's", func(c *library.Config) { c.Roots.Team = "{team}/versions/" }, false},
		{"team root is the team's keys", func(c *library.Config) { c.Roots.Team = "_teams/{team}/" }, false},
		{"team under the team library", func(c *library.Config) { c.Roots.Team = "_teams/{team}/skills/v/" }, false},
		{"team holding the team's settings", func(c *library.Config) { c.Roots.Team = "_teams/{team}/settings/" }, false},
		{"team beside its library", func(c *library.Config) { c.Roots.Team = "_teams/{team}/v/" }, true},
		{"team under the shared root", func(c *library.Config) { c.Roots.Team = "_shared/versions/{team}/v/" }, false},
		{"team elsewhere", func(c *library.Config) { c.Roots.Team = "_tv/{team}/versions/" }, true},
		{"no lock wait", func(c *library.Config) { c.LockWait = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := library.DefaultConfig()
			tc.tune(&c)
			if err := c.Validate(mounts.Default(), sk); (err == nil) != tc.wantOK {
				t.Fatalf("Validate = %v, want ok %v", err, tc.wantOK)
			}
		})
	}
	c := library.DefaultConfig()
	if got := c.BlobSpace(layout.LibraryRef{User: "alice"}); got != "alice/versions/blobs/" {
		t.Errorf("alice's blob space = %q", got)
	}
	if got := c.BlobSpace(layout.LibraryRef{Shared: true}); got != "_shared/versions/blobs/" {
		t.Errorf("the shared blob space = %q", got)
	}
	if got := c.BlobSpace(layout.LibraryRef{Team: "legal"}); got != "_teams/legal/versions/blobs/" {
		t.Errorf("team legal's blob space = %q", got)
	}
}

// TestCustomRoots: each library's root follows its flag, a team's with
// the team ID in place of {team}.
func TestCustomRoots(t *testing.T) {
	c := library.DefaultConfig()
	c.Roots = layout.VersionRoots{User: "{user}/.v/", Shared: "_lib/v/", Team: "_t/{team}/.v/"}
	for l, want := range map[layout.LibraryRef]string{
		{User: "alice"}: "alice/.v/blobs/", {Shared: true}: "_lib/v/blobs/", {Team: "legal"}: "_t/legal/.v/blobs/",
	} {
		if got := c.BlobSpace(l); got != want {
			t.Errorf("BlobSpace(%+v) = %q, want %q", l, got, want)
		}
	}
}
