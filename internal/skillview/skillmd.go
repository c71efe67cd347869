package skillview

import (
	"bytes"
	"unsafe"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// SkillMD is a SKILL.md as GetSkill and RenderSkill serve it: read and
// parsed once per version and shared by every caller (read-only). It holds
// one copy of the text, and of the frontmatter the lean form: the decoded
// Raw, Extra and Metadata take more heap than the text itself, and where
// the frontmatter's JSON decodes to them (checked when parsed) each call
// decodes them from it instead (frontmatter).
type SkillMD struct {
	Raw, Body   string // body is the end of raw
	ETag        string // of the bytes read
	Frontmatter skillmd.Frontmatter
	Problems    skillmd.Problems
	// Derived: fm's Raw, Extra and Metadata are left out, and decode from
	// fm.JSON.
	Derived bool
}

// ParseSkillMD parses raw, the SKILL.md of folder at etag.
func ParseSkillMD(raw []byte, etag, folder string) *SkillMD {
	f := &SkillMD{Raw: string(raw), ETag: etag}
	var body int
	f.Frontmatter, body, f.Problems = skillmd.ParseSkillMDBody(raw, folder)
	f.Body = f.Raw[body:]                                // one copy of the text, not two
	f.Frontmatter.JSON = bytes.Clone(f.Frontmatter.JSON) // without the encoder's spare capacity
	if Derivable(f.Frontmatter) {
		f.Frontmatter.Raw, f.Frontmatter.Extra, f.Frontmatter.Metadata, f.Derived = nil, nil, nil, true
	}
	return f
}

// SkillMDOf is raw, the SKILL.md of s read at etag, as parsed. Where its
// frontmatter is the very bytes the layer parsed as s's head (the same
// digest), that parse found it valid and its maps derive from its JSON,
// the parse is the layer's: a parse of a SKILL.md depends on its
// frontmatter alone, once the whole file is UTF-8 text (FuzzParseSkillMD
// checks it). With many users, whose own skills' parses are not all held,
// a GetSkill then decodes no YAML.
func SkillMDOf(raw []byte, etag string, s *Ref) *SkillMD {
	h := s.Head
	if head, body, ok := skillmd.Split(raw); ok && h.Derived && h.Problems.Valid() && HeadSum(raw[:head]) == h.Src {
		f := &SkillMD{Raw: string(raw), ETag: etag, Frontmatter: h.Frontmatter, Problems: h.Problems, Derived: true}
		f.Frontmatter.Raw, f.Frontmatter.Extra, f.Frontmatter.Metadata = nil, nil, nil
		f.Body = f.Raw[body:]
		return f
	}
	return ParseSkillMD(raw, etag, s.Folder())
}

// frontmatter is f's frontmatter as parsed, Raw, Extra and Metadata
// included.
func (f *SkillMD) FullFrontmatter() skillmd.Frontmatter {
	fm := f.Frontmatter
	if f.Derived {
		fm.Raw, fm.Extra, fm.Metadata, _ = RawFromJSON(fm.JSON)
	}
	return fm
}

var skillFileBytes = cache.AllocBytes(int(unsafe.Sizeof(SkillMD{})))

// HeldBytes estimates the heap f keeps alive, and its key on the budget.
func (f *SkillMD) HeldBytes(key string) int64 {
	n := skillFileBytes + 2*cache.AllocBytes(len(key)) + cache.AllocBytes(len(f.Raw)) + cache.AllocBytes(len(f.ETag))
	if shared := len(f.Body) <= len(f.Raw) && unsafe.StringData(f.Body) == unsafe.StringData(f.Raw[len(f.Raw)-len(f.Body):]); !shared {
		n += cache.AllocBytes(len(f.Body))
	}
	return n + ParsedBytes(Head{Frontmatter: f.Frontmatter, Problems: f.Problems})
}
