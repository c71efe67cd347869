package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/usage"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// secret is what a broken backend puts in its errors: a storage key that
// must never reach a client.
const secret = "disk on fire at alice/threads/t1/secret-key"

var errDisk = errors.New(secret)

// client talks to an in-memory server wired as the binary is: the
// interceptor chain from server.Options, app.Services (the filesystem,
// skills and admin services) and health.
type client struct {
	fs      skillsvcv1.FilesystemServiceClient
	skills  skillsvcv1.SkillsServiceClient
	admin   skillsvcv1.AdminServiceClient
	library skillsvcv1.LibraryServiceClient
	health  healthpb.HealthClient
}

// options change the server start builds; the zero value is the defaults.
type options struct {
	vfs    func(*vfs.Config)
	skills func(*skills.Config)
	log    *slog.Logger       // discarded when nil
	auth   auth.Authenticator // auth.Metadata when nil
	audit  *audit.Logger      // none when nil
	limits server.Limits      // none when nil
	// inProcess calls the services through server.InProcess, as the JSON
	// gateway does, instead of a gRPC server (no health service then).
	inProcess bool
	usage     usage.Recorder       // usage.Nop when nil
	tracer    trace.TracerProvider // no spans when nil
}

// start serves the services over bucket on a bufconn listener, assembled
// as the binary assembles them (app.NewServices with the default
// configuration), with the skills library behind the VFS's skills mount.
func start(t *testing.T, bucket objstore.Bucket, o options) client {
	t.Helper()
	cfg := app.DefaultConfig()
	if o.vfs != nil {
		o.vfs(&cfg.VFS)
	}
	lib := skillstest.Library(t, bucket, func(c *skills.Config) {
		if o.skills != nil {
			o.skills(c)
		}
		cfg.Skills = *c
	}, skills.WithPins(skills.DefaultPinConfig(), func(context.Context) bool { return false })) // as in app: GC reads snapshots
	services, err := app.NewServices(cfg, app.Parts{Bucket: bucket, Lib: lib, Usage: o.usage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(services.Close)
	log := o.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var authn auth.Authenticator = auth.Metadata{}
	if o.auth != nil {
		authn = o.auth
	}
	chain := server.Chain{Log: log, Auth: authn, Mounts: mounts.Default(), Audit: o.audit, Limits: o.limits, Tracer: o.tracer}
	if o.inProcess {
		ch := server.InProcess(chain, services.Register)
		return client{
			fs:      skillsvcv1.NewFilesystemServiceClient(ch),
			skills:  skillsvcv1.NewSkillsServiceClient(ch),
			admin:   skillsvcv1.NewAdminServiceClient(ch),
			library: skillsvcv1.NewLibraryServiceClient(ch),
		}
	}
	srv := grpc.NewServer(server.Options(chain)...)
	services.Register(srv)
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
	return client{
		fs:      skillsvcv1.NewFilesystemServiceClient(conn),
		skills:  skillsvcv1.NewSkillsServiceClient(conn),
		admin:   skillsvcv1.NewAdminServiceClient(conn),
		library: skillsvcv1.NewLibraryServiceClient(conn),
		health:  healthpb.NewHealthClient(conn),
	}
}

// as returns a context carrying identity metadata (key, value pairs).
func as(t *testing.T, kv ...string) context.Context {
	return metadata.AppendToOutgoingContext(t.Context(), kv...)
}

func asAlice(t *testing.T) context.Context {
	return grpctest.AsCaller(t.Context(), "alice", "t1", "")
}

// incompleteIdentities are metadata that identify no caller.
var incompleteIdentities = []struct {
	name string
	md   []string // key, value pairs
}{
	{"no metadata", nil},
	{"user only", []string{auth.UserKey, "alice"}},
	{"thread only", []string{auth.ThreadKey, "t1"}},
	{"ticket only", []string{auth.TicketKey, "T-1"}},
	{"blank user", []string{auth.UserKey, "  ", auth.ThreadKey, "t1"}},
	{"user given twice", []string{auth.UserKey, "alice", auth.UserKey, "bob", auth.ThreadKey, "t1"}},
}

func wantCode(t *testing.T, op string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: code %v (%v), want %v", op, got, err, want)
	}
}

// failingBucket fails every operation with an error that names a key.
func failingBucket(t *testing.T) *objstoretest.Faulty {
	t.Helper()
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	b.Fail("", "", errDisk)
	return b
}

// keys returns every key in bucket.
func keys(t *testing.T, bucket objstore.Bucket) []string {
	t.Helper()
	var out []string
	if err := objstore.Walk(t.Context(), bucket, "", func(o objstore.Object) error {
		out = append(out, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
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
	return receive(c.Download(ctx, req))
}

// export receives every message of an ExportSkill.
func export(ctx context.Context, c skillsvcv1.SkillsServiceClient, req *skillsvcv1.ExportSkillRequest) ([]*skillsvcv1.ExportSkillResponse, error) {
	return receive(c.ExportSkill(ctx, req))
}

// receive reads a server stream to its end.
func receive[T any](stream grpc.ServerStreamingClient[T], err error) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	var out []*T
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

// skillsRPC is one call of the skills service, reduced to its error.
type skillsRPC struct {
	name string
	call func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error
}

// everySkillsRPC calls each method with a valid request for the skill pdf.
var everySkillsRPC = []skillsRPC{
	{"ListCategories", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.ListCategories(ctx, &skillsvcv1.ListCategoriesRequest{})
		return err
	}},
	{"ListSkills", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
		return err
	}},
	{"FormatSkills", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
		return err
	}},
	{"GetSkill", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
		return err
	}},
	{"RenderSkill", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "pdf", Arguments: "a.pdf"})
		return err
	}},
	{"ReadSkillFile", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "reference.md"})
		return err
	}},
	{"SearchSkills", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf"})
		return err
	}},
	{"ExportSkill", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := export(ctx, c, &skillsvcv1.ExportSkillRequest{Path: "pdf"})
		return err
	}},
	{"SetSkillEnabled", func(ctx context.Context, c skillsvcv1.SkillsServiceClient) error {
		_, err := c.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: false})
		return err
	}},
}

// syncBuffer collects logs written by server goroutines (the name these
// tests already use for logtest.Buffer).
type syncBuffer = logtest.Buffer
