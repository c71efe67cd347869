package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// built is the skillsvc command, built once per test run.
var built = sync.OnceValues(func() (string, error) {
	dir, err := testserver.TempDir("skillsvc-e2e-")
	if err != nil {
		return "", err
	}
	return testserver.BuildSkillsvc(context.Background(), dir)
})

// binary returns the skillsvc command for a test that runs it; under -short
// the test is skipped instead.
func binary(t *testing.T) string {
	t.Helper()
	testserver.Integration(t, "the skillsvc binary")
	bin, err := built()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// proc is a running skillsvc binary, started by testserver.RunSkillsvc.
type proc struct {
	cmd      *exec.Cmd
	addr     string
	httpAddr string     // the JSON and MCP listener
	done     chan error // receives how it exited; put it back after reading
	logs     *logtest.Buffer
}

// startBinary runs skillsvc with args on a free port and waits for its
// "serving" log line, which carries the address it listens on.
func startBinary(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	bin := binary(t)
	args = append([]string{"--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0", "--log.level=debug"}, args...)
	env = append(os.Environ(), env...)
	if f := testserver.LiftedLimit(args, env); f != "" {
		t.Fatalf("startBinary: %s lifts a per-user limit; tests of the binary keep the limits a deployment gets (a test that calls in bulk uses dialWithinLimits)", f)
	}
	logs := &logtest.Buffer{}
	// Tests check readiness themselves, some over TLS with their own
	// certificates: return once the listeners are logged.
	s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
		Bin: bin, Args: args, Env: env, Dir: t.TempDir(), Log: logs, SkipHealth: true,
	}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	p := &proc{cmd: s.Cmd(), addr: s.Addrs["serving"], httpAddr: s.Addrs["serving http"], done: make(chan error, 1), logs: logs}
	go func() { p.done <- s.Err() }()
	return p
}

func (p *proc) output() string { return p.logs.String() }

// minioEnv is the environment that points the binary's AWS SDK at srv and
// nothing else (no developer profile), plus extra.
func minioEnv(srv *testserver.MinIO, extra ...string) []string {
	return append([]string{
		"AWS_ACCESS_KEY_ID=" + srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + srv.SecretKey,
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}, extra...)
}

// s3Put returns a function that uploads an object to bucket with a plain S3
// PUT, as users upload libraries (no file modes, no skillsvc involved).
func s3Put(t *testing.T, srv *testserver.MinIO, bucket string) func(key, body string) {
	s3c := srv.Client(t)
	return func(key, body string) {
		t.Helper()
		if _, err := s3c.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// dialWithinLimits is dial for a test that calls as one user in bulk or in a
// loop: the connection waits rather than send faster than the per-user rate
// a deployment allows by default, as a well-behaved client does, so the test
// gets the answers it checks instead of RESOURCE_EXHAUSTED. Its bucket holds
// half the server's burst, leaving room for calls that reach the server
// bunched together. Calls cost more than one unit when they work storage
// hard (quota's cost table), so a unary call refused all the same is tried
// again after the delay its RetryInfo gives, as a well-behaved client does.
func dialWithinLimits(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	def := quota.DefaultConfig()
	lim := rate.NewLimiter(rate.Limit(def.Rate), def.Burst/2)
	return dial(t, addr,
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			for {
				if err := lim.Wait(ctx); err != nil {
					return err
				}
				err := invoker(ctx, method, req, reply, cc, opts...)
				delay, limited := retryinfo.Delay(err)
				if status.Code(err) != codes.ResourceExhausted || !limited {
					return err
				}
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return err
				}
			}
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			if err := lim.Wait(ctx); err != nil {
				return nil, err
			}
			return streamer(ctx, desc, cc, method, opts...)
		}))
}

