package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// WithEntryMeta adds _meta to skills/get entries (get) and skills/list
// entries (list, one per skill of the page), and to search_skills results
// (list, one per hit): provenance under our own prefix
// (internal/provenance). A lookup that fails leaves them without it.
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

// searchMeta is a search_skills result's _meta: for each key of the hits'
// entry _meta (as skills/list would give them), the hits' values by skill
// URI (skill://<path>/SKILL.md, the entry's uri). The result is text for
// the model, one line per hit; a host matches the lines' skills to the
// URIs, which the extension's hosts already hold from skills/list.
func (s *identityServer) searchMeta(ctx context.Context, hits []skillview.Scored) mcp.Meta {
	id, err := callerOf(ctx)
	if err != nil || s.h.pageMeta == nil || len(hits) == 0 {
		return nil
	}
	skills := make([]skillview.Skill, len(hits))
	for i := range hits {
		skills[i] = hits[i].Skill
	}
	metas, err := s.h.pageMeta(ctx, id, skills)
	if err != nil {
		s.h.log.Warn("mcp: search provenance lookup failed", "err", err)
		return nil
	}
	out := mcp.Meta{}
	for i, m := range metas[:min(len(metas), len(skills))] {
		uri := s.uriOf(skills[i].Path + "/" + skillFileName)
		for k, v := range m {
			byURI, _ := out[k].(map[string]any)
			if byURI == nil {
				byURI = map[string]any{}
				out[k] = byURI
			}
			byURI[uri] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
