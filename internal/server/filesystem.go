package server

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/types/known/timestamppb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// Filesystem serves skillsvc.v1.FilesystemService from a vfs.FS.
type Filesystem struct {
	skillsvcv1.UnimplementedFilesystemServiceServer
	fs        *vfs.FS
	chunkSize int
}

// NewFilesystem returns the service; chunkSize is the Download message size.
func NewFilesystem(fs *vfs.FS, chunkSize int) *Filesystem {
	return &Filesystem{fs: fs, chunkSize: chunkSize}
}

// identity is the caller authentication validated (auth.Check).
func identity(ctx context.Context) (mounts.Caller, error) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return id, fmt.Errorf("%w: no identity", auth.ErrUnauthenticated)
	}
	return id, nil
}

// scopedIdentity is identity viewing the scope a request field names ("":
// the one the headers or token chose), which a token's scope forbids
// (auth.Scoped).
func scopedIdentity(ctx context.Context, scope string) (mounts.Caller, error) {
	id, err := identity(ctx)
	if err != nil {
		return id, err
	}
	return auth.Scoped(ctx, id, scope)
}

func requirePath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: path is required", errkind.InvalidArgument)
	}
	return nil
}

func toProto(i vfs.Info) *skillsvcv1.FileInfo {
	fi := &skillsvcv1.FileInfo{Path: i.Path, Name: i.Name, IsDir: i.IsDir, Size: i.Size, Etag: i.ETag}
	if !i.ModTime.IsZero() {
		fi.Modified = timestamppb.New(i.ModTime)
	}
	return fi
}

