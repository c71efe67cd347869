// Package skillarchive makes the archive the Agent Skills discovery draft
// (v0.2.0) serves for a skill: a tar.gz with the skill's files at its root,
// the same bytes every time for the same content, so a digest taken once
// names every later copy. It repacks ExportSkill's folder layout, so the
// files, their order and their modes are the export's; and it keeps each
// archive's digest in the shared cache by the skill's manifest digest
// (Digests), so no replica packs the same content twice.
package skillarchive

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// File is one file a repack wrote: its path in the archive (relative to the
// skill folder), size, mode and the sha256 of its bytes in lowercase hex.
type File struct {
	Path   string
	Size   int64
	Mode   int64
	SHA256 string
}

// epoch is every entry's time: the content, not when it was stored,
// decides the bytes.
var epoch = time.Unix(0, 0)

// ErrLayout: the source is not a folder-layout export (an entry that is
// not a regular file, outside one folder, or with an unsafe path).
var ErrLayout = errkind.NewInternal(errkind.Unknown, "skillarchive: not a folder-layout skill export")

// Repack reads src, a tar.gz whose entries are "<folder>/<path>" (ExportSkill's
// folder layout), and writes dst the root layout: each entry "<path>", in
// src's order (the export's, by path), with src's mode and size, time 0,
// no owner names or ids, USTAR headers unless a path needs PAX, and gzip
// at its default level without a name or time. It returns the files it
// wrote. A source without a SKILL.md at its folder's root is refused.
func Repack(dst io.Writer, src io.Reader) ([]File, error) {
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, readErr(err)
	}
	tr := tar.NewReader(zr)
	gz := gzip.NewWriter(dst)
	tw := tar.NewWriter(gz)
	var files []File
	folder, skillMD := "", false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		dir, rel, ok := strings.Cut(hdr.Name, "/")
		if !ok || hdr.Typeflag != tar.TypeReg || !SafePath(rel) || (folder != "" && dir != folder) || dir == "" {
			return nil, fmt.Errorf("%w: entry %.200q", ErrLayout, hdr.Name)
		}
		folder = dir
		skillMD = skillMD || rel == "SKILL.md"
		out := &tar.Header{Name: rel, Mode: hdr.Mode & 0o777, Size: hdr.Size, ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(out); err != nil {
			return nil, err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), tr)
		if err != nil {
			return nil, readErr(err)
		}
		files = append(files, File{Path: rel, Size: n, Mode: out.Mode, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	if !skillMD {
		return nil, fmt.Errorf("%w: no SKILL.md", ErrLayout)
	}
	// The rest of the stream (the gzip trailer) is read too: it checks the
	// source's checksum, and a writer on the other end of a pipe finishes.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, readErr(err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return files, gz.Close()
}

// readErr passes a reader's own error (the export's, through a pipe) as
// it is, and names a malformed stream.
func readErr(err error) error {
	if errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, tar.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", ErrLayout, err)
	}
	return err
}

// SafePath reports whether p may name a file in a root-layout archive: a
// relative, clean, slash-separated path of non-empty parts, none "." or
// "..", without a backslash or NUL (the draft's archive rules, and what
// its clients refuse).
func SafePath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." &&
		!strings.ContainsAny(p, "\\\x00") && !strings.HasPrefix(p, "../") && p != ".."
}
