package skills

import (
	"context"
	"log/slog"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// parsed is the result of parsing one SKILL.md head.
type parsed struct {
	fm       skillmd.Frontmatter
	problems skillmd.Problems
}

type headKey struct{ key, etag string }

// heads parses the SKILL.md heads an index holds. A version of a SKILL.md
// (key and ETag) never changes, so parsed results stay in process, and an
// invalid skill is logged once per replica.
type heads struct {
	log      *slog.Logger
	parsed   *lru.Cache[headKey, parsed]
	reported *lru.Cache[headKey, struct{}] // nested SKILL.md files already logged
}

func newHeads(cfg Config, log *slog.Logger) *heads {
	p, _ := lru.New[headKey, parsed](max(4*cfg.MaxSkills, 16))
	r, _ := lru.New[headKey, struct{}](max(cfg.MaxSkills, 16))
	return &heads{log: log, parsed: p, reported: r}
}

// reportNested logs, once per version, a SKILL.md that lies too deep to be
// served: the library's author expects it to be a skill.
func (h *heads) reportNested(ctx context.Context, s *skillRef) {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if ok, _ := h.reported.ContainsOrAdd(k, struct{}{}); !ok {
		h.log.WarnContext(ctx, "skill not served: nested too deep", "layer", s.layer, "skill", s.dir, "problem", nestedProblem)
	}
}

// parse returns the parsed head of s, parsing it once per version.
func (h *heads) parse(ctx context.Context, s *skillRef, head []byte) parsed {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if p, ok := h.parsed.Get(k); ok {
		return p
	}
	fm, _, problems := skillmd.ParseSkillMD(head, s.folder)
	p := parsed{fm: fm, problems: problems}
	if !problems.Valid() {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	h.parsed.Add(k, p)
	return p
}
