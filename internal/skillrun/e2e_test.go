package skillrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The contract tests run against the real skillsvc binary on MinIO, with
// default limits, and the test library uploaded with plain S3 PUTs.

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

var skillsvcBin = sync.OnceValues(func() (string, error) {
	dir, err := testserver.TempDir("skillrun-e2e-")
	if err != nil {
		return "", err
	}
	return testserver.BuildSkillsvc(context.Background(), dir)
})

// startRunnerServer serves runnerTestSkill in alice's library and returns
// a connection to it.
func startRunnerServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	objects := map[string]object{}
	for rel, body := range runnerTestSkill {
		objects["alice/skills/runner-test/"+rel] = object{body: body}
	}
	return startServerWithObjects(t, objects)
}

// object is a file of the test library: its body and, when set, its mode.
type object struct {
	body string
	mode fs.FileMode
}

// startServerWithObjects uploads objects (bucket key -> object) with plain
// S3 PUTs, the mode as x-amz-meta-mode, serves them with the real binary
// and returns a connection to it.
func startServerWithObjects(t *testing.T, objects map[string]object) *grpc.ClientConn {
	t.Helper()
	testserver.Integration(t, "MinIO and the skillsvc binary")
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	s3c := srv.Client(t)
	for key, o := range objects {
		in := &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader(o.body)}
		if o.mode != 0 {
			in.Metadata = map[string]string{"mode": fmt.Sprintf("%o", o.mode.Perm())}
		}
		if _, err := s3c.PutObject(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
		Bin:  bin,
		Args: append([]string{"--listen=127.0.0.1:0", "--http.listen="}, srv.S3Flags(bucket)...),
		Env:  srv.SkillsvcEnv(), Dir: t.TempDir(),
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(s.Addrs["serving"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func as(ctx context.Context, user, thread string) context.Context {
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(auth.UserKey, user, auth.ThreadKey, thread))
}

// requireBwrap fails (never skips) without bubblewrap when the servers are
// required, as under make test.
func requireBwrap(t *testing.T) {
	t.Helper()
	if err := bwrapWorks(); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("SKILLSVC_REQUIRE_SERVERS") == "1" {
			t.Fatalf("bubblewrap unavailable (apt-get install bubblewrap): %v", err)
		}
		t.Skipf("bubblewrap unavailable: %v (set SKILLSVC_REQUIRE_SERVERS=1 to fail instead)", err)
	}
}

func newRunner(t *testing.T, conn *grpc.ClientConn) *Runner {
	r := New(conn)
	r.CacheDir = t.TempDir()
	r.Warn = func(msg string) { t.Log("warning: " + msg) }
	return r
}

func wantKind(t *testing.T, err, kind error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	return e
}

// TestRunContract proves what the shared fixture (TestRunnerConformance,
// test/runner) does not: threads' workspaces kept apart, and the cache.
func TestRunContract(t *testing.T) {
	conn := startRunnerServer(t)
	ctx := as(t.Context(), "alice", "t1")

	t.Run("workspace written back", func(t *testing.T) {
		r := newRunner(t, conn)
		mine, other := as(t.Context(), "alice", "ws-mine"), as(t.Context(), "alice", "ws-other")
		for _, c := range []context.Context{mine, other} {
			if _, err := r.Files.Write(c, &skillsvcv1.WriteRequest{Path: "/workspace/in.txt", Content: "start\n"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Files.Write(mine, &skillsvcv1.WriteRequest{Path: "/workspace/keep/same.txt", Content: "untouched\n"}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Run(mine, "runner-test", "write.py", Options{JSONArgs: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(res.Written, ","); got != "/workspace/in.txt,/workspace/result.txt" {
			t.Errorf("written = %s (%s)", got, res.Output)
		}
		read := func(c context.Context, p string) string {
			resp, err := r.Files.Read(c, &skillsvcv1.ReadRequest{Path: p})
			if err != nil {
				return err.Error()
			}
			return resp.GetContent()
		}
		if got := read(mine, "/workspace/result.txt"); got != "written by the script" {
			t.Errorf("result.txt = %q", got)
		}
		if got := read(mine, "/workspace/in.txt"); got != "start\nand changed" {
			t.Errorf("in.txt = %q", got)
		}
		if got := read(other, "/workspace/in.txt"); got != "start" {
			t.Errorf("the other thread's in.txt = %q", got)
		}
		if _, err := r.Files.Stat(other, &skillsvcv1.StatRequest{Path: "/workspace/result.txt"}); status.Code(err) != codes.NotFound {
			t.Errorf("the other thread got result.txt: %v", err)
		}
		if _, err := r.Files.Stat(mine, &skillsvcv1.StatRequest{Path: "/workspace/.home/cache/x"}); status.Code(err) != codes.NotFound {
			t.Errorf(".home was written back: %v", err)
		}
		// Without the workspace nothing is read or written.
		res, err = r.Run(mine, "runner-test", "echo.py", Options{JSONArgs: json.RawMessage(`{}`), NoWorkspace: true})
		if err != nil || len(res.Written) != 0 {
			t.Errorf("no workspace: %v %+v", err, res)
		}
	})

	t.Run("materialize", func(t *testing.T) {
		r := newRunner(t, conn)
		m1, err := r.Materialize(ctx, "runner-test", "")
		if err != nil {
			t.Fatal(err)
		}
		if !m1.Fetched || m1.Bytes == 0 || filepath.Base(m1.Dir) != strings.TrimPrefix(m1.Digest, "sha256:") {
			t.Errorf("first: %+v", m1)
		}
		for rel, body := range runnerTestSkill {
			b, err := os.ReadFile(filepath.Join(m1.Dir, rel))
			st, _ := os.Stat(filepath.Join(m1.Dir, rel))
			if err != nil || string(b) != body || st.Mode().Perm()&0o222 != 0 {
				t.Errorf("%s: %v, mode %v", rel, err, st.Mode())
			}
		}
		// A second thread on the same library state copies nothing.
		m2, err := r.Materialize(as(t.Context(), "alice", "t2"), "runner-test", "")
		if err != nil || m2.Fetched || m2.Bytes != 0 || m2.Dir != m1.Dir {
			t.Errorf("second: %+v, %v", m2, err)
		}
		// A damaged cache (a file of another size) is not used: it is
		// fetched again. See Materialize for what is checked on use.
		p := filepath.Join(m1.Dir, "scripts", "bad.py")
		os.Chmod(filepath.Dir(p), 0o755)
		os.Chmod(p, 0o644)
		os.WriteFile(p, []byte("print('{}')  # altered\n"), 0o644)
		m3, err := r.Materialize(ctx, "runner-test", "")
		if err != nil || !m3.Fetched {
			t.Fatalf("after damage: %+v, %v", m3, err)
		}
		if b, _ := os.ReadFile(p); string(b) != runnerTestSkill["scripts/bad.py"] {
			t.Errorf("bad.py = %q", b)
		}
		if entries, _ := os.ReadDir(r.CacheDir); len(entries) != 1 {
			t.Errorf("cache holds %d entries, want 1", len(entries))
		}
	})
}

// otherExport answers every ExportSkill with the export of another skill,
// as when the skill changed between GetSkill and the fetch.
type otherExport struct {
	skillsvcv1.SkillsServiceClient
	path string
}

func (o otherExport) ExportSkill(ctx context.Context, in *skillsvcv1.ExportSkillRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[skillsvcv1.ExportSkillResponse], error) {
	return o.SkillsServiceClient.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: o.path, Version: in.GetVersion(), Layout: in.GetLayout()}, opts...)
}

// TestMaterializeMismatchAborted: an export that does not match the
// manifest GetSkill gave is VerifyFailed with the gRPC code ABORTED (fetch
// again), the code the Python and TypeScript clients give it, and nothing
// is kept.
func TestMaterializeMismatchAborted(t *testing.T) {
	objects := map[string]object{}
	for rel, body := range runnerTestSkill {
		objects["alice/skills/runner-test/"+rel] = object{body: body}
	}
	objects["alice/skills/other/SKILL.md"] = object{body: "---\nname: other\ndescription: Another skill.\n---\nOther.\n"}
	conn := startServerWithObjects(t, objects)
	r := newRunner(t, conn)
	r.Skills = otherExport{r.Skills, "other"}
	_, err := r.Materialize(as(t.Context(), "alice", "t1"), "runner-test", "")
	wantKind(t, err, ErrVerify)
	if got := status.Code(err); got != codes.Aborted {
		t.Errorf("code %v, want Aborted: %v", got, err)
	}
	if left, _ := os.ReadDir(r.CacheDir); len(left) != 0 {
		t.Errorf("kept %v after a mismatch", left)
	}
}
