package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// secret is what a broken backend puts in its errors: a storage key that
// must never reach a client.
const secret = "disk on fire at alice/threads/t1/secret-key"

// client talks to an in-memory server wired like cmd/skillsvc: the
// interceptor chain from server.Options, the filesystem and health services.
type client struct {
	fs     skillsvcv1.FilesystemServiceClient
	health healthpb.HealthClient
}

func localBucket(t *testing.T) *local.Bucket {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// start serves a vfs.FS over bucket on a bufconn listener. tune changes the
// default limits; log receives the server's logs (discarded when nil).
func start(t *testing.T, bucket objstore.Bucket, tune func(*vfs.Config), log *slog.Logger) client {
	t.Helper()
	cfg := vfs.DefaultConfig()
	if tune != nil {
		tune(&cfg)
	}
	fs, err := vfs.New(bucket, mounts.Default(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := grpc.NewServer(server.Options(log, auth.Metadata{}, nil)...)
	skillsvcv1.RegisterFilesystemServiceServer(srv, server.NewFilesystem(fs, cfg.ChunkSize))
	healthpb.RegisterHealthServer(srv, health.NewServer())

	lis := bufconn.Listen(1 << 20)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return client{fs: skillsvcv1.NewFilesystemServiceClient(conn), health: healthpb.NewHealthClient(conn)}
}

// as returns a context carrying identity metadata (key, value pairs).
func as(t *testing.T, kv ...string) context.Context {
	return metadata.AppendToOutgoingContext(t.Context(), kv...)
}

func asAlice(t *testing.T) context.Context {
	return as(t, auth.UserKey, "alice", auth.ThreadKey, "t1")
}

func header(path string) *skillsvcv1.UploadRequest {
	return &skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: path}}}
}

func chunk(data []byte) *skillsvcv1.UploadRequest {
	return &skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Data{Data: data}}
}

// upload sends msgs and returns the server's answer. A Send error only
// means the server has already answered; CloseAndRecv returns its status.
func upload(ctx context.Context, c skillsvcv1.FilesystemServiceClient, msgs ...*skillsvcv1.UploadRequest) (*skillsvcv1.UploadResponse, error) {
	stream, err := c.Upload(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break
		}
	}
	return stream.CloseAndRecv()
}

// download receives every message of a Download.
func download(ctx context.Context, c skillsvcv1.FilesystemServiceClient, req *skillsvcv1.DownloadRequest) ([]*skillsvcv1.DownloadResponse, error) {
	stream, err := c.Download(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []*skillsvcv1.DownloadResponse
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, msg)
	}
}

// rpc is one call of the filesystem service, reduced to its error.
type rpc struct {
	name string
	call func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error
}

// everyRPC calls each method with a valid request on /workspace/x.
var everyRPC = []rpc{
	{"List", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		return err
	}},
	{"Stat", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/x"})
		return err
	}},
	{"Read", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/x"})
		return err
	}},
	{"Write", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/x", Content: "x"})
		return err
	}},
	{"Edit", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/x", OldString: "x", NewString: "y"})
		return err
	}},
	{"Delete", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/workspace/x"})
		return err
	}},
	{"Glob", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/workspace", Pattern: "**"})
		return err
	}},
	{"Grep", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "x"})
		return err
	}},
	{"Download", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := download(ctx, c, &skillsvcv1.DownloadRequest{Path: "/workspace/x"})
		return err
	}},
	{"Upload", func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
		_, err := upload(ctx, c, header("/workspace/x"), chunk([]byte("x")))
		return err
	}},
}

func wantCode(t *testing.T, op string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: code %v (%v), want %v", op, got, err, want)
	}
}

func TestUnauthenticated(t *testing.T) {
	bucket := localBucket(t)
	c := start(t, bucket, nil, nil)
	for _, tc := range []struct {
		name string
		md   []string
	}{
		{"no metadata", nil},
		{"user only", []string{auth.UserKey, "alice"}},
		{"thread only", []string{auth.ThreadKey, "t1"}},
		{"ticket only", []string{auth.TicketKey, "T-1"}},
		{"blank user", []string{auth.UserKey, "  ", auth.ThreadKey, "t1"}},
		{"user given twice", []string{auth.UserKey, "alice", auth.UserKey, "bob", auth.ThreadKey, "t1"}},
	} {
		for _, r := range everyRPC {
			t.Run(tc.name+" "+r.name, func(t *testing.T) {
				wantCode(t, r.name, r.call(as(t, tc.md...), c.fs), codes.Unauthenticated)
			})
		}
	}
	var keys []string
	objstore.Walk(t.Context(), bucket, "", func(o objstore.Object) error {
		keys = append(keys, o.Key)
		return nil
	})
	if len(keys) != 0 {
		t.Errorf("unauthenticated calls stored %v", keys)
	}
}