// TestEndToEndMinIO runs the real binary against a real MinIO and drives
// every FilesystemService RPC through a real gRPC client.
func TestEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	p := startBinary(t, minioEnv(srv, "SKILLSVC_S3_BUCKET="+bucket), // the environment sets flags too
		"--storage=s3", "--s3.endpoint="+srv.Endpoint, "--s3.path-style", "--s3.region="+srv.Region)
	conn := dial(t, p.addr)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "T-7")

	// Health and identity.
	hc, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hc.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", hc, err)
	}
	_, err = fsc.List(ctx, &skillsvcv1.ListRequest{Path: "/"})
	grpctest.WantCode(t, err, codes.Unauthenticated)

	// Write, Stat, Read (with the .md fallback), List.
	w, err := fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/notes/plan.md", Content: "# Plan\nstep one\nstep two\n"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/notes/plan.md", Content: "x", MustNotExist: true})
	grpctest.WantCode(t, err, codes.AlreadyExists)
	_, err = fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/notes/plan.md", Content: "x", IfMatch: "stale"})
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	st, err := fsc.Stat(alice, &skillsvcv1.StatRequest{Path: "/workspace/notes/plan.md"})
	if err != nil || st.GetInfo().GetEtag() != w.GetInfo().GetEtag() || st.GetInfo().GetSize() != 25 {
		t.Fatalf("Stat = %v, %v; want etag %q size 25", st, err, w.GetInfo().GetEtag())
	}
	rd, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/notes/plan", Offset: 1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rd.GetPath() != "/workspace/notes/plan.md" || rd.GetContent() != "step one" || rd.GetTotalLines() != 3 || rd.GetNextOffset() != 2 {
		t.Errorf("Read = %v", rd)
	}
	ls, err := fsc.List(alice, &skillsvcv1.ListRequest{Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, e := range ls.GetEntries() {
		roots = append(roots, e.GetPath())
	}
	if strings.Join(roots, ",") != "/skills,/ticket,/workspace" {
		t.Errorf("List / = %v", roots)
	}
	ls, err = fsc.List(alice, &skillsvcv1.ListRequest{Path: "/workspace"})
	if err != nil || len(ls.GetEntries()) != 1 || !ls.GetEntries()[0].GetIsDir() || ls.GetEntries()[0].GetName() != "notes" {
		t.Errorf("List /workspace = %v, %v", ls, err)
	}

	// Another thread and another user see none of it; hostile paths fail.
	_, err = fsc.Read(grpctest.AsCaller(ctx, "alice", "t2", ""), &skillsvcv1.ReadRequest{Path: "/workspace/notes/plan.md"})
	grpctest.WantCode(t, err, codes.NotFound)
	_, err = fsc.Read(grpctest.AsCaller(ctx, "bob", "t1", ""), &skillsvcv1.ReadRequest{Path: "/workspace/notes/plan.md"})
	grpctest.WantCode(t, err, codes.NotFound)
	_, err = fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/../../bob/threads/t1/x"})
	grpctest.WantCode(t, err, codes.InvalidArgument)
	_, err = fsc.Read(grpctest.AsCaller(ctx, "../bob", "t1", ""), &skillsvcv1.ReadRequest{Path: "/workspace/x"})
	grpctest.WantCode(t, err, codes.InvalidArgument)
	_, err = fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/skills/x/SKILL.md", Content: "x"})
	grpctest.WantCode(t, err, codes.PermissionDenied)

	// Ticket files are shared by the threads working on the ticket.
	if _, err := fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/ticket/brief.md", Content: "fix the bug"}); err != nil {
		t.Fatal(err)
	}
	if rd, err := fsc.Read(grpctest.AsCaller(ctx, "alice", "t9", "T-7"), &skillsvcv1.ReadRequest{Path: "/ticket/brief.md"}); err != nil || rd.GetContent() != "fix the bug" {
		t.Errorf("ticket read from another thread = %v, %v", rd, err)
	}
	_, err = fsc.Read(grpctest.AsCaller(ctx, "alice", "t9", ""), &skillsvcv1.ReadRequest{Path: "/ticket/brief.md"})
	grpctest.WantCode(t, err, codes.NotFound)

	// Upload and Download a binary file in chunks.
	blob := make([]byte, 1<<20+17)
	rand.Read(blob)
	up, err := fsc.Upload(alice)
	if err != nil {
		t.Fatal(err)
	}
	up.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: "/workspace/data/blob.bin"}}})
	for off := 0; off < len(blob); off += 100_000 {
		up.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Data{Data: blob[off:min(off+100_000, len(blob))]}})
	}
	upRes, err := up.CloseAndRecv()
	if err != nil || upRes.GetInfo().GetSize() != int64(len(blob)) {
		t.Fatalf("Upload = %v, %v", upRes, err)
	}
	down, err := fsc.Download(alice, &skillsvcv1.DownloadRequest{Path: "/workspace/data/blob.bin"})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for {
		msg, err := down.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.GetData()...)
	}
	if !bytes.Equal(got, blob) {
		t.Errorf("Download returned %d bytes that differ from the %d uploaded", len(got), len(blob))
	}
	_, err = fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/data/blob.bin"})
	grpctest.WantCode(t, err, codes.FailedPrecondition)

	// Glob and Grep.
	gl, err := fsc.Glob(alice, &skillsvcv1.GlobRequest{Path: "/workspace", Pattern: "**/*.md"})
	if err != nil || len(gl.GetMatches()) != 1 || gl.GetMatches()[0].GetPath() != "/workspace/notes/plan.md" {
		t.Errorf("Glob = %v, %v", gl, err)
	}
	gr, err := fsc.Grep(alice, &skillsvcv1.GrepRequest{Path: "/", Pattern: "step t"})
	if err != nil || len(gr.GetMatches()) != 1 || gr.GetMatches()[0].GetLine() != 3 || gr.GetFilesSkipped() != 1 {
		t.Errorf("Grep = %v, %v", gr, err)
	}

	// 20 concurrent Edits, each adding its own line: none may be lost.
	if _, err := fsc.Write(alice, &skillsvcv1.WriteRequest{Path: "/workspace/log.md", Content: "start\nEND\n"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			_, errs[i] = fsc.Edit(alice, &skillsvcv1.EditRequest{Path: "/workspace/log.md", OldString: "END", NewString: fmt.Sprintf("line-%02d\nEND", i)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("edit %d: %v", i, err)
		}
	}
	rd, err = fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/workspace/log.md"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if !strings.Contains(rd.GetContent(), fmt.Sprintf("line-%02d\n", i)) {
			t.Errorf("line-%02d lost; file is:\n%s", i, rd.GetContent())
		}
	}
	if rd.GetTotalLines() != 22 {
		t.Errorf("file has %d lines, want 22", rd.GetTotalLines())
	}

	// Delete a file, then a directory recursively.
	del, err := fsc.Delete(alice, &skillsvcv1.DeleteRequest{Path: "/workspace/log.md"})
	if err != nil || del.GetDeleted() != 1 {
		t.Errorf("Delete file = %v, %v", del, err)
	}
	_, err = fsc.Delete(alice, &skillsvcv1.DeleteRequest{Path: "/workspace/notes"})
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	del, err = fsc.Delete(alice, &skillsvcv1.DeleteRequest{Path: "/workspace/notes", Recursive: true})
	if err != nil || del.GetDeleted() != 1 {
		t.Errorf("Delete dir = %v, %v", del, err)
	}
	_, err = fsc.Stat(alice, &skillsvcv1.StatRequest{Path: "/workspace/notes"})
	grpctest.WantCode(t, err, codes.NotFound)

	// The objects sit under the caller's prefixes, nowhere else; skillsvc
	// itself keeps the library indexes, outside every mount.
	page, err := srv.Client(t).ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range page.Contents {
		k := *o.Key
		if k == "alice/settings/skills.index" || k == "_shared/settings/skills.index" {
			continue
		}
		if !strings.HasPrefix(k, "alice/threads/t1/") && !strings.HasPrefix(k, "alice/tickets/T-7/") {
			t.Errorf("object outside alice's prefixes: %q", k)
		}
	}

	// SIGTERM drains and exits cleanly.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}
}

