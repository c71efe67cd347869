package mcpserver

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// WithEntryMeta adds _meta to skills/get entries (get) and skills/list
// entries (list, one per skill of the page): provenance under our own
// prefix (internal/provenance). A lookup that fails leaves the entries
// without it.
func WithEntryMeta(get func(ctx context.Context, id mounts.Caller, sk *skillview.Skill) (map[string]any, error),
	list func(ctx context.Context, id mounts.Caller, skills []skillview.Skill) ([]map[string]any, error)) Option {
	return func(h *Handler) { h.entryMeta, h.pageMeta = get, list }
}

// getMeta is sk's skills/get entry's _meta.
func (s *identityServer) getMeta(ctx context.Context, sk *skillview.Skill) map[string]any {
	id, err := callerOf(ctx)
	if err != nil || s.h.entryMeta == nil {
		return nil
	}
	m, err := s.h.entryMeta(ctx, id, sk)
	if err != nil {
		s.h.log.Warn("mcp: provenance lookup failed", "skill", sk.Name, "err", err)
	}
	return m
}

// pageMeta adds a skills/list page's _meta to its entries (aligned with
// skills).
func (s *identityServer) pageMeta(ctx context.Context, skills []skillview.Skill, entries []*skillEntry) {
	id, err := callerOf(ctx)
	if err != nil || s.h.pageMeta == nil {
		return
	}
	metas, err := s.h.pageMeta(ctx, id, skills)
	if err != nil {
		s.h.log.Warn("mcp: listing provenance lookup failed", "err", err)
		return
	}
	for i := range min(len(metas), len(entries)) {
		entries[i].Meta = metas[i]
	}
}