func TestHealthWithoutIdentity(t *testing.T) {
	c := start(t, localBucket(t), nil, nil)
	res, err := c.health.Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health Check without identity: %v", err)
	}
	if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health status = %v, want SERVING", res.GetStatus())
	}
}

// TestErrorCodes drives every vfs error through real calls and checks the
// documented status code, and that messages name virtual paths, not keys.
func TestErrorCodes(t *testing.T) {
	bucket := localBucket(t)
	c := start(t, bucket, func(cfg *vfs.Config) {
		cfg.MaxWriteBytes = 64
		cfg.MaxUploadBytes = 128
	}, nil)
	ctx := asAlice(t)
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/dir/x", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := upload(ctx, c.fs, header("/workspace/nul.bin"), chunk([]byte("a\x00b"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		call func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error
		code codes.Code
		msg  string // the message contains this
	}{
		{"missing file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/missing"})
			return err
		}, codes.NotFound, "/workspace/missing"},
		{"no mount", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/etc/passwd"})
			return err
		}, codes.NotFound, "/etc/passwd"},
		{"missing download", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := download(ctx, c, &skillsvcv1.DownloadRequest{Path: "/workspace/missing"})
			return err
		}, codes.NotFound, "/workspace/missing"},
		{"hostile path", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/../skills/x"})
			return err
		}, codes.InvalidArgument, "/workspace/../skills/x"},
		{"empty path", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{})
			return err
		}, codes.InvalidArgument, "path"},
		{"invalid identity", as(t, auth.UserKey, "../bob", auth.ThreadKey, "t1"), func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/"})
			return err
		}, codes.InvalidArgument, "user"},
		{"negative page size", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageSize: -1})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"foreign page token", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageToken: "garbage"})
			return err
		}, codes.InvalidArgument, "page_token"},
		{"negative max results", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/workspace", Pattern: "**", MaxResults: -1})
			return err
		}, codes.InvalidArgument, "max_results"},
		{"negative max matches", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "x", MaxMatches: -1})
			return err
		}, codes.InvalidArgument, "max_matches"},
		{"bad regex", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "(", Regex: true})
			return err
		}, codes.InvalidArgument, "regular expression"},
		{"both write conditions", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", IfMatch: "x", MustNotExist: true})
			return err
		}, codes.InvalidArgument, "if_match"},
		{"read-only mount", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/skills/x.md", Content: "x"})
			return err
		}, codes.PermissionDenied, "/skills"},
		{"read-only delete", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/skills", Recursive: true})
			return err
		}, codes.PermissionDenied, "/skills"},
		{"must not exist", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", MustNotExist: true})
			return err
		}, codes.AlreadyExists, "/workspace/a.txt"},
		{"must not exist upload", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := upload(ctx, c, &skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{
				Header: &skillsvcv1.UploadHeader{Path: "/workspace/a.txt", MustNotExist: true}}}, chunk([]byte("x")))
			return err
		}, codes.AlreadyExists, "/workspace/a.txt"},
		{"stale etag", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", IfMatch: "stale"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"read a directory", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"download a directory", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := download(ctx, c, &skillsvcv1.DownloadRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"write below a file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt/b", Content: "x"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"list a file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace/a.txt"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"read a binary file", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/nul.bin"})
			return err
		}, codes.FailedPrecondition, "/workspace/nul.bin"},
		{"edit does not apply", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.txt", OldString: "absent", NewString: "x"})
			return err
		}, codes.FailedPrecondition, "/workspace/a.txt"},
		{"delete a directory without recursive", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/workspace/dir"})
			return err
		}, codes.FailedPrecondition, "/workspace/dir"},
		{"write too large", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/big", Content: strings.Repeat("x", 65)})
			return err
		}, codes.ResourceExhausted, "65 bytes"},
		{"upload too large", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := upload(ctx, c, header("/workspace/big"), chunk(make([]byte, 100)), chunk(make([]byte, 29)))
			return err
		}, codes.ResourceExhausted, "limit"},
		{"read past the end", ctx, func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/a.txt", Offset: 5})
			return err
		}, codes.OutOfRange, "/workspace/a.txt"},
		{"no identity", t.Context(), func(ctx context.Context, c skillsvcv1.FilesystemServiceClient) error {
			_, err := c.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/a.txt"})
			return err
		}, codes.Unauthenticated, auth.UserKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.ctx, c.fs)
			wantCode(t, tc.name, err, tc.code)
			msg := status.Convert(err).Message()
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not mention %q", msg, tc.msg)
			}
			if strings.Contains(msg, "alice/") {
				t.Errorf("message %q leaks a storage key", msg)
			}
		})
	}
	if _, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/big"}); status.Code(err) != codes.NotFound {
		t.Errorf("a refused write or upload stored /workspace/big: Stat err = %v", err)
	}
}

