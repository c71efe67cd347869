package main

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

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Bounds on what pull unpacks: the server's default --skills.max-export-bytes
// and a skill's file count far above the MCP extension's 512.
const (
	defaultMaxPullBytes = 256 << 20
	maxPullEntries      = 100_000
)

func (a *app) pullCmd() *cobra.Command {
	var version string
	var force bool
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "pull NAME DIR",
		Short: "Download a skill (or one of its versions) into a folder",
		Long: `pull exports the skill NAME (a name or its path, e.g. docs/pdf) and unpacks it into DIR, which
becomes the skill folder: DIR/SKILL.md, DIR/scripts/..., so "skillctl push DIR" publishes it back.
DIR must not exist or be empty, unless --force (which overwrites files, never deletes).

The archive is checked as it is unpacked: no absolute paths or "..", only files and folders (no
links or devices), at most --max-bytes in total. Files keep their executable bit.`,
		Example: `  skillctl pull pdf ./pdf
  skillctl pull pdf ./pdf-prod --version production`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTarget(args[1], force); err != nil {
				return usageErr(err)
			}
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			stream, err := a.skills().ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: args[0], Version: version})
			if err != nil {
				return err
			}
			// Read the first message before touching DIR, so a skill that
			// does not exist leaves nothing behind.
			first, err := stream.Recv()
			if err != nil {
				return err
			}
			bar := a.progress(-1, "pull "+args[0])
			r := &exportReader{recv: stream.Recv, buf: first.GetData(), bar: bar}
			n, files, err := extractSkill(r, args[1], maxBytes)
			if bar != nil {
				bar.Finish()
			}
			if r.err != nil {
				return r.err // the server's status, not what the unpacker made of it
			}
			if err != nil {
				return usageErr(err)
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "pulled %s into %s (%d files, %s)\n", inert(args[0]), inert(args[1]), files, humanBytes(n))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "a version id, unique prefix or label instead of the live copy")
	cmd.Flags().BoolVar(&force, "force", false, "unpack into a folder that is not empty, overwriting files")
	cmd.Flags().Int64Var(&maxBytes, "max-bytes", defaultMaxPullBytes, "refuse an archive unpacking to more than this")
	return cmd
}

// checkTarget refuses a DIR that exists and holds something, unless force.
func checkTarget(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0 && !force:
		return fmt.Errorf("%s is not empty (--force overwrites its files)", dir)
	}
	return nil
}

// exportReader reads the archive bytes of an ExportSkill stream.
type exportReader struct {
	recv func() (*skillsvcv1.ExportSkillResponse, error)
	buf  []byte
	bar  *progressbar.ProgressBar
	err  error // the stream's error, other than its end
}

func (r *exportReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		m, err := r.recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			return 0, err
		}
		r.buf = m.GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if r.bar != nil {
		r.bar.Add(n)
	}
	return n, nil
}

// extractSkill unpacks a tar.gz of "<skill>/<file>" entries into dir, the
// first component dropped. Entries are untrusted: only regular files and
// folders, relative paths without "..", at most maxBytes of content and
// maxPullEntries entries. It returns the bytes and files written.
func extractSkill(r io.Reader, dir string, maxBytes int64) (int64, int, error) {
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
		if entries++; entries > maxPullEntries {
			return total, files, fmt.Errorf("archive: more than %d entries", maxPullEntries)
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
			return total, files, fmt.Errorf("archive: unpacks to more than %d bytes (--max-bytes)", maxBytes)
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
