package corpus

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Bounds on reading one archive: its expanded bytes and its entries, so a
// hostile or broken archive fails instead of filling the machine.
const (
	maxExpandedBytes = 2 << 30
	maxEntries       = 400_000
	// MaxSkillBytes cuts each SKILL.md: the library's own bound on one.
	MaxSkillBytes = 64 << 10
	// maxLicenseBytes is what a folder's licence file is read of to tell a
	// proprietary one.
	maxLicenseBytes = 16 << 10
	// maxFiles bounds the other file names kept per skill.
	maxFiles = 200
)

// contents is what Load reads of one archive.
type contents struct {
	skills   map[string][]byte // SKILL.md path -> text, cut at MaxSkillBytes
	cut      map[string]bool   // SKILL.md paths that were longer
	licenses map[string][]byte // folder -> its licence file's head
	names    []string          // every regular file's path, sorted
}

// wanted reports whether the entry at name is read: a SKILL.md matched by
// globs or named in extra.
type wanted func(name string) bool

// readArchive reads the archive at file, of kind "tgz" or "zip".
func readArchive(file, kind string, want wanted) (*contents, error) {
	c := &contents{skills: map[string][]byte{}, cut: map[string]bool{}, licenses: map[string][]byte{}}
	var err error
	switch kind {
	case "tgz":
		err = c.readTar(file, want)
	case "zip":
		err = c.readZip(file, want)
	default:
		err = fmt.Errorf("unknown archive kind %q", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	sort.Strings(c.names)
	return c, nil
}

// add records one regular file of the archive and reads it when it is a
// wanted SKILL.md or a licence file.
func (c *contents) add(name string, open func() (io.ReadCloser, error), want wanted) error {
	name = strings.TrimPrefix(name, "./")
	if name == "" || strings.HasSuffix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "../") {
		return nil
	}
	if len(c.names) >= maxEntries {
		return fmt.Errorf("more than %d files", maxEntries)
	}
	c.names = append(c.names, name)
	limit := 0
	switch {
	case path.Base(name) == "SKILL.md" && want(name):
		limit = MaxSkillBytes
	case isLicense(path.Base(name)):
		limit = maxLicenseBytes
	default:
		return nil
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > limit {
		data = data[:limit]
		if limit == MaxSkillBytes {
			c.cut[name] = true
		}
	}
	if limit == MaxSkillBytes {
		c.skills[name] = data
	} else {
		c.licenses[path.Dir(name)] = data
	}
	return nil
}

func isLicense(base string) bool {
	b := strings.ToUpper(base)
	return strings.HasPrefix(b, "LICENSE") || strings.HasPrefix(b, "LICENCE") || strings.HasPrefix(b, "COPYING")
}

func (c *contents) readTar(file string, want wanted) error {
	return walkArchive(file, "tgz", func(name string, _ fs.FileMode, open func() (io.ReadCloser, error)) error {
		return c.add(name, open, want)
	})
}

func (c *contents) readZip(file string, want wanted) error {
	return walkArchive(file, "zip", func(name string, _ fs.FileMode, open func() (io.ReadCloser, error)) error {
		return c.add(name, open, want)
	})
}

// walkArchive calls fn for each regular file of the archive at file, of
// kind "tgz" or "zip", in archive order; a tar is read at most
// maxExpandedBytes far.
func walkArchive(file, kind string, fn func(name string, mode fs.FileMode, open func() (io.ReadCloser, error)) error) error {
	if kind == "zip" {
		zr, err := zip.OpenReader(file)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if !f.Mode().IsRegular() {
				continue
			}
			if err := fn(f.Name, f.Mode(), f.Open); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	lr := &io.LimitedReader{R: zr, N: maxExpandedBytes + 1}
	tr := tar.NewReader(lr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if lr.N <= 0 {
			return fmt.Errorf("expands to more than %d bytes", int64(maxExpandedBytes))
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(h.Name, h.FileInfo().Mode(), func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }); err != nil {
			return err
		}
	}
}

// filesIn returns the other files of the folder dir (paths relative to
// it), sorted, at most maxFiles.
func (c *contents) filesIn(dir string) []string {
	prefix := dir + "/"
	var out []string
	for i := sort.SearchStrings(c.names, prefix); i < len(c.names) && strings.HasPrefix(c.names[i], prefix); i++ {
		rel := c.names[i][len(prefix):]
		if rel == "SKILL.md" {
			continue
		}
		if len(out) == maxFiles {
			break
		}
		out = append(out, rel)
	}
	return out
}

// proprietary reports whether a licence text reserves all rights without
// granting any: Anthropic's licence of its document skills is the case met.
func proprietary(license []byte) bool {
	t := strings.ToLower(string(license))
	if !strings.Contains(t, "all rights reserved") && !strings.Contains(t, "proprietary") {
		return false
	}
	for _, grant := range []string{"permission is hereby granted", "redistribution and use", "apache license", "licensed under", "permission to use, copy"} {
		if strings.Contains(t, grant) {
			return false
		}
	}
	return true
}