// conflictBucket loses every conditional write to a concurrent writer.
type conflictBucket struct{ objstore.Bucket }

func (b conflictBucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if opts.IfMatch != "" {
		return objstore.Attributes{}, objstore.ErrConflict
	}
	return b.Bucket.Put(ctx, key, r, size, opts)
}

func TestConflictIsAborted(t *testing.T) {
	c := start(t, conflictBucket{localBucket(t)}, func(cfg *vfs.Config) { cfg.EditAttempts = 3 }, nil)
	ctx := asAlice(t)
	w, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.txt", OldString: "hello", NewString: "bye"})
	wantCode(t, "Edit that keeps losing", err, codes.Aborted)
	_, err = c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x", IfMatch: w.GetInfo().GetEtag()})
	wantCode(t, "conditional Write that loses", err, codes.Aborted)
}

// failingBucket fails every operation with an error that names a key.
type failingBucket struct{}

var errDisk = errors.New(secret)

func (failingBucket) Get(context.Context, string) (io.ReadCloser, objstore.Attributes, error) {
	return nil, objstore.Attributes{}, errDisk
}

func (failingBucket) GetRange(context.Context, string, int64, int64) (io.ReadCloser, objstore.Attributes, error) {
	return nil, objstore.Attributes{}, errDisk
}

func (failingBucket) Stat(context.Context, string) (objstore.Attributes, error) {
	return objstore.Attributes{}, errDisk
}

func (failingBucket) Put(context.Context, string, io.Reader, int64, objstore.PutOptions) (objstore.Attributes, error) {
	return objstore.Attributes{}, errDisk
}

func (failingBucket) Delete(context.Context, string) error { return errDisk }

func (failingBucket) List(context.Context, objstore.ListOptions) (objstore.ListPage, error) {
	return objstore.ListPage{}, errDisk
}

// syncBuffer collects logs written by server goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestInternalErrorsHideDetails(t *testing.T) {
	var logs syncBuffer
	c := start(t, failingBucket{}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	for _, r := range everyRPC {
		t.Run(r.name, func(t *testing.T) {
			err := r.call(asAlice(t), c.fs)
			wantCode(t, r.name, err, codes.Internal)
			msg := status.Convert(err).Message()
			for _, s := range []string{"disk on fire", "secret-key", "alice/"} {
				if strings.Contains(msg, s) {
					t.Errorf("%s: Internal message %q leaks %q", r.name, msg, s)
				}
			}
		})
	}
	// Operators still see the cause.
	if got := logs.String(); !strings.Contains(got, "secret-key") || !strings.Contains(got, "/skillsvc.v1.FilesystemService/Stat") {
		t.Errorf("server log does not record the internal error with its method:\n%s", got)
	}
}

// panickingBucket panics in every method a handler calls directly.
type panickingBucket struct{ failingBucket }

func (panickingBucket) Stat(context.Context, string) (objstore.Attributes, error) { panic(secret) }

func (panickingBucket) GetRange(context.Context, string, int64, int64) (io.ReadCloser, objstore.Attributes, error) {
	panic(secret)
}

