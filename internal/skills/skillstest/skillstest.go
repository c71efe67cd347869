// Package skillstest builds skill libraries for tests: the objects an upload
// of a user's and the shared library would leave in a bucket, and a Library
// over them.
package skillstest

import (
	"io/fs"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// SharedPrefix is the default shared library prefix.
const SharedPrefix = "_shared/skills/"

// SkillMD returns a SKILL.md with the given name and description.
func SkillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body
}

// Builder collects the objects of one or more libraries.
type Builder struct {
	files map[string]string
	modes map[string]fs.FileMode // recorded with the object by Put; absent: none
}

// New returns an empty builder.
func New() *Builder { return &Builder{files: map[string]string{}, modes: map[string]fs.FileMode{}} }

// Layer adds to one library prefix.
type Layer struct {
	b      *Builder
	prefix string
}

// User is the library of user at the default mount template
// ({user}/skills/).
func (b *Builder) User(user string) *Layer { return &Layer{b: b, prefix: user + "/skills/"} }

// Shared is the organization-wide library.
func (b *Builder) Shared() *Layer { return &Layer{b: b, prefix: SharedPrefix} }

// Team is the library of team at the default team prefix
// (_teams/{team}/skills/).
func (b *Builder) Team(team string) *Layer {
	return &Layer{b: b, prefix: "_teams/" + team + "/skills/"}
}

// Skill adds dir/SKILL.md ("category/name" or "name") with a frontmatter of
// name and description; an empty name uses the folder's.
func (l *Layer) Skill(dir, name, description, body string) *Layer {
	if name == "" {
		name = dir[strings.LastIndex(dir, "/")+1:]
	}
	return l.File(dir+"/SKILL.md", SkillMD(name, description, body))
}

// File adds any file at rel inside the library.
func (l *Layer) File(rel, content string) *Layer {
	l.b.files[l.prefix+rel] = content
	return l
}

// FileMode adds a file at rel whose mode Put records with it.
func (l *Layer) FileMode(rel, content string, mode fs.FileMode) *Layer {
	l.b.modes[l.prefix+rel] = mode
	return l.File(rel, content)
}

// Files returns every object by key.
func (b *Builder) Files() map[string]string { return b.files }

// Bucket returns an in-memory bucket holding the objects.
func (b *Builder) Bucket(t testing.TB) *memory.Bucket {
	t.Helper()
	return objstoretest.NewBucket(t, b.files)
}

// Put writes the objects into bucket (a real backend, say).
func (b *Builder) Put(t testing.TB, bucket objstore.Bucket) {
	t.Helper()
	for k, v := range b.files {
		if _, err := bucket.Put(t.Context(), k, strings.NewReader(v), int64(len(v)), objstore.PutOptions{Mode: b.modes[k]}); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
}

// Library returns a library over bucket with the default mounts, every call
// listing afresh (IndexRefresh 0) unless tune says otherwise; opts go to
// skills.New (skills.WithCache, say).
func Library(t testing.TB, bucket objstore.Bucket, tune func(*skills.Config), opts ...skills.Option) *skills.Library {
	t.Helper()
	cfg := skills.DefaultConfig()
	cfg.IndexRefresh = 0
	if tune != nil {
		tune(&cfg)
	}
	lib, err := skills.New(bucket, mounts.Default(), cfg, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// Indexed is a tune for Library: each index is served for d (its refresh
// interval, max staleness and stale-if-error) before it is listed again.
func Indexed(d time.Duration) func(*skills.Config) {
	return func(c *skills.Config) {
		c.IndexRefresh, c.IndexMaxStale, c.StaleIfError = d, d, d
	}
}
