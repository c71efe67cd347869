package server

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// scriptedUpload plays a client's upload messages and counts what the
// handler read.
type scriptedUpload struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*skillsvcv1.UploadRequest
	read int
}

func (s *scriptedUpload) Context() context.Context { return s.ctx }

func (s *scriptedUpload) Recv() (*skillsvcv1.UploadRequest, error) {
	if s.read == len(s.msgs) {
		return nil, io.EOF
	}
	s.read++
	return s.msgs[s.read-1], nil
}

func (s *scriptedUpload) SendAndClose(*skillsvcv1.UploadResponse) error { return nil }

// TestRefusedUploadReadsWhatWasSent: an upload refused after its header
// (a read-only mount) still reads the data the client sent before it
// answers, so every client sees the refusal's own status.
func TestRefusedUploadReadsWhatWasSent(t *testing.T) {
	table := mounts.Default()
	fsys, err := vfs.New(memory.New(), table, vfs.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := auth.Principal{Identity: mounts.Identity{User: "alice", Thread: "t1"}, Caller: table.MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})}
	stream := &scriptedUpload{ctx: auth.NewContext(t.Context(), p), msgs: []*skillsvcv1.UploadRequest{
		{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: "/skills/x.bin"}}},
		{Msg: &skillsvcv1.UploadRequest_Data{Data: []byte("one")}},
		{Msg: &skillsvcv1.UploadRequest_Data{Data: []byte("two")}},
	}}
	err = NewFilesystem(fsys, 1<<20).Upload(stream)
	if errkind.Of(err) != errkind.PermissionDenied {
		t.Fatalf("upload to /skills: %v, want PermissionDenied", err)
	}
	if stream.read != len(stream.msgs) {
		t.Errorf("the handler read %d of the %d messages sent before answering", stream.read, len(stream.msgs))
	}
}