func TestPanicRecovered(t *testing.T) {
	var logs syncBuffer
	c := start(t, panickingBucket{}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 2 { // the server survives the first panic
		_, err := c.fs.Stat(asAlice(t), &skillsvcv1.StatRequest{Path: "/workspace/x"})
		wantCode(t, "Stat", err, codes.Internal)
		if strings.Contains(status.Convert(err).Message(), "secret-key") {
			t.Errorf("panic value leaked to the client: %v", err)
		}
		_, err = download(asAlice(t), c.fs, &skillsvcv1.DownloadRequest{Path: "/workspace/x"})
		wantCode(t, "Download", err, codes.Internal)
		if strings.Contains(status.Convert(err).Message(), "secret-key") {
			t.Errorf("panic value leaked to the client: %v", err)
		}
	}
	if _, err := c.health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health after panics: %v", err)
	}
	if got := logs.String(); !strings.Contains(got, "panic in handler") || !strings.Contains(got, "secret-key") {
		t.Errorf("the panic was not logged:\n%s", got)
	}
}

func TestRecoveryInterceptors(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Service/Method"}
	unary := server.RecoveryUnaryInterceptor(log)
	for _, tc := range []struct {
		name     string
		handler  grpc.UnaryHandler
		wantResp any
		wantCode codes.Code
	}{
		{"panic", func(context.Context, any) (any, error) { panic(secret) }, nil, codes.Internal},
		{"panic with an error", func(context.Context, any) (any, error) { panic(errDisk) }, nil, codes.Internal},
		{"no panic", func(context.Context, any) (any, error) { return "resp", nil }, "resp", codes.OK},
		{"error", func(context.Context, any) (any, error) {
			return nil, status.Error(codes.NotFound, "nope")
		}, nil, codes.NotFound},
	} {
		t.Run("unary "+tc.name, func(t *testing.T) {
			resp, err := unary(t.Context(), "req", info, tc.handler)
			if resp != tc.wantResp {
				t.Errorf("resp = %v, want %v", resp, tc.wantResp)
			}
			wantCode(t, "unary", err, tc.wantCode)
			if strings.Contains(status.Convert(err).Message(), "secret-key") {
				t.Errorf("panic value leaked: %v", err)
			}
		})
	}
	stream := server.RecoveryStreamInterceptor(log)
	sinfo := &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"}
	err := stream(nil, fakeStream{ctx: t.Context()}, sinfo, func(any, grpc.ServerStream) error { panic(secret) })
	wantCode(t, "stream panic", err, codes.Internal)
	if strings.Contains(status.Convert(err).Message(), "secret-key") {
		t.Errorf("panic value leaked: %v", err)
	}
	err = stream(nil, fakeStream{ctx: t.Context()}, sinfo, func(any, grpc.ServerStream) error { return nil })
	wantCode(t, "stream without panic", err, codes.OK)
}

type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s fakeStream) Context() context.Context { return s.ctx }

