package skills

import (
	"bytes"
	"context"
	"hash/maphash"
	"log/slog"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// parsed is the result of parsing one SKILL.md head, in the lean form a
// layer holds (leanRaw).
type parsed struct {
	fm       skillmd.Frontmatter
	problems skillmd.Problems
}

// maxReported bounds the SKILL.md versions whose problems were logged: a
// few hundred KiB, outside the held budget.
const maxReported = 4096

// heads parses the SKILL.md heads an index holds and logs their problems,
// once per version (key and ETag) while it is among the last maxReported
// logged. Parsed heads live in the layers built from them (on the held
// budget), and a layer of a newer generation takes those of the version it
// held before.
type heads struct {
	log      *slog.Logger
	seed     maphash.Seed
	reported *lru.Cache[uint64, struct{}]
}

func newHeads(log *slog.Logger) *heads {
	r, _ := lru.New[uint64, struct{}](maxReported)
	return &heads{log: log, seed: maphash.MakeSeed(), reported: r}
}

// firstReport reports whether s's SKILL.md version was not logged before.
func (h *heads) firstReport(s *skillRef) bool {
	var m maphash.Hash
	m.SetSeed(h.seed)
	m.WriteString(s.skillMD.Key)
	m.WriteByte(0)
	m.WriteString(s.skillMD.ETag)
	ok, _ := h.reported.ContainsOrAdd(m.Sum64(), struct{}{})
	return !ok
}

// reportNested logs, once per version, a SKILL.md that lies too deep to be
// served: the library's author expects it to be a skill.
func (h *heads) reportNested(ctx context.Context, s *skillRef) {
	if h.firstReport(s) {
		h.log.WarnContext(ctx, "skill not served: nested too deep", "layer", s.layer, "skill", s.dir, "problem", nestedProblem)
	}
}

// parse parses the head of s.
func (h *heads) parse(ctx context.Context, s *skillRef, head []byte) parsed {
	fm, _, problems := skillmd.ParseSkillMD(head, s.folder)
	fm.Raw = leanRaw(fm.Raw)
	if len(fm.Extra) == 0 {
		fm.Extra = nil
	}
	fm.JSON = bytes.Clone(fm.JSON) // without the encoder's spare capacity
	if !problems.Valid() && h.firstReport(s) {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	return parsed{fm: fm, problems: problems}
}

// leanRaw is what a layer keeps of a frontmatter's Raw fields: only the
// lists inside metadata, which search ranks and nothing else holds. Every
// other field is in the typed fields, Extra and JSON; Raw as decoded takes
// more heap than all of them together. GetSkill parses SKILL.md afresh, so
// its Raw is whole.
func leanRaw(raw map[string]any) map[string]any {
	meta, ok := raw["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	for _, v := range meta {
		if _, isList := v.([]any); isList {
			return map[string]any{"metadata": meta}
		}
	}
	return nil
}
