package skillview

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"iter"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Manifest lists a skill's files by content, as an OCI image manifest
// lists its blobs by digest and size: a client holding a copy of the skill
// compares them to know what changed. It comes from the layer's index, so
// it costs no storage request.
type Manifest struct {
	// Files are every file of the skill, SKILL.md included, in path order;
	// empty when OverLimits. A file deleted between the listing and its
	// hashing is left out until the next revalidation lists it gone.
	Files []ManifestFile
	// TotalBytes and FileCount describe the skill's files as listed.
	TotalBytes int64
	FileCount  int
	// OverLimits: the skill is over the MCP extension's limits
	// (skillmd.OverLimits), and its files are not hashed.
	OverLimits bool
	// Digest is skillmd.ManifestDigest of Files (paths relative to the
	// skill folder): the id a LibraryService version of the same files
	// has. Empty when OverLimits or a file is not hashed.
	Digest string
}

// ManifestFile is one file of a skill, the digest of its bytes and its mode.
type ManifestFile struct {
	Path string // virtual, e.g. "/skills/docs/pdf/SKILL.md"
	// Size of the bytes hashed, at most skillmd.MaxSkillBytes: 32 bits, so
	// with the mode a file takes what it took without one.
	Size   int32
	Mode   fs.FileMode // as served: filemode.Regular or Executable
	SHA256 string      // 64 lowercase hex digits
}

// ManifestOf describes files (a skill's, in path order) from their layer's
// digests.
func ManifestOf(mount, dir string, files []Entry, x *libindex.Index) *Manifest {
	m := &Manifest{FileCount: len(files)}
	for _, e := range files {
		m.TotalBytes += e.Obj.Size
	}
	// The rule libindex hashed the files by, from the same listing.
	if m.OverLimits = skillmd.OverLimits(m.FileCount, m.TotalBytes); m.OverLimits {
		return m
	}
	// Every file's path and hex digest are parts of one string: a view
	// makes the manifest of each skill it lists.
	n := 0
	for _, e := range files {
		n += len(mount) + 1 + len(e.Rel) + hex.EncodedLen(sha256.Size)
	}
	var text strings.Builder
	text.Grow(n)
	m.Files = make([]ManifestFile, 0, len(files))
	for _, e := range files {
		if dg, ok := x.DigestOf(e.Obj.Key); ok {
			text.WriteString(mount)
			text.WriteByte('/')
			text.WriteString(e.Rel)
			var h [2 * sha256.Size]byte
			hex.Encode(h[:], dg.Sum[:])
			text.Write(h[:])
			m.Files = append(m.Files, ManifestFile{Size: dg.Size, Mode: dg.Mode})
		}
	}
	all, off, i := text.String(), 0, 0
	for _, e := range files {
		if _, ok := x.DigestOf(e.Obj.Key); ok {
			start := off
			p := start + len(mount) + 1 + len(e.Rel)
			off = p + 2*sha256.Size
			m.Files[i].Path, m.Files[i].SHA256 = all[start:p], all[p:off]
			i++
		}
	}
	if len(m.Files) == len(files) {
		fd := make([]skillmd.FileDigest, len(m.Files))
		for i, f := range m.Files {
			fd[i] = skillmd.FileDigest{Rel: strings.TrimPrefix(files[i].Rel, dir+"/"), Size: int64(f.Size), SHA256: f.SHA256, Mode: f.Mode}
		}
		m.Digest = skillmd.ManifestDigest(fd)
	}
	return m
}

// served reports whether s is listed to a caller who did not disable it:
// a skill, valid, not nested too deep.
func (s *Ref) served() bool {
	return !s.Nested && s.Head.Problems.Valid() && s.Note().Valid()
}

// ViewDigest hashes what the library digest says of each served skill of a
// view (in path order): its path, name and description, and its manifest.
// A skill over the limits has no file digests; its files' ETags stand in
// for them, so a change to it changes the digest too.
func ViewDigest(mount string, refs iter.Seq[*Ref]) [sha256.Size]byte {
	h := sha256.New()
	var b []byte
	for s := range refs {
		if !s.served() {
			continue
		}
		b = AppendField(b[:0], mount+"/"+s.Dir)
		b = AppendField(b, s.Name)
		b = AppendField(b, s.Head.Frontmatter.Description)
		m := s.Manifest
		if m == nil {
			m = &Manifest{} // not so: buildLayer made one for every skill
		}
		b = binary.AppendUvarint(b, uint64(m.FileCount))
		b = binary.AppendVarint(b, m.TotalBytes)
		if m.OverLimits {
			b = append(b, 1)
			h.Write(b)
			for _, e := range s.Files {
				b = AppendField(b[:0], e.Rel)
				b = binary.AppendVarint(b, e.Obj.Size)
				h.Write(AppendField(b, e.Obj.ETag))
			}
			continue
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(m.Files)))
		h.Write(b)
		for _, f := range m.Files {
			b = AppendField(b[:0], f.Path)
			b = binary.AppendVarint(b, int64(f.Size))
			b = binary.AppendUvarint(AppendField(b, f.SHA256), uint64(f.Mode))
			h.Write(b)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// AppendField appends s with its length, so no two sequences of fields
// hash alike.
func AppendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// LibraryDigest is "sha256:<hex>" of the caller's library as served: the
// view's digest (computed once per view) and which of its served skills the
// user disabled. It is the same on every page and replica for the same
// content and settings, so a client can tell that nothing changed.
func LibraryDigest(v *View, st settings.User) string {
	var disabled []string
	for _, name := range st.Disabled {
		if s, ok := v.Named(name); ok && s.served() {
			disabled = append(disabled, name)
		}
	}
	slices.Sort(disabled)
	disabled = slices.Compact(disabled)
	vd := v.Digest()
	b := slices.Clone(vd[:])
	for _, name := range disabled {
		b = AppendField(b, name)
	}
	// A scoped view serves another set: a client caching by digest must
	// not take one scope's listing for another's.
	if k := v.ScopeKey(); k != nil {
		b = append(AppendField(b, "scope"), k...)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
