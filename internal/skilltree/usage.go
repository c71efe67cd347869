package skilltree

import (
	"context"
	"strings"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// Counting is the tree recording each read of a skill's file through the
// filesystem (vfs Read under the skills mount) as a use of the skill: its
// SKILL.md an activation, any other file a file read (skilluse.File), at
// the surface "vfs" whichever edge the Read came through, unless the
// caller named another (skilluse.WithSurface: MCP's resources/read).
type Counting struct {
	*Tree
	usage skilluse.Recorder
}

var _ vfs.ReadObserver = Counting{}

// Counting is t recording uses in r.
func (t *Tree) Counting(r usage.Recorder) Counting {
	return Counting{Tree: t, usage: skilluse.For(r)}
}

// ReadDone implements vfs.ReadObserver. The view is the one the read
// used, held by the builder: no storage request. A file in no skill (a
// README beside the skills) is no use of one.
func (c Counting) ReadDone(ctx context.Context, id mounts.Caller, rel string) {
	v, err := c.views.Get(ctx, id)
	if err != nil {
		return
	}
	s, ok := skillOf(v, rel)
	if !ok {
		return
	}
	c.usage.File(ctx, skilluse.SurfaceOf(ctx, skilluse.VFS), id, skilluse.OfRef(s), strings.TrimPrefix(rel, s.Dir+"/"))
}

// skillOf is the skill whose folder holds the file at rel: a skill folder
// is <category>/<skill> or <skill>, the deeper first.
func skillOf(v *skillview.View, rel string) (*skillview.Ref, bool) {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 2 {
		return nil, false
	}
	dirs := []string{parts[0]}
	if len(parts) == 3 {
		dirs = []string{parts[0] + "/" + parts[1], parts[0]}
	}
	for _, dir := range dirs {
		if s, ok := v.Skill(dir); ok && s != nil {
			return s, true
		}
	}
	return nil, false
}
