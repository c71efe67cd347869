package skills

// The catalog's queries as one call each: the MCP edge asks them directly
// (it encodes its own JSON); the gRPC handlers ask a Snapshot instead, whose
// keys name the replies they keep encoded (internal/replies).

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Page returns pageSize skills (0 means the configured default) after the
// position in token, which only continues a listing with the same options.
func (c *Catalog) Page(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, pageSize int32, token string) (skillview.Page, error) {
	q, err := c.pageQuery(opts, pageSize, token)
	if err != nil {
		return skillview.Page{}, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return skillview.Page{}, err
	}
	return c.page(s, q), nil
}

// Prompt renders the caller's listed skills (of one category when
// opts.FilterCategory) as a system-prompt block: with f.Query, those most
// relevant to it, best first, near-duplicates collapsed; without, the
// caller's own skills, then its teams', then the organization's.
func (c *Catalog) Prompt(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, f skillmd.FormatOptions) (skillview.Block, error) {
	f, err := c.formatOptions(f)
	if err != nil {
		return skillview.Block{}, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return skillview.Block{}, err
	}
	return c.prompt(ctx, s, opts, f)
}

// Search ranks the caller's listed skills against a task description over
// what each skill says (search.Search over the view's layers: the user's
// own, the teams', the organization's, nearer first at equal relevance),
// near-duplicates collapsed into one hit that names its alternates.
func (c *Catalog) Search(ctx context.Context, id mounts.Caller, opts skillview.SearchOptions) (skillview.Results, error) {
	opts, err := c.searchOptions(opts)
	if err != nil {
		return skillview.Results{}, err
	}
	s, err := c.snapshot(ctx, id)
	if err != nil {
		return skillview.Results{}, err
	}
	return c.search(ctx, s, opts)
}
