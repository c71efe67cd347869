package skillrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Bounds of the workspace copy, each way.
const (
	MaxWorkspaceBytes = 64 << 20
	MaxWorkspaceFiles = 2000
)

// homeDir is the script's HOME inside the scratch workspace: never written
// back.
const homeDir = ".home"

// pullWorkspace copies the thread's /workspace into dir and returns the
// sha256 of each file copied, by slash path relative to /workspace.
func (r *Runner) pullWorkspace(ctx context.Context, dir string) (map[string]string, error) {
	var files []*skillsvcv1.FileInfo
	var total int64
	pending := []string{"/workspace"}
	for len(pending) > 0 {
		p := pending[0]
		pending = pending[1:]
		token := ""
		for {
			resp, err := r.Files.List(ctx, &skillsvcv1.ListRequest{Path: p, PageToken: token})
			if status.Code(err) == codes.NotFound && p == "/workspace" {
				return map[string]string{}, nil // a new thread: nothing yet
			}
			if err != nil {
				return nil, err
			}
			for _, e := range resp.GetEntries() {
				if e.GetIsDir() {
					pending = append(pending, e.GetPath())
					continue
				}
				files = append(files, e)
				total += e.GetSize()
				if len(files) > MaxWorkspaceFiles || total > MaxWorkspaceBytes {
					return nil, newError(ErrWorkspaceTooLarge, "the thread's /workspace holds more than %d files or %d MiB: remove what the script does not need, or run without the workspace", MaxWorkspaceFiles, MaxWorkspaceBytes>>20)
				}
			}
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
	}
	sums := map[string]string{}
	for _, f := range files {
		rel, ok := strings.CutPrefix(f.GetPath(), "/workspace/")
		if _, _, err := entryPath("x/" + rel); !ok || err != nil {
			return nil, fmt.Errorf("workspace file %q: unexpected path", f.GetPath())
		}
		sum, err := r.download(ctx, f.GetPath(), filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", f.GetPath(), err)
		}
		sums[rel] = sum
	}
	return sums, nil
}

func (r *Runner) download(ctx context.Context, from, to string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", err
	}
	stream, err := r.Files.Download(ctx, &skillsvcv1.DownloadRequest{Path: from})
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	var n int64
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if n += int64(len(m.GetData())); n > MaxWorkspaceBytes {
			return "", newError(ErrWorkspaceTooLarge, "%s is larger than %d MiB", from, MaxWorkspaceBytes>>20)
		}
		if _, err := w.Write(m.GetData()); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

// changedFiles lists the regular files under dir that are new or whose
// content differs from before, .home/ left out, with their total size.
// Links and other special files are never written back.
func changedFiles(dir string, before map[string]string) ([]string, int64, error) {
	var changed []string
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == homeDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		sum, n, err := fileSum(p)
		if err != nil {
			return err
		}
		if before[rel] != sum {
			changed = append(changed, rel)
			total += n
		}
		return nil
	})
	sort.Strings(changed)
	return changed, total, err
}

func fileSum(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// pushWorkspace writes what the script created or changed in dir back to
// the thread's /workspace, and returns the paths written. Over
// MaxWorkspaceBytes in total nothing is written.
func (r *Runner) pushWorkspace(ctx context.Context, dir string, before map[string]string) ([]string, error) {
	changed, total, err := changedFiles(dir, before)
	if err != nil {
		return nil, err
	}
	if total > MaxWorkspaceBytes {
		return nil, newError(ErrWorkspaceTooLarge, "the script wrote %d bytes to its workspace, more than %d MiB: nothing was written back; write less, or smaller files", total, MaxWorkspaceBytes>>20)
	}
	written := []string{}
	for _, rel := range changed {
		dest := "/workspace/" + rel
		if err := r.upload(ctx, filepath.Join(dir, filepath.FromSlash(rel)), dest); err != nil {
			return written, fmt.Errorf("write back %s: %w", dest, err)
		}
		written = append(written, dest)
	}
	return written, nil
}

func (r *Runner) upload(ctx context.Context, from, to string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	stream, err := r.Files.Upload(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: to}}}); err != nil {
		_, err = stream.CloseAndRecv()
		return err
	}
	buf := make([]byte, 256<<10)
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			if err := stream.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Data{Data: append([]byte(nil), buf[:n]...)}}); err != nil {
				_, err = stream.CloseAndRecv()
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}