// TestZeroConfig checks that the binary serves with no configuration at
// all, storing under ./data.
func TestZeroConfig(t *testing.T) {
	p := startBinary(t, nil)
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	ctx := grpctest.AsCaller(t.Context(), "u1", "th1", "")
	if _, err := fsc.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(p.cmd.Dir, "data", "u1", "threads", "th1", "a.txt"))
	if err != nil || string(data) != "hello" {
		t.Errorf("./data file = %q, %v", data, err)
	}
}

// TestMetricsEndpoint checks that --metrics.listen serves Prometheus metrics
// for gRPC calls, object store operations and HTTP requests.
func TestMetricsEndpoint(t *testing.T) {
	p := startBinary(t, nil, "--metrics.listen=127.0.0.1:0")
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	if _, err := fsc.Write(grpctest.AsCaller(t.Context(), "u1", "th1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/a.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	body := scrape(t, p)
	for _, want := range []string{
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Write",grpc_service="skillsvc.v1.FilesystemService",grpc_type="unary"} 1`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="ListSkills",grpc_service="skillsvc.v1.SkillsService",grpc_type="unary"} 0`,
		`skillsvc_objstore_operations_total{operation="put"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// HTTP requests are timed by handler; an observation lands just after
	// the response is written, so the counts are polled.
	callEveryEdge(t, p)
	m := metricsFor(t, p)
	pollUntil(t, 10*time.Second, "the JSON request and the MCP requests counted", func() bool {
		return m.counter(t, `skillsvc_http_request_duration_seconds_count{code="200",handler="json",method="post"}`) == 1 &&
			m.counter(t, `skillsvc_http_request_duration_seconds_count{code="200",handler="mcp",method="post"}`) >= 2 // initialize, tools/list
	})
}

// callEveryEdge makes a call over gRPC, one JSON request and one MCP session
// as alice, so that the series created on first use exist.
func callEveryEdge(t *testing.T, p *proc) {
	t.Helper()
	ctx := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	if _, err := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)).ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.SkillsService/ListSkills", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth.UserKey, "alice")
	req.Header.Set(auth.ThreadKey, "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("JSON ListSkills: HTTP %d", resp.StatusCode)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   "http://" + p.httpAddr + "/mcp",
		HTTPClient: mcptest.Client(grpctest.CallerHeader("alice", "t1", "")),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// scrape returns p's Prometheus metrics; p runs with --metrics.listen.
func scrape(t *testing.T, p *proc) string {
	t.Helper()
	return metricsFor(t, p).scrape(t)
}

// procExited reports whether p has exited, leaving the exit status for others.
func procExited(p *proc) bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}
