package corpus

import (
	"context"
	"fmt"
	"net/http"
)

// ArchiveFile returns the local path of the archive of the source id of l
// (a source or a target source), downloaded into dir (DefaultCacheDir when
// empty) unless it is there with its pinned digest. Tests that need one
// package's files as published (their modes, say) read it; its content is
// never committed.
func ArchiveFile(ctx context.Context, l List, id, dir string) (string, error) {
	if dir == "" {
		dir = DefaultCacheDir()
	}
	for _, s := range append(append([]Source(nil), l.Sources...), l.TargetSources...) {
		if s.ID == id {
			file, _, err := fetch(ctx, http.DefaultClient, dir, s)
			return file, err
		}
	}
	return "", fmt.Errorf("no source %q in the list", id)
}
