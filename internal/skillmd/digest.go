package skillmd

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// FileDigest is one file of a skill folder by content and mode.
type FileDigest struct {
	Rel    string // relative to the skill folder, e.g. "scripts/run.py"
	Size   int64
	SHA256 string // 64 lowercase hex digits
	// Mode is the file's mode as served (filemode.Regular or Executable);
	// 0 in a version record written before modes were recorded.
	Mode fs.FileMode `json:",omitempty"`
}

// ManifestDigest is the identity of a skill folder's content: "sha256:" and
// the hex sha256 of its files' relative paths, sizes and digests in path
// order. It does not depend on where the folder lives (library, category),
// so the catalog's manifest of a live skill and the LibraryService version
// holding the same files have the same digest: a version's id. An
// executable file's line ends in "\x00x", so a change of mode alone makes
// another digest (a client's copy cached by digest is not reused with the
// old modes), while a folder without executable files keeps the digest it
// had before modes were recorded.
func ManifestDigest(files []FileDigest) string {
	byRel := func(a, b FileDigest) int { return strings.Compare(a.Rel, b.Rel) }
	sorted := files
	if !slices.IsSortedFunc(files, byRel) { // a listing's are, mostly
		sorted = slices.Clone(files)
		slices.SortFunc(sorted, byRel)
	}
	h := sha256.New()
	var buf [256]byte
	for _, f := range sorted {
		b := append(buf[:0], f.Rel...)
		b = append(b, 0)
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, 0)
		b = append(b, f.SHA256...)
		if f.Mode&0o111 != 0 {
			b = append(b, 0, 'x')
		}
		b = append(b, '\n')
		h.Write(b)
	}
	var sum [sha256.Size]byte
	out := append(buf[:0], "sha256:"...)
	return string(hex.AppendEncode(out, h.Sum(sum[:0])))
}
