package skills

import (
	"bytes"
	"context"
	"io"
	"log/slog"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// parsed is the result of parsing one SKILL.md head.
type parsed struct {
	fm       Frontmatter
	problems Problems
}

type headKey struct{ key, etag string }

// heads reads and parses the frontmatter at the head of each SKILL.md,
// cached by key and ETag: an unchanged SKILL.md is never fetched twice, and
// an invalid one is logged once.
type heads struct {
	bucket    objstore.Bucket
	headBytes int64
	log       *slog.Logger
	cache     *lru.Cache[headKey, parsed]
	reported  *lru.Cache[headKey, struct{}] // nested SKILL.md files already logged
}

func newHeads(bucket objstore.Bucket, cfg Config, log *slog.Logger) *heads {
	c, _ := lru.New[headKey, parsed](max(4*cfg.MaxSkills, 16))
	r, _ := lru.New[headKey, struct{}](max(cfg.MaxSkills, 16))
	return &heads{bucket: bucket, headBytes: int64(cfg.HeadBytes), log: log, cache: c, reported: r}
}

// reportNested logs, once per version, a SKILL.md that lies too deep to be
// served: the library's author expects it to be a skill.
func (h *heads) reportNested(ctx context.Context, s *skillRef) {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if ok, _ := h.reported.ContainsOrAdd(k, struct{}{}); !ok {
		h.log.WarnContext(ctx, "skill not served: nested too deep", "layer", s.layer, "skill", s.dir, "problem", nestedProblem)
	}
}

func (h *heads) parse(ctx context.Context, s *skillRef) (parsed, error) {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if p, ok := h.cache.Get(k); ok {
		return p, nil
	}
	head, err := h.read(ctx, s.skillMD)
	if err != nil {
		return parsed{}, err
	}
	fm, _, problems := ParseSkillMD(head, s.folder)
	p := parsed{fm: fm, problems: problems}
	if !problems.Valid() {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	h.cache.Add(k, p)
	return p, nil
}

// read returns enough of the start of SKILL.md to hold its frontmatter:
// headBytes first, more only when the frontmatter runs past them.
func (h *heads) read(ctx context.Context, o objstore.Object) ([]byte, error) {
	rc, a, err := h.bucket.GetRange(ctx, o.Key, 0, h.headBytes)
	if err != nil {
		return nil, err
	}
	head, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(head)) >= a.Size {
		return head, nil
	}
	if end, opened := frontmatterEnd(bytes.TrimPrefix(head, []byte(bom))); !opened || (end > 0 && end < len(head)) {
		return head, nil
	}
	rc, _, err = h.bucket.GetRange(ctx, o.Key, 0, MaxFrontmatterBytes+int64(len(bom))+1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