// List implements FilesystemService.
func (s *Filesystem) List(ctx context.Context, req *skillsvcv1.ListRequest) (*skillsvcv1.ListResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	// vfs.List checks page_size only after resolving the path, and not at
	// all for the root listing, so a negative one is refused here first.
	if req.GetPageSize() < 0 {
		return nil, fmt.Errorf("%w: page_size must not be negative", errkind.InvalidArgument)
	}
	res, err := s.fs.List(ctx, id, req.GetPath(), int(req.GetPageSize()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.ListResponse{NextPageToken: res.NextPageToken}
	for _, e := range res.Entries {
		out.Entries = append(out.Entries, toProto(e))
	}
	return out, nil
}

// Stat implements FilesystemService.
func (s *Filesystem) Stat(ctx context.Context, req *skillsvcv1.StatRequest) (*skillsvcv1.StatResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	info, err := s.fs.Stat(ctx, id, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.StatResponse{Info: toProto(info)}, nil
}

// Read implements FilesystemService.
func (s *Filesystem) Read(ctx context.Context, req *skillsvcv1.ReadRequest) (*skillsvcv1.ReadResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	res, err := s.fs.Read(ctx, id, req.GetPath(), req.GetOffset(), req.GetLimit(), req.GetLineNumbers())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.ReadResponse{
		Path: res.Path, Content: res.Content, TotalLines: res.TotalLines,
		NextOffset: res.NextOffset, Etag: res.ETag, EndsWithNewline: res.EndsWithNewline,
	}, nil
}

// Download implements FilesystemService.
func (s *Filesystem) Download(req *skillsvcv1.DownloadRequest, stream skillsvcv1.FilesystemService_DownloadServer) error {
	ctx := stream.Context()
	id, err := identity(ctx)
	if err != nil {
		return err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return err
	}
	rc, info, err := s.fs.Download(ctx, id, req.GetPath(), req.GetOffset(), req.GetLimit())
	if err != nil {
		return err
	}
	defer rc.Close()
	buf := make([]byte, s.chunkSize)
	first := true
	for {
		n, rerr := io.ReadFull(rc, buf)
		if n > 0 || first {
			msg := &skillsvcv1.DownloadResponse{Data: buf[:n]}
			if first {
				msg.Info = toProto(info)
				first = false
			}
			if err := stream.Send(msg); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// Upload implements FilesystemService.
func (s *Filesystem) Upload(stream skillsvcv1.FilesystemService_UploadServer) error {
	ctx := stream.Context()
	id, err := identity(ctx)
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: upload sent no header", errkind.InvalidArgument)
		}
		return err
	}
	h := first.GetHeader()
	if h == nil {
		return fmt.Errorf("%w: the first upload message must be a header", errkind.InvalidArgument)
	}
	if err := requirePath(h.GetPath()); err != nil {
		return err
	}
	info, err := s.fs.Upload(ctx, id, h.GetPath(), &uploadReader{stream: stream},
		vfs.WriteOptions{IfMatch: h.GetIfMatch(), MustNotExist: h.GetMustNotExist()})
	if err != nil {
		drainUpload(stream)
		return err
	}
	return stream.SendAndClose(&skillsvcv1.UploadResponse{Info: toProto(info)})
}

// drainLimit bounds what a refused upload reads of the rest of its stream.
const drainLimit = 4 << 20

// drainUpload reads what the client of a refused upload is still sending,
// up to drainLimit, before the refusal is answered: grpc-python's asyncio
// client reports a write made after the call's status as INTERNAL ("Internal
// error from Core") in place of that status (grpc/grpc#36066), so a small
// upload to a read-only path would not learn why it failed.
func drainUpload(stream skillsvcv1.FilesystemService_UploadServer) {
	for n := 0; n < drainLimit; {
		msg, err := stream.Recv()
		if err != nil {
			return
		}
		n += max(len(msg.GetData()), 1)
	}
}

// uploadReader reads the data messages that follow the header.
type uploadReader struct {
	stream skillsvcv1.FilesystemService_UploadServer
	buf    []byte
}

func (r *uploadReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		msg, err := r.stream.Recv()
		if err != nil {
			return 0, err // io.EOF ends the upload
		}
		if msg.GetHeader() != nil {
			return 0, fmt.Errorf("%w: a second upload header", errkind.InvalidArgument)
		}
		r.buf = msg.GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Write implements FilesystemService.
func (s *Filesystem) Write(ctx context.Context, req *skillsvcv1.WriteRequest) (*skillsvcv1.WriteResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	info, err := s.fs.Write(ctx, id, req.GetPath(), req.GetContent(),
		vfs.WriteOptions{IfMatch: req.GetIfMatch(), MustNotExist: req.GetMustNotExist()})
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.WriteResponse{Info: toProto(info)}, nil
}

// Edit implements FilesystemService.
func (s *Filesystem) Edit(ctx context.Context, req *skillsvcv1.EditRequest) (*skillsvcv1.EditResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	res, err := s.fs.Edit(ctx, id, req.GetPath(), req.GetOldString(), req.GetNewString(), req.GetReplaceAll())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.EditResponse{Occurrences: res.Occurrences, Info: toProto(res.Info)}, nil
}

// Delete implements FilesystemService.
func (s *Filesystem) Delete(ctx context.Context, req *skillsvcv1.DeleteRequest) (*skillsvcv1.DeleteResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePath(req.GetPath()); err != nil {
		return nil, err
	}
	n, err := s.fs.Delete(ctx, id, req.GetPath(), req.GetRecursive())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.DeleteResponse{Deleted: n}, nil
}

// Glob implements FilesystemService.
func (s *Filesystem) Glob(ctx context.Context, req *skillsvcv1.GlobRequest) (*skillsvcv1.GlobResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	hidden, err := globHidden(req.GetHidden())
	if err != nil {
		return nil, err
	}
	res, err := s.fs.Glob(ctx, id, req.GetPath(), vfs.GlobOptions{
		Pattern: req.GetPattern(), MaxResults: int(req.GetMaxResults()),
		Hidden: hidden, BaseName: req.GetMatchBaseName(),
	})
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.GlobResponse{Truncated: res.Truncated}
	for _, m := range res.Matches {
		out.Matches = append(out.Matches, toProto(m))
	}
	return out, nil
}

// globHidden maps the request's hidden-entry mode; unset is the server
// default, include.
func globHidden(h skillsvcv1.GlobHidden) (vfs.Hidden, error) {
	switch h {
	case skillsvcv1.GlobHidden_GLOB_HIDDEN_UNSPECIFIED, skillsvcv1.GlobHidden_GLOB_HIDDEN_INCLUDE:
		return vfs.HiddenInclude, nil
	case skillsvcv1.GlobHidden_GLOB_HIDDEN_EXPLICIT:
		return vfs.HiddenExplicit, nil
	}
	return 0, fmt.Errorf("%w: unknown hidden %d", errkind.InvalidArgument, h)
}

// Grep implements FilesystemService.
func (s *Filesystem) Grep(ctx context.Context, req *skillsvcv1.GrepRequest) (*skillsvcv1.GrepResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.fs.Grep(ctx, id, req.GetPath(), vfs.GrepOptions{
		Pattern: req.GetPattern(), Glob: req.GetGlob(), Regex: req.GetRegex(),
		CaseInsensitive: req.GetCaseInsensitive(), MaxMatches: int(req.GetMaxMatches()),
	})
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.GrepResponse{Truncated: res.Truncated, FilesScanned: res.FilesScanned, FilesSkipped: res.FilesSkipped}
	for _, m := range res.Matches {
		out.Matches = append(out.Matches, &skillsvcv1.GrepMatch{Path: m.Path, Line: m.Line, Text: m.Text})
	}
	return out, nil
}
