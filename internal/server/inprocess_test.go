package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/requestid"
)

// TestInProcessCalls: server.InProcess carries every kind of call through
// the interceptor chain as a gRPC server does: a unary call and both kinds
// of stream, the request ID header, a refused identity, a handler's status
// ending a client stream early, and a stream ended by its caller.
func TestInProcessCalls(t *testing.T) {
	bucket := objstoretest.NewBucket(t, nil)
	c := start(t, bucket, options{inProcess: true})
	ctx := asAlice(t)

	data := make([]byte, 300<<10) // several chunks of the default size
	rand.Read(data)
	up, err := upload(ctx, c.fs, header("/workspace/blob.bin"), chunk(data[:100<<10]), chunk(data[100<<10:]))
	if err != nil || up.GetInfo().GetSize() != int64(len(data)) {
		t.Fatalf("Upload = %v, %v", up, err)
	}
	msgs, err := download(ctx, c.fs, &skillsvcv1.DownloadRequest{Path: "/workspace/blob.bin"})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, m := range msgs {
		got = append(got, m.GetData()...)
	}
	if len(msgs) < 2 || !bytes.Equal(got, data) {
		t.Errorf("Download: %d messages, %d bytes; want several messages of the %d uploaded", len(msgs), len(got), len(data))
	}

	var hdr metadata.MD
	if _, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/blob.bin"}, grpc.Header(&hdr)); err != nil || len(hdr.Get(requestid.Key)) != 1 {
		t.Errorf("Stat: header %v, %v; want the request ID", hdr, err)
	}
	st, err := c.fs.Download(ctx, &skillsvcv1.DownloadRequest{Path: "/workspace/blob.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if hdr, err := st.Header(); err != nil || len(hdr.Get(requestid.Key)) != 1 {
		t.Errorf("Download: header %v, %v; want the request ID", hdr, err)
	}

	for _, r := range everyRPC {
		wantCode(t, r.name+" without identity", r.call(t.Context(), c.fs), codes.Unauthenticated)
	}
	_, err = upload(ctx, c.fs, header("/skills/x.md"), chunk(data))
	wantCode(t, "Upload under /skills", err, codes.PermissionDenied)

	wctx, cancel := context.WithCancel(ctx)
	w, err := c.skills.WatchSkills(wctx, &skillsvcv1.WatchSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatalf("WatchSkills: %v", err)
	}
	cancel()
	if _, err := w.Recv(); status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
		t.Errorf("WatchSkills after its caller cancelled: %v, want CANCELED", err)
	}
}
