package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// pinnedView is what a thread reads of alice's library, by every read an
// agent has: the listing, the prompt block, GetSkill, ReadSkillFile, and a
// Read of the file under /skills.
type pinnedView struct {
	list, block, raw, file, vfs, digest string
}

func readView(t *testing.T, ctx context.Context, sc skillsvcv1.SkillsServiceClient, fc skillsvcv1.FilesystemServiceClient) pinnedView {
	t.Helper()
	var v pinnedView
	ls, err := sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ls.GetSkills() {
		v.list += s.GetName() + ":" + s.GetDescription() + ";"
	}
	v.digest = ls.GetLibraryDigest()
	fm, err := sc.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	v.block = fm.GetText()
	g, err := sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	v.raw = g.GetRaw()
	rf, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "references/forms.md"})
	if err != nil {
		t.Fatal(err)
	}
	v.file = rf.GetContent()
	rd, err := fc.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/docs/pdf/references/forms.md"})
	if err != nil {
		t.Fatal(err)
	}
	v.vfs = rd.GetContent()
	return v
}

// TestPinnedThreadEndToEnd runs the binary on MinIO with the production
// defaults: thread t1 pins alice's library, thread t2 does not. A change
// through AdminService.PutLibraryFile, one uploaded with `aws s3 cp` and a
// LibraryService.PublishSkill reach t2 and never t1, whose every read
// returns the old bytes; a new pinned thread pins the library as it is
// then, and the pin is asked as well over JSON/HTTP and MCP.
func TestPinnedThreadEndToEnd(t *testing.T) {
	awsCLI := testserver.AWSCLI(t)
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...)
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	fc := skillsvcv1.NewFilesystemServiceClient(conn)
	adm := skillsvcv1.NewAdminServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pin := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, auth.PinKey, auth.PinLibrary)
	}
	t1 := pin(grpctest.AsCaller(ctx, "alice", "t1", ""))
	t2 := grpctest.AsCaller(ctx, "alice", "t2", "")

	old := readView(t, t1, sc, fc)
	if got := readView(t, t2, sc, fc); got != old {
		t.Fatalf("a new pin differs from the library:\npinned   %+v\nunpinned %+v", old, got)
	}

	// A change through the API: the SKILL.md of pdf.
	if _, err := adm.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "docs/pdf/SKILL.md",
		Data: []byte("---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF v2\nUse the new tool.\n"),
	}); err != nil {
		t.Fatal(err)
	}
	if got := readView(t, t1, sc, fc); got != old {
		t.Errorf("after PutLibraryFile the pinned thread reads\n %+v\nwant\n %+v", got, old)
	}
	api := readView(t, t2, sc, fc)
	if !strings.Contains(api.list, "pdf:Fill PDF forms.") || !strings.Contains(api.raw, "PDF v2") || !strings.Contains(api.block, "Fill PDF forms.") {
		t.Errorf("after PutLibraryFile the unpinned thread reads %+v", api)
	}

	// A change straight in the bucket: a reference rewritten with the AWS
	// CLI, then the operator's DropSkillIndex, as after any bulk upload
	// (else it is listed within --skills.index-max-stale).
	forms := filepath.Join(t.TempDir(), "forms.md")
	if err := os.WriteFile(forms, []byte("# Forms v2\nSign every page.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, awsCLI, "--endpoint-url", srv.Endpoint, "s3", "cp", "--only-show-errors", forms, "s3://"+bucket+"/alice/skills/docs/pdf/references/forms.md")
	cmd.Env = srv.AWSEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp: %v\n%s", err, out)
	}
	if _, err := adm.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{User: "alice"}); err != nil {
		t.Fatal(err)
	}
	if got := readView(t, t1, sc, fc); got != old {
		t.Errorf("after aws s3 cp the pinned thread reads\n %+v\nwant\n %+v", got, old)
	}
	now := readView(t, t2, sc, fc)
	if now.file != "# Forms v2\nSign every page.\n" || !strings.HasPrefix(now.vfs, "# Forms v2") || now.digest == api.digest {
		t.Errorf("after aws s3 cp the unpinned thread reads %+v", now)
	}

	// A publish through LibraryService: a new version of pdf, its files
	// replacing the live folder.
	lib := skillsvcv1.NewLibraryServiceClient(conn)
	if _, err := pushFolder(t2, lib, &skillsvcv1.PublishSkillHeader{Category: "docs", Name: "pdf"}, map[string]string{
		"SKILL.md":            "---\nname: pdf\ndescription: Publish PDF forms.\n---\n# PDF v3\nPublished.\n",
		"references/forms.md": "# Forms v3\nPublished forms.\n",
	}); err != nil {
		t.Fatal(err)
	}
	if got := readView(t, t1, sc, fc); got != old {
		t.Errorf("after PublishSkill the pinned thread reads\n %+v\nwant\n %+v", got, old)
	}
	now = readView(t, t2, sc, fc)
	if !strings.Contains(now.list, "pdf:Publish PDF forms.") || now.file != "# Forms v3\nPublished forms.\n" || !strings.Contains(now.raw, "PDF v3") {
		t.Errorf("after PublishSkill the unpinned thread reads %+v", now)
	}

	// A new pinned thread pins the library as it is now.
	if got := readView(t, pin(grpctest.AsCaller(ctx, "alice", "t3", "")), sc, fc); got != now {
		t.Errorf("a new pinned thread reads\n %+v\nwant\n %+v", got, now)
	}

	// Over JSON/HTTP the header asks the same.
	jsonList := func(thread string, pinned bool) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.SkillsService/ListSkills", strings.NewReader(`{}`))
		req.Header = grpctest.CallerHeader("alice", thread, "")
		req.Header.Set("Content-Type", "application/json")
		if pinned {
			req.Header.Set(auth.PinKey, auth.PinLibrary)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var r struct {
			LibraryDigest string `json:"libraryDigest"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &r) != nil {
			t.Fatalf("ListSkills over HTTP: %d %s", resp.StatusCode, body)
		}
		return r.LibraryDigest
	}
	if got := jsonList("t1", true); got != old.digest {
		t.Errorf("t1 pinned over HTTP lists %s, want its pinned %s", got, old.digest)
	}
	if got := jsonList("t1", false); got != now.digest {
		t.Errorf("t1 without the header over HTTP lists %s, want the live %s", got, now.digest)
	}

	// Over MCP too: the host sends the header with every request.
	mcpRead := func(pinned bool) string {
		t.Helper()
		h := grpctest.CallerHeader("alice", "t1", "")
		if pinned {
			h.Set(auth.PinKey, auth.PinLibrary)
		}
		s, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: "http://" + p.httpAddr + "/mcp", HTTPClient: mcptest.Client(h),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_skill_file", Arguments: map[string]any{"skill": "pdf", "path": "references/forms.md"}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("MCP read_skill_file: %v, %+v", err, res)
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		if text == nil {
			t.Fatalf("MCP read_skill_file: %+v", res.Content)
		}
		return text.Text
	}
	if got := mcpRead(true); !strings.Contains(got, "Fill forms carefully.") {
		t.Errorf("t1 pinned over MCP reads %q, want the old forms.md", got)
	}
	if got := mcpRead(false); !strings.Contains(got, "Published forms.") {
		t.Errorf("t1 unpinned over MCP reads %q, want the new forms.md", got)
	}
}

// TestPinExpiresEndToEnd: after the retention, a pinned thread's next call
// pins the library as it is then. The binary runs with a retention of a
// nanosecond, shorter than the time between any two calls, so every pin
// has expired by the thread's next call and the test needs no wait.
func TestPinExpiresEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	putLibrary(put)
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--library.pin-retention=1ns")...)
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	fc := skillsvcv1.NewFilesystemServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t1 := metadata.AppendToOutgoingContext(grpctest.AsCaller(ctx, "alice", "t1", ""), auth.PinKey, auth.PinLibrary)
	before := readView(t, t1, sc, fc)
	put("alice/skills/docs/pdf/references/forms.md", "# Forms v3\n")
	if _, err := skillsvcv1.NewAdminServiceClient(conn).DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{User: "alice"}); err != nil {
		t.Fatal(err)
	}
	after := readView(t, t1, sc, fc)
	if after.file != "# Forms v3\n" || after.digest == before.digest {
		t.Errorf("an expired pin still reads %+v", after)
	}
}

// TestPinSharesPublishedBlobs: a version published through LibraryService
// keeps its files in the blob space a pinned thread's snapshot copies
// into, under the same keys, for the user's library and the shared one:
// the first pinned call after the publish copies no blob of the published
// skills (every key holding their digests was there before it).
func TestPinSharesPublishedBlobs(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	lib := skillsvcv1.NewLibraryServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	as := func(user, thread string) context.Context {
		return grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims(user, thread, "")))
	}
	adminClaims := agentClaims("ops", "t0", "")
	adminClaims["scope"] = "skillsvc:admin"
	alice, admin := as("alice", "t0"), grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, adminClaims))

	published := map[string]bool{} // sha256 of every published file
	for _, pub := range []struct {
		ctx   context.Context
		lib   *skillsvcv1.LibraryRef
		name  string
		files map[string]string
	}{
		{alice, nil, "haiku", map[string]string{"SKILL.md": skillMDOf("haiku", "Write a haiku.", "5-7-5\n"), "examples/frog.md": "An old silent pond\n"}},
		{admin, &skillsvcv1.LibraryRef{Shared: true}, "sonnet", map[string]string{"SKILL.md": skillMDOf("sonnet", "Write a sonnet.", "14 lines\n"), "meter.md": "iambic pentameter\n"}},
	} {
		if _, err := pushFolder(pub.ctx, lib, &skillsvcv1.PublishSkillHeader{Library: pub.lib, Name: pub.name}, pub.files); err != nil {
			t.Fatalf("publish %s: %v", pub.name, err)
		}
		for _, data := range pub.files {
			sum := sha256.Sum256([]byte(data))
			published[hex.EncodeToString(sum[:])] = true
		}
	}
	before := map[string]bool{}
	for _, k := range bucketKeys(t, srv, bucket) {
		before[k] = true
	}

	t1 := metadata.AppendToOutgoingContext(as("alice", "t1"), auth.PinKey, auth.PinLibrary)
	ls, err := sc.ListSkills(t1, &skillsvcv1.ListSkillsRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ls.GetSkills() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "haiku") || !slices.Contains(names, "sonnet") {
		t.Fatalf("the pinned thread lists %v, want haiku and sonnet", names)
	}
	var copied []string
	newBlobs := 0
	for _, k := range bucketKeys(t, srv, bucket) {
		if before[k] || !strings.Contains(k, "/blobs/") {
			continue
		}
		newBlobs++
		if published[k[strings.LastIndex(k, "/")+1:]] {
			copied = append(copied, k)
		}
	}
	if newBlobs == 0 {
		t.Fatal("the pin copied no blob at all: the test library's other skills should have been copied")
	}
	if len(copied) > 0 {
		t.Errorf("the first pinned call copied blobs of published files again: %v", copied)
	}
	// The pinned thread reads the published bytes from those blobs.
	rf, err := sc.ReadSkillFile(t1, &skillsvcv1.ReadSkillFileRequest{Path: "haiku", File: "examples/frog.md"})
	if err != nil || rf.GetContent() != "An old silent pond\n" {
		t.Errorf("pinned read of a published file: %q, %v", rf.GetContent(), err)
	}
}
