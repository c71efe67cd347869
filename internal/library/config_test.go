package library_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// TestConfigValidate: the versions roots lie outside every mount and the
// shared library, so no worker can write a version or a label.
func TestConfigValidate(t *testing.T) {
	shared := "_shared/skills/"
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
		{"no lock wait", func(c *library.Config) { c.LockWait = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := library.DefaultConfig()
			tc.tune(&c)
			if err := c.Validate(mounts.Default(), shared); (err == nil) != tc.wantOK {
				t.Fatalf("Validate = %v, want ok %v", err, tc.wantOK)
			}
		})
	}
	c := library.DefaultConfig()
	if got := c.BlobSpace(skills.LibraryRef{User: "alice"}); got != "alice/versions/blobs/" {
		t.Errorf("alice's blob space = %q", got)
	}
	if got := c.BlobSpace(skills.LibraryRef{Shared: true}); got != "_shared/versions/blobs/" {
		t.Errorf("the shared blob space = %q", got)
	}
}

// TestBlobSpaceIsThePins: a library's blob space is the one pinned
// threads copy into (skills.VersionRoots.BlobSpace), with custom roots too.
func TestBlobSpaceIsThePins(t *testing.T) {
	c := library.DefaultConfig()
	c.Roots = skills.VersionRoots{User: "{user}/.v/", Shared: "_lib/v/"}
	for _, tc := range []struct {
		l    skills.LibraryRef
		user string
	}{{skills.LibraryRef{User: "alice"}, "alice"}, {skills.LibraryRef{Shared: true}, ""}} {
		if got, want := c.BlobSpace(tc.l), c.Roots.BlobSpace(tc.user); got != want || want == "" {
			t.Errorf("BlobSpace(%+v) = %q, pins use %q", tc.l, got, want)
		}
	}
}
