package server_test

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

func TestUploadDownloadStream(t *testing.T) {
	const chunkSize = 1000
	c := start(t, objstoretest.NewBucket(t, nil), options{vfs: func(cfg *vfs.Config) { cfg.ChunkSize = chunkSize }})
	ctx := asAlice(t)
	data := make([]byte, 10*chunkSize+500)
	rand.Read(data)

	up, err := upload(ctx, c.fs, header("/workspace/blob.bin"),
		chunk(data[:1]), chunk(nil), chunk(data[1:4096]), chunk(data[4096:9000]), chunk(data[9000:]))
	if err != nil {
		t.Fatal(err)
	}
	info := up.GetInfo()
	if info.GetPath() != "/workspace/blob.bin" || info.GetSize() != int64(len(data)) || info.GetEtag() == "" || info.GetModified() == nil {
		t.Fatalf("Upload info = %v", info)
	}

	for _, tc := range []struct {
		name          string
		offset, limit int64
		want          []byte
	}{
		{"whole", 0, 0, data},
		{"window", 2500, 3000, data[2500:5500]},
		{"tail", int64(len(data)) - 10, 0, data[len(data)-10:]},
		{"past the end", int64(len(data)) + 1, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := download(ctx, c.fs, &skillsvcv1.DownloadRequest{Path: "/workspace/blob.bin", Offset: tc.offset, Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if n := max(1, (len(tc.want)+chunkSize-1)/chunkSize); len(msgs) != n {
				t.Errorf("%d messages, want %d", len(msgs), n)
			}
			var got []byte
			for i, m := range msgs {
				if (m.GetInfo() != nil) != (i == 0) {
					t.Errorf("message %d: info %v; want info on the first message only", i, m.GetInfo())
				}
				if len(m.GetData()) > chunkSize || (i < len(msgs)-1 && len(m.GetData()) != chunkSize) {
					t.Errorf("message %d of %d carries %d bytes, chunk size is %d", i, len(msgs), len(m.GetData()), chunkSize)
				}
				got = append(got, m.GetData()...)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("downloaded %d bytes, want %d matching bytes", len(got), len(tc.want))
			}
			if fi := msgs[0].GetInfo(); fi.GetPath() != "/workspace/blob.bin" || fi.GetSize() != int64(len(data)) || fi.GetEtag() != info.GetEtag() {
				t.Errorf("download info = %v, want the file's path, size %d and etag %q", fi, len(data), info.GetEtag())
			}
		})
	}

	t.Run("empty file", func(t *testing.T) {
		if _, err := upload(ctx, c.fs, header("/workspace/empty")); err != nil {
			t.Fatal(err)
		}
		msgs, err := download(ctx, c.fs, &skillsvcv1.DownloadRequest{Path: "/workspace/empty"})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || msgs[0].GetInfo() == nil || len(msgs[0].GetData()) != 0 {
			t.Errorf("download of an empty file = %v, want one message with info and no data", msgs)
		}
	})

	t.Run("conditional replace", func(t *testing.T) {
		h := &skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{
			Header: &skillsvcv1.UploadHeader{Path: "/workspace/blob.bin", IfMatch: info.GetEtag()}}}
		res, err := upload(ctx, c.fs, h, chunk([]byte("new")))
		if err != nil {
			t.Fatal(err)
		}
		if res.GetInfo().GetSize() != 3 || res.GetInfo().GetEtag() == info.GetEtag() {
			t.Errorf("conditional upload info = %v", res.GetInfo())
		}
		_, err = upload(ctx, c.fs, h, chunk([]byte("again")))
		wantCode(t, "upload with the old etag", err, codes.FailedPrecondition)
	})
}

func TestUploadWithoutHeader(t *testing.T) {
	c := start(t, objstoretest.NewBucket(t, nil), options{})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name string
		msgs []*skillsvcv1.UploadRequest
	}{
		{"no messages", nil},
		{"data first", []*skillsvcv1.UploadRequest{chunk([]byte("x")), header("/workspace/x")}},
		{"empty message first", []*skillsvcv1.UploadRequest{{}}},
		{"header without path", []*skillsvcv1.UploadRequest{header(""), chunk([]byte("x"))}},
		{"second header", []*skillsvcv1.UploadRequest{header("/workspace/x"), chunk([]byte("x")), header("/workspace/y")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := upload(ctx, c.fs, tc.msgs...)
			wantCode(t, "Upload", err, codes.InvalidArgument)
			if msg := status.Convert(err).Message(); strings.Contains(msg, "alice/") {
				t.Errorf("message %q leaks a storage key", msg)
			}
			for _, p := range []string{"/workspace/x", "/workspace/y"} {
				if _, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: p}); status.Code(err) != codes.NotFound {
					t.Errorf("a refused upload stored %s (Stat err = %v)", p, err)
				}
			}
		})
	}
}
