package skillview

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Head is the result of parsing one SKILL.md head, in the lean form a
// layer holds (leanRaw).
type Head struct {
	Frontmatter skillmd.Frontmatter
	Problems    skillmd.Problems
	// Src is the digest of the head parsed (HeadSum), and derived whether
	// the parse's Raw, Extra and Metadata, before leanRaw, are what its
	// JSON decodes to (Derivable): with both, a SKILL.md read whole whose
	// frontmatter is those bytes needs no parse of its own (SkillMDOf).
	Src     uint64
	Derived bool
	// Written is what the MCP skills extension checks of fm as written
	// (skillmd.WrittenOf), read once here rather than per listing.
	Written skillmd.Written
}

// HeadSum is the digest of a SKILL.md's head, its bytes up to the end of
// its frontmatter: a digest, not a process's hash, because parses travel
// between replicas with it. 64 bits of it: two heads alike in them are one
// author's two versions of a skill (a parse is of one user's file), so a
// collision someone made on purpose would serve them their own frontmatter.
func HeadSum(head []byte) uint64 {
	sum := sha256.Sum256(head)
	return binary.BigEndian.Uint64(sum[:8])
}

// Derivable reports whether fm's Raw, Extra and Metadata, as parsed, are
// what its JSON decodes to (RawFromJSON).
func Derivable(fm skillmd.Frontmatter) bool {
	r, e, m, ok := RawFromJSON(fm.JSON)
	return ok && reflect.DeepEqual(r, fm.Raw) && reflect.DeepEqual(e, fm.Extra) && reflect.DeepEqual(m, fm.Metadata)
}

// specFields are the frontmatter fields ParseSkillMD reads into typed
// fields; the rest are Extra. A difference from its rule only costs
// holding Raw and Extra: the catalog's ParseSkillMD compares what it derives.
var specFields = map[string]bool{
	"name": true, "description": true, "license": true, "version": true,
	"compatibility": true, "allowed-tools": true, "metadata": true,
}

// RawFromJSON decodes a frontmatter's JSON as ParseSkillMD decodes its
// Raw, Extra and Metadata fields where they agree: no number or date that
// the YAML reading turns into text, metadata of text values only.
func RawFromJSON(js []byte) (raw, extra map[string]any, meta map[string]string, ok bool) {
	if err := json.Unmarshal(js, &raw); err != nil || raw == nil {
		return nil, nil, nil, false
	}
	extra = map[string]any{}
	for k, v := range raw {
		if !specFields[k] {
			extra[k] = v
		}
	}
	if m, isMap := raw["metadata"].(map[string]any); isMap {
		meta = make(map[string]string, len(m))
		for k, v := range m {
			s, isText := v.(string)
			if !isText {
				return nil, nil, nil, false
			}
			meta[k] = s
		}
	}
	return raw, extra, meta, true
}

// Location is the virtual path of the SKILL.md of the skill at path.
func Location(path string) string { return path + "/SKILL.md" }

// A parse in the shared cache is a flags byte (headDerived), the digest
// of the head parsed, then the parse as skillmd encodes it.
const (
	headDerived = 1 << iota
)

// EncodeHead is p as the shared cache holds it; false: p is not shared
// (the codec refuses a folder name that is no UTF-8).
func EncodeHead(p Head) ([]byte, bool) {
	b := make([]byte, 1, 1+8+256)
	if p.Derived {
		b[0] |= headDerived
	}
	b = binary.BigEndian.AppendUint64(b, p.Src)
	b, err := skillmd.EncodeParsed(b, p.Frontmatter, p.Problems)
	return b, err == nil
}

// DecodeHead is EncodeHead's inverse.
func DecodeHead(b []byte) (Head, error) {
	var p Head
	if len(b) < 1+8 || b[0]&^headDerived != 0 {
		return p, errors.New("skills: a cached parse lacks its flags and digest")
	}
	p.Derived = b[0]&headDerived != 0
	p.Src = binary.BigEndian.Uint64(b[1:])
	var err error
	p.Frontmatter, p.Problems, err = skillmd.DecodeParsed(b[1+8:])
	if err == nil {
		p.Written = skillmd.WrittenOf(p.Frontmatter.JSON)
	}
	return p, err
}
