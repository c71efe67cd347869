package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Bounds on what the list may make Load download. The largest package the
// corpus uses is under 100 MB; all of them together about 1.3 GB.
const (
	MaxArchiveBytes      = 160 << 20
	DefaultMaxTotalBytes = 2 << 30
)

// retryDelay is the pause before the one retry of a failed download.
var retryDelay = 2 * time.Second

// ErrDigest is returned for an archive whose bytes are not the pinned ones.
var ErrDigest = errors.New("archive does not match its pinned sha256 and size")

// CacheEnv overrides DefaultCacheDir.
const CacheEnv = "SKILLSVC_SELECTION_CACHE"

// DefaultCacheDir is where archives are kept between runs: $CacheEnv, else
// skillsvc/selection-corpus under the user's cache directory, else
// .tools/selection-corpus (ignored by git).
func DefaultCacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "skillsvc", "selection-corpus")
	}
	return filepath.Join(".tools", "selection-corpus")
}

// cached is where s's archive is kept: named by its digest, so a new pin
// never reads an old download.
func cached(dir string, s Source) string {
	ext := ".tgz"
	if archiveKind(s.URL) == "zip" {
		ext = ".zip"
	}
	return filepath.Join(dir, s.SHA256+ext)
}

// fetch returns the path of s's archive in dir, downloading it when it is
// not there with the pinned digest; a failed download is tried once more.
// It reports the bytes it downloaded.
func fetch(ctx context.Context, client *http.Client, dir string, s Source) (string, int64, error) {
	file := cached(dir, s)
	if err := verify(file, s); err == nil {
		return file, 0, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	var err error
	for attempt := range 2 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", 0, ctx.Err()
			case <-time.After(retryDelay):
			}
		}
		if err = download(ctx, client, file, s); err == nil || errors.Is(err, ErrDigest) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s %s@%s from %s: %w", s.Ecosystem, s.Name, s.Version, s.URL, err)
	}
	return file, s.Size, nil
}

func download(ctx context.Context, client *http.Client, file string, s Source) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	if resp.ContentLength > s.Size {
		return fmt.Errorf("%w: %d bytes, pinned %d", ErrDigest, resp.ContentLength, s.Size)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, s.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != s.Size || got != s.SHA256 {
		return fmt.Errorf("%w: %d bytes with sha256 %s, pinned %d bytes with %s", ErrDigest, n, got, s.Size, s.SHA256)
	}
	return os.Rename(tmp.Name(), file)
}

// verify checks that file holds s's pinned bytes.
func verify(file string, s Source) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, s.Size+1))
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != s.Size || got != s.SHA256 {
		return fmt.Errorf("%s: %w: %d bytes with sha256 %s, pinned %d bytes with %s", file, ErrDigest, n, got, s.Size, s.SHA256)
	}
	return nil
}

// Fetch returns the path of s's archive in dir ("" = DefaultCacheDir()),
// downloading it once and verifying its pinned digest: for tests that need
// a pinned package's files (the public skills) without committing them.
func Fetch(ctx context.Context, dir string, s Source) (string, error) {
	if dir == "" {
		dir = DefaultCacheDir()
	}
	file, _, err := fetch(ctx, &http.Client{Timeout: 10 * time.Minute}, dir, s)
	return file, err
}

// ArchiveKind is how an archive at url is read: "tgz" (npm tarballs,
// sdists), "zip" (wheels) or "" (neither).
func ArchiveKind(url string) string { return archiveKind(url) }
