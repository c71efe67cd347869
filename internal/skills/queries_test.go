package skills

// Skills as one call, for tests: the service lists through a Snapshot
// (Page) and the change feed through State.

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Skills returns the summaries of the caller's skills, sorted by path.
// Invalid skills, and SKILL.md files nested too deep to be skills, are
// listed only with IncludeInvalid.
func (c *Catalog) Skills(ctx context.Context, id mounts.Caller, opts skillview.ListOptions) ([]skillview.Skill, error) {
	list, _, err := c.skills(ctx, id, opts)
	return list, err
}