func TestUploadDownloadStream(t *testing.T) {
	const chunkSize = 1000
	c := start(t, localBucket(t), func(cfg *vfs.Config) { cfg.ChunkSize = chunkSize }, nil)
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
	c := start(t, localBucket(t), nil, nil)
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

// TestRoundTrip checks the conversion of requests and responses in every
// unary handler.
func TestRoundTrip(t *testing.T) {
	bucket := localBucket(t)
	c := start(t, bucket, nil, nil)
	ctx := asAlice(t)
	if _, err := bucket.Put(t.Context(), "alice/skills/pdf/reference.md", strings.NewReader("# Ref\n"), 6, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/docs/a.md", Content: "one\ntwo\nthree\n"})
	if err != nil {
		t.Fatal(err)
	}
	if fi := w.GetInfo(); fi.GetPath() != "/workspace/docs/a.md" || fi.GetName() != "a.md" || fi.GetSize() != 14 || fi.GetEtag() == "" || fi.GetModified() == nil || fi.GetIsDir() {
		t.Errorf("Write info = %v", fi)
	}
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/docs/b.md", Content: "two"}); err != nil {
		t.Fatal(err)
	}

	t.Run("Stat", func(t *testing.T) {
		res, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/docs/a.md"})
		if err != nil || res.GetInfo().GetEtag() != w.GetInfo().GetEtag() || res.GetInfo().GetSize() != 14 {
			t.Errorf("Stat = %v, %v", res, err)
		}
		res, err = c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/docs"})
		if err != nil || !res.GetInfo().GetIsDir() || res.GetInfo().GetModified() != nil || res.GetInfo().GetEtag() != "" {
			t.Errorf("Stat of a directory = %v, %v", res, err)
		}
	})
	t.Run("List", func(t *testing.T) {
		res, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetEntries()) != 1 || !res.GetEntries()[0].GetIsDir() || res.GetEntries()[0].GetPath() != "/workspace/docs" {
			t.Errorf("List(/workspace) = %v", res.GetEntries())
		}
		var names []string
		token := ""
		for {
			res, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace/docs", PageSize: 1, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.GetEntries() {
				names = append(names, e.GetName())
				if e.GetModified() == nil || e.GetEtag() == "" {
					t.Errorf("file entry %v without modified time or etag", e)
				}
			}
			if token = res.GetNextPageToken(); token == "" {
				break
			}
		}
		if strings.Join(names, ",") != "a.md,b.md" {
			t.Errorf("paged List = %v, want a.md, b.md", names)
		}
	})
	t.Run("Read", func(t *testing.T) {
		res, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/docs/a.md", Offset: 1, Limit: 1, LineNumbers: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetContent() != "     2\ttwo" || res.GetTotalLines() != 3 || res.GetNextOffset() != 2 ||
			res.GetPath() != "/workspace/docs/a.md" || res.GetEtag() != w.GetInfo().GetEtag() {
			t.Errorf("Read = %v", res)
		}
		res, err = c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/pdf/reference"})
		if err != nil || res.GetPath() != "/skills/pdf/reference.md" || res.GetContent() != "# Ref" {
			t.Errorf("Read with .md fallback = %v, %v", res, err)
		}
	})
	t.Run("Glob", func(t *testing.T) {
		res, err := c.fs.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/", Pattern: "**/*.md", MaxResults: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.GetMatches() {
			got = append(got, m.GetPath())
		}
		if strings.Join(got, ",") != "/skills/pdf/reference.md,/workspace/docs/a.md" || !res.GetTruncated() {
			t.Errorf("Glob = %v truncated %v", got, res.GetTruncated())
		}
	})
	t.Run("Grep", func(t *testing.T) {
		res, err := c.fs.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "TWO", CaseInsensitive: true, Glob: "**/*.md"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.GetMatches() {
			got = append(got, fmt.Sprintf("%s:%d:%s", m.GetPath(), m.GetLine(), m.GetText()))
		}
		if strings.Join(got, " ") != "/workspace/docs/a.md:2:two /workspace/docs/b.md:1:two" || res.GetTruncated() ||
			res.GetFilesScanned() != 2 || res.GetFilesSkipped() != 0 {
			t.Errorf("Grep = %v truncated %v scanned %d skipped %d", got, res.GetTruncated(), res.GetFilesScanned(), res.GetFilesSkipped())
		}
		res, err = c.fs.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "t.o", Regex: true, MaxMatches: 1})
		if err != nil || len(res.GetMatches()) != 1 || !res.GetTruncated() {
			t.Errorf("Grep with max_matches 1 = %v, %v", res, err)
		}
	})
	t.Run("Edit", func(t *testing.T) {
		res, err := c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/docs/a.md", OldString: "o", NewString: "0", ReplaceAll: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetOccurrences() != 2 || res.GetInfo().GetEtag() == w.GetInfo().GetEtag() || res.GetInfo().GetSize() != 14 {
			t.Errorf("Edit = %v", res)
		}
		read, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/docs/a.md"})
		if err != nil || read.GetContent() != "0ne\ntw0\nthree" {
			t.Errorf("after Edit Read = %v, %v", read, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		res, err := c.fs.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/workspace/docs", Recursive: true})
		if err != nil || res.GetDeleted() != 2 {
			t.Errorf("Delete = %v, %v; want 2 deleted", res, err)
		}
		list, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		if err != nil || len(list.GetEntries()) != 0 {
			t.Errorf("List after Delete = %v, %v", list, err)
		}
	})
	t.Run("root with ticket", func(t *testing.T) {
		res, err := c.fs.List(as(t, auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "T-1"), &skillsvcv1.ListRequest{Path: "/"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.GetEntries() {
			got = append(got, e.GetPath())
		}
		if strings.Join(got, ",") != "/skills,/ticket,/workspace" {
			t.Errorf("List(/) with a ticket = %v", got)
		}
	})
}
