package skills

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// LibraryPrefix is the key prefix of the library l names: where its skill
// folders are stored. The authors' path (internal/library) writes a
// skill's live copy under it.
func (c *Catalog) LibraryPrefix(l layout.LibraryRef) (string, error) {
	ly, err := c.layer(l)
	if err != nil {
		return "", err
	}
	return ly.Prefix, nil
}

// LibrarySkills lists the skill folders of the library l alone, from its
// index (as fresh as the catalog's): a publish refuses a name another
// folder of the same library already uses.
func (c *Catalog) LibrarySkills(ctx context.Context, l layout.LibraryRef) ([]skillview.LibrarySkill, error) {
	built, err := c.libraryLayer(ctx, l)
	if err != nil {
		return nil, err
	}
	out := make([]skillview.LibrarySkill, 0, len(built.All))
	for _, s := range built.All {
		if !s.Nested {
			ls := skillview.LibrarySkill{Dir: s.Dir, Folder: s.Folder(), Category: s.Category(), Name: s.Name}
			if s.SkillMD != nil {
				ls.Added = s.SkillMD.ModTime
			}
			out = append(out, ls)
		}
	}
	return out, nil
}

// Mount is the virtual path of the skills mount ("/skills").
func (c *Catalog) Mount() string { return c.cfg.Mount }

// TextLimits are the bounds reads of skill files keep: the largest file
// returned as text (--skills.max-file-bytes) and the largest RenderSkill
// text (--skills.max-render-bytes). Pinned reads of a version keep them
// too.
func (c *Catalog) TextLimits() (maxFileBytes, maxRenderBytes int64) {
	return c.cfg.MaxFileBytes, c.cfg.MaxRenderBytes
}
