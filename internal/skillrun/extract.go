package skillrun

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// MaxExportEntries bounds the entries of an export archive: far above the
// MCP skills extension's 512 files.
const MaxExportEntries = 100_000

// ExportReader reads the archive bytes of an ExportSkill stream.
type ExportReader struct {
	Recv   func() (*skillsvcv1.ExportSkillResponse, error)
	Buf    []byte    // bytes received and not read yet (the first message's)
	OnRead func(int) // called with each read's size (a progress bar); may be nil
	// Err is the stream's error, other than its end: the server's status,
	// not what the unpacker made of a cut archive.
	Err error
}

func (r *ExportReader) Read(p []byte) (int, error) {
	for len(r.Buf) == 0 {
		m, err := r.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.Err = err
			}
			return 0, err
		}
		r.Buf = m.GetData()
	}
	n := copy(p, r.Buf)
	r.Buf = r.Buf[n:]
	if r.OnRead != nil {
		r.OnRead(n)
	}
	return n, nil
}

// ArchiveTooLargeError is ExtractSkill's error for an archive unpacking to
// more than its maxBytes; a caller whose limit is a flag names the flag.
type ArchiveTooLargeError struct{ Max int64 }

func (e *ArchiveTooLargeError) Error() string {
	return fmt.Sprintf("archive: unpacks to more than %d bytes", e.Max)
}

// ExtractSkill unpacks a tar.gz of "<skill>/<file>" entries into dir, the
// first component dropped. Entries are untrusted: only regular files and
// folders, relative paths without "..", at most maxBytes of content and
// MaxExportEntries entries. A file is 0755 when the archive gives it an
// executable bit, else 0644. It returns the bytes and files written.
func ExtractSkill(r io.Reader, dir string, maxBytes int64) (int64, int, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, 0, fmt.Errorf("archive: %w", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	files, entries := 0, 0
	root := ""
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, files, fmt.Errorf("archive: %w", err)
		}
		if entries++; entries > MaxExportEntries {
			return total, files, fmt.Errorf("archive: more than %d entries", MaxExportEntries)
		}
		top, rel, err := entryPath(h.Name)
		if err != nil {
			return total, files, err
		}
		if root == "" {
			root = top
		} else if top != root {
			return total, files, fmt.Errorf("archive: entry %q is outside the skill folder %q", h.Name, root)
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return total, files, err
			}
			continue
		case tar.TypeReg:
		default:
			return total, files, fmt.Errorf("archive: entry %q is not a file or folder", h.Name)
		}
		if rel == "" {
			return total, files, fmt.Errorf("archive: file entry %q has no name inside the skill folder", h.Name)
		}
		if h.Size < 0 || total+h.Size > maxBytes {
			return total, files, &ArchiveTooLargeError{maxBytes}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return total, files, err
		}
		mode := fs.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		n, err := writeFile(target, io.LimitReader(tr, h.Size), mode)
		total += n
		if err != nil {
			return total, files, err
		}
		files++
	}
	if root == "" {
		return 0, 0, errors.New("archive: empty")
	}
	return total, files, nil
}

// entryPath splits an entry name into the skill folder and the path inside
// it, refusing absolute names, ".." and anything not canonical.
func entryPath(name string) (top, rel string, err error) {
	clean := strings.TrimSuffix(name, "/")
	if clean == "" || strings.HasPrefix(clean, "/") || strings.Contains(clean, "\\") || path.Clean(clean) != clean {
		return "", "", fmt.Errorf("archive: unsafe entry name %q", name)
	}
	for _, part := range strings.Split(clean, "/") {
		if part == ".." || part == "." {
			return "", "", fmt.Errorf("archive: unsafe entry name %q", name)
		}
	}
	top, rel, _ = strings.Cut(clean, "/")
	return top, rel, nil
}

func writeFile(target string, r io.Reader, mode fs.FileMode) (int64, error) {
	// An existing symlink at target must not redirect the write.
	if st, err := os.Lstat(target); err == nil && !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s exists and is not a regular file", target)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(target, mode)
	}
	return n, err
}
