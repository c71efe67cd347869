package skillview

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// parsed is the result of parsing one SKILL.md head, in the lean form a
// layer holds (leanRaw).
type Head struct {
	Frontmatter skillmd.Frontmatter
	Problems    skillmd.Problems
	// src is the digest of the head parsed (headSum), and derived whether
	// the parse's Raw, Extra and Metadata, before leanRaw, are what its
	// JSON decodes to (derivable): with both, a SKILL.md read whole whose
	// frontmatter is those bytes needs no parse of its own (fileOf).
	Src     uint64
	Derived bool
	// written is what the MCP skills extension checks of fm as written
	// (skillmd.WrittenOf), read once here rather than per listing.
	Written skillmd.Written
}

// headSum is the digest of a SKILL.md's head, its bytes up to the end of
// its frontmatter: a digest, not a process's hash, because parses travel
// between replicas with it. 64 bits of it: two heads alike in them are one
// author's two versions of a skill (a parse is of one user's file), so a
// collision someone made on purpose would serve them their own frontmatter.
func HeadSum(head []byte) uint64 {
	sum := sha256.Sum256(head)
	return binary.BigEndian.Uint64(sum[:8])
}
