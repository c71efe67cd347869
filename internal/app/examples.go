package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsvc/skillsvc/examples"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// When the example skill library is copied into the shared library
// (--examples). A first run with no configuration then shows skills, and a
// deployment's shared library gets nothing it did not ask for.
const (
	// ExamplesAuto copies it into a local data directory that is new or
	// empty: the first run of the zero-configuration default.
	ExamplesAuto = "auto"
	// ExamplesIfEmpty copies it whenever the shared library is empty, with
	// either storage (a demo on MinIO).
	ExamplesIfEmpty = "if-empty"
	// ExamplesOff never copies it.
	ExamplesOff = "off"
)

// seedTimeout bounds copying the example library at start-up.
const seedTimeout = time.Minute

// newDataDir reports whether dir does not exist or holds nothing, before
// the local backend creates it: a first run. Anything unreadable counts as
// not new, and opening the backend reports it.
func newDataDir(dir string) bool {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// seedExamples copies the example library into the shared library of b as
// cfg.Examples asks; firstRun says the local data directory was new. Files
// are written only where none exists, so a concurrent start or a file put
// there meanwhile wins.
func seedExamples(ctx context.Context, b objstore.Bucket, cfg Config, firstRun bool, log *slog.Logger) error {
	switch {
	case cfg.Examples == ExamplesAuto && cfg.Storage == "local" && firstRun:
	case cfg.Examples == ExamplesIfEmpty:
	default:
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	prefix := cfg.Skills.SharedPrefix
	page, err := b.List(ctx, objstore.ListOptions{Prefix: prefix, MaxKeys: 1})
	if err != nil {
		return fmt.Errorf("examples: listing the shared library: %w", err)
	}
	if len(page.Objects) > 0 {
		return nil
	}
	lib := examples.Skills()
	files := 0
	err = fs.WalkDir(lib, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(lib, p)
		if err != nil {
			return err
		}
		_, err = b.Put(ctx, prefix+p, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{IfNoneMatch: true})
		switch {
		case errors.Is(err, objstore.ErrPrecondition), errors.Is(err, objstore.ErrConflict):
			return nil // someone else's file, or the same copy by another replica
		case err != nil:
			return fmt.Errorf("examples: writing %s: %w", prefix+p, err)
		}
		files++
		return nil
	})
	if err != nil {
		return err
	}
	where := "s3://" + cfg.S3.Bucket + "/" + prefix
	if cfg.Storage == "local" {
		where = filepath.Join(cfg.DataDir, filepath.FromSlash(prefix))
	}
	// The first lines a newcomer reads: where skills live now.
	log.Info("example skill library copied into the shared library (--examples=off leaves it empty)",
		"shared_library", where, "files", files, "user_library", userLibraryHint(cfg))
	return nil
}

// userLibraryHint says where one user's own skills go.
func userLibraryHint(cfg Config) string {
	m, ok := cfg.Mounts.Lookup(cfg.Skills.Mount)
	if !ok {
		return ""
	}
	if cfg.Storage == "local" {
		return filepath.Join(cfg.DataDir, filepath.FromSlash(m.Template))
	}
	return "s3://" + cfg.S3.Bucket + "/" + m.Template
}
