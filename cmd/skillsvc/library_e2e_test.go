package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file drive LibraryService, the authors' path, through
// the binary on MinIO in jwt mode.

// pushFolder publishes files (path → content) as one PublishSkill stream,
// each file in two chunks.
func pushFolder(ctx context.Context, lib skillsvcv1.LibraryServiceClient, h *skillsvcv1.PublishSkillHeader, files map[string]string) (*skillsvcv1.PublishSkillResponse, error) {
	stream, err := lib.PublishSkill(ctx)
	if err != nil {
		return nil, err
	}
	if err := stream.Send(&skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Header{Header: h}}); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		data := []byte(files[p])
		for _, part := range [][]byte{data[:len(data)/2], data[len(data)/2:]} {
			if err := stream.Send(&skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Chunk{Chunk: &skillsvcv1.FileChunk{Path: p, Data: part}}}); err != nil {
				return nil, err
			}
		}
	}
	return stream.CloseAndRecv()
}

func skillMDOf(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

// bucketKeys lists every object of the bucket.
func bucketKeys(t *testing.T, srv *testserver.MinIO, bucket string) []string {
	t.Helper()
	var keys []string
	if err := objstore.Walk(t.Context(), s3.NewWithClient(srv.Client(t), bucket), "", func(o objstore.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestLibraryEndToEnd: a valid push is listed over gRPC and /mcp, an invalid
// one is refused with every problem and writes nothing, versions are
// listed, pinned, labelled and rolled back, and a pending shared version is
// seen by nobody but its author and admins until an admin approves it.
func TestLibraryEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f, "--library.review", "--audit.output="+auditFile)...)...)
	conn := dial(t, p.addr)
	lib := skillsvcv1.NewLibraryServiceClient(conn)
	sk := skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	as := func(user string) context.Context {
		return grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims(user, "t1", "")))
	}
	adminClaims := agentClaims("ops", "t1", "")
	adminClaims["scope"] = "skillsvc:admin"
	admin := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, adminClaims))
	alice, bob, carol := as("alice"), as("bob"), as("carol")

	// A valid push is listed, with its version id as manifest_digest.
	v1files := map[string]string{"SKILL.md": skillMDOf("pdf", "Read PDFs.", "Version one.\n"), "scripts/run.sh": "#!/bin/sh\necho 1\n", "notes.md": "v1 notes\n"}
	r1, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Category: "docs", Name: "pdf", Message: "first"}, v1files)
	if err != nil {
		t.Fatal(err)
	}
	v1 := r1.GetVersion().GetId()
	if !strings.HasPrefix(v1, "sha256:") || r1.GetVersion().GetAuthor() != "agent-alice" || r1.GetSkill().GetManifestDigest() != v1 {
		t.Fatalf("publish = %v", r1)
	}
	list, err := sk.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.GetSkills(), func(s *skillsvcv1.SkillSummary) bool { return s.GetName() == "pdf" && s.GetManifestDigest() == v1 }) {
		t.Fatalf("ListSkills after a push: %v", list.GetSkills())
	}
	m := newMCPRaw(t, p)
	aliceMCP := bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	sid := m.open(aliceMCP)
	if _, msg := m.post(aliceMCP, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`); msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), "skill://docs/pdf/SKILL.md") {
		t.Fatalf("skills/list after a push: %+v", msg)
	}

	// An invalid push: every problem, nothing written.
	before := bucketKeys(t, srv, bucket)
	_, err = pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "csv"}, map[string]string{
		"SKILL.md": "---\nname: tables\n---\nno description\n", "a//b.md": "x", "sub/SKILL.md": skillMDOf("sub", "d", ""),
	})
	grpctest.WantCode(t, err, codes.InvalidArgument)
	var rules []string
	var violations int
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *skillsvcv1.SkillProblems:
			for _, pr := range d.GetProblems() {
				rules = append(rules, pr.GetRule())
			}
		case *errdetails.BadRequest:
			violations = len(d.GetFieldViolations())
		}
	}
	slices.Sort(rules)
	if want := []string{"description-required", "name-matches-folder", "nested-skill", "path-canonical"}; !slices.Equal(rules, want) || violations != len(want) {
		t.Fatalf("problems %q (%d violations), want %q", rules, violations, want)
	}
	if after := bucketKeys(t, srv, bucket); !slices.Equal(before, after) {
		t.Fatalf("an invalid push wrote: before %q, after %q", before, after)
	}
	// A push past the size limit is refused as it arrives.
	_, err = pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "big"}, map[string]string{"SKILL.md": skillMDOf("big", "d", ""), "blob.bin": strings.Repeat("x", 16<<20)})
	grpctest.WantCode(t, err, codes.InvalidArgument)
	if after := bucketKeys(t, srv, bucket); !slices.Equal(before, after) {
		t.Fatalf("an oversized push wrote %q", after)
	}

	// Versions: v2 drops notes.md; pin v1 by prefix and by label; roll back.
	v2files := map[string]string{"SKILL.md": skillMDOf("pdf", "Read PDFs.", "Version two.\n"), "scripts/run.sh": "#!/bin/sh\necho 2\n"}
	r2, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Category: "docs", Name: "pdf", IfLatest: v1}, v2files)
	if err != nil {
		t.Fatal(err)
	}
	v2 := r2.GetVersion().GetId()
	if !slices.Equal(r2.GetRemovedFiles(), []string{"notes.md"}) {
		t.Fatalf("removed = %q", r2.GetRemovedFiles())
	}
	vs, err := lib.ListSkillVersions(alice, &skillsvcv1.ListSkillVersionsRequest{Name: "pdf"})
	if err != nil || len(vs.GetVersions()) != 2 || vs.GetVersions()[0].GetId() != v2 || vs.GetLabels()["latest"] != v2 {
		t.Fatalf("versions = %v, %v", vs, err)
	}
	// The JSON gateway serves LibraryService too.
	hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.LibraryService/ListSkillVersions", strings.NewReader(`{"name":"pdf"}`))
	hreq.Header.Set("Authorization", "Bearer "+signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	hbody, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK || !strings.Contains(string(hbody), v1) || !strings.Contains(string(hbody), v2) {
		t.Fatalf("JSON ListSkillVersions: %d %s", hresp.StatusCode, hbody)
	}
	// PublishSkill over JSON: the stream's messages as JSON lines.
	md := base64.StdEncoding.EncodeToString([]byte(skillMDOf("json-pushed", "Pushed over JSON.", "Body.\n")))
	hreq, _ = http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.LibraryService/PublishSkill",
		strings.NewReader(`{"header":{"name":"json-pushed"}}`+"\n"+`{"chunk":{"path":"SKILL.md","data":"`+md+`"}}`+"\n"))
	hreq.Header.Set("Authorization", "Bearer "+signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	if hresp, err = http.DefaultClient.Do(hreq); err != nil {
		t.Fatal(err)
	}
	hbody, _ = io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK || !strings.Contains(string(hbody), `"id":"sha256:`) {
		t.Fatalf("JSON PublishSkill: %d %s", hresp.StatusCode, hbody)
	}
	pinned, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "pdf", Version: v1[7:19]})
	if err != nil || pinned.GetRaw() != v1files["SKILL.md"] || pinned.GetSkill().GetManifestDigest() != v1 || len(pinned.GetFiles()) != 2 {
		t.Fatalf("GetSkill pinned to v1 = %v, %v", pinned, err)
	}
	notes, err := sk.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "notes.md", Version: v1})
	if err != nil || notes.GetContent() != "v1 notes\n" {
		t.Fatalf("notes.md of v1 = %v, %v", notes, err)
	}
	if _, err := lib.SetSkillLabel(alice, &skillsvcv1.SetSkillLabelRequest{Name: "pdf", Label: "production", Version: v1}); err != nil {
		t.Fatal(err)
	}
	rendered, err := sk.RenderSkill(alice, &skillsvcv1.RenderSkillRequest{Path: "pdf", Version: "production"})
	if err != nil || !strings.Contains(rendered.GetText(), "Version one.") {
		t.Fatalf("RenderSkill at production = %v, %v", rendered, err)
	}
	live, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil || live.GetRaw() != v2files["SKILL.md"] {
		t.Fatalf("the live copy is not v2: %v, %v", live, err)
	}
	exp, err := sk.ExportSkill(alice, &skillsvcv1.ExportSkillRequest{Path: "pdf", Version: "production"})
	if err != nil {
		t.Fatal(err)
	}
	if got := untar(t, exp); got["pdf/notes.md"] != "v1 notes\n" || got["pdf/SKILL.md"] != v1files["SKILL.md"] {
		t.Fatalf("export of production = %v", got)
	}
	if _, err := lib.RollbackSkill(alice, &skillsvcv1.RollbackSkillRequest{Name: "pdf", Version: "production"}); err != nil {
		t.Fatal(err)
	}
	live, err = sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil || live.GetRaw() != v1files["SKILL.md"] || live.GetSkill().GetManifestDigest() != v1 {
		t.Fatalf("after rollback = %v, %v", live, err)
	}
	// Another user acts on no library but its own.
	_, err = lib.DeleteSkill(bob, &skillsvcv1.DeleteSkillRequest{Library: &skillsvcv1.LibraryRef{User: "alice"}, Name: "pdf"})
	grpctest.WantCode(t, err, codes.PermissionDenied)

	// Review: bob's shared push is pending, unseen by carol, until approved.
	shared := &skillsvcv1.LibraryRef{Shared: true}
	pend, err := pushFolder(bob, lib, &skillsvcv1.PublishSkillHeader{Library: shared, Name: "sql", Message: "please"}, map[string]string{"SKILL.md": skillMDOf("sql", "Query databases.", "Body.\n")})
	if err != nil || pend.GetVersion().GetState() != skillsvcv1.VersionState_VERSION_STATE_PENDING || pend.GetSkill() != nil {
		t.Fatalf("pending publish = %v, %v", pend, err)
	}
	sqlID := pend.GetVersion().GetId()
	listed := func(ctx context.Context) bool {
		t.Helper()
		l, err := sk.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(l.GetSkills(), func(s *skillsvcv1.SkillSummary) bool { return s.GetName() == "sql" })
	}
	if listed(carol) || listed(bob) {
		t.Fatal("a pending version is live")
	}
	_, err = sk.GetSkill(carol, &skillsvcv1.GetSkillRequest{Path: "sql", Version: sqlID})
	grpctest.WantCode(t, err, codes.NotFound)
	if got, err := sk.GetSkill(bob, &skillsvcv1.GetSkillRequest{Path: "sql", Version: sqlID}); err != nil || !strings.Contains(got.GetRaw(), "Query databases.") {
		t.Fatalf("the author reads its pending version: %v, %v", got, err)
	}
	for user, want := range map[context.Context]int{carol: 0, bob: 1, admin: 1} {
		vs, err := lib.ListSkillVersions(user, &skillsvcv1.ListSkillVersionsRequest{Library: shared, Name: "sql"})
		if err != nil || len(vs.GetVersions()) != want {
			t.Fatalf("versions seen = %v, %v; want %d", vs, err, want)
		}
	}
	_, err = lib.ReviewSkillVersion(bob, &skillsvcv1.ReviewSkillVersionRequest{Library: shared, Name: "sql", Version: sqlID, Approve: true})
	grpctest.WantCode(t, err, codes.PermissionDenied)
	if _, err := lib.ReviewSkillVersion(admin, &skillsvcv1.ReviewSkillVersionRequest{Library: shared, Name: "sql", Version: sqlID, Approve: true, Comment: "ok"}); err != nil {
		t.Fatal(err)
	}
	if !listed(carol) {
		t.Fatal("an approved version is not listed")
	}
	metrics := scrape(t, p)
	for _, want := range []string{
		`skillsvc_library_changes_total{op="publish",result="ok"} 3`,
		`skillsvc_library_changes_total{op="publish",result="invalid"} 1`, // the oversized one is refused as it arrives,
		`skillsvc_library_changes_total{op="pending",result="ok"} 1`,
		`skillsvc_library_changes_total{op="review",result="ok"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var reviewLine, pendingLine string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "ReviewSkillVersion") && strings.Contains(line, `"result":"OK"`) {
			reviewLine = line
		}
		if strings.Contains(line, "PublishSkill") && strings.Contains(line, `"shared":true`) && strings.Contains(line, `"skill":"sql"`) {
			pendingLine = line
		}
	}
	if pendingLine == "" {
		t.Errorf("no audit line of bob's shared publish:\n%s", data)
	}
	if !strings.Contains(reviewLine, `"approve":true`) || !strings.Contains(reviewLine, `"version":"`+sqlID+`"`) || !strings.Contains(reviewLine, `"comment":"ok"`) {
		t.Fatalf("no audit line of the approval:\n%s", data)
	}
}

// untar reads an ExportSkill stream's archive.
func untar(t *testing.T, stream skillsvcv1.SkillsService_ExportSkillClient) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(msg.GetData())
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = string(b)
	}
}

// TestPublishNeverHalfSeenEndToEnd: while versions 1..n of a skill are
// pushed, a reader loops over GetSkill and a ReadSkillFile of every file
// it lists. Each version k has SKILL.md saying "version k" and the same
// files, each holding k. The property: whenever GetSkill serves the
// SKILL.md of version k, every file it lists exists and reads as a version
// of at least k (never an older or missing file): a publish writes the
// other files before SKILL.md.
func TestPublishNeverHalfSeenEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	// Every call lists the bucket (no index kept between calls): the reader
	// sees each state the live copy passes through, as a replica whose
	// index revalidates mid-publish would.
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f, "--skills.index-refresh=0")...)...)
	// One user reads and writes in a loop: within its per-user rate.
	conn := dialWithinLimits(t, p.addr)
	lib := skillsvcv1.NewLibraryServiceClient(conn)
	sk := skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	writer := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "writer", "")))
	reader := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "reader", "")))
	files := []string{"a.md", "b.md", "references/c.md"}
	version := func(k int) map[string]string {
		out := map[string]string{"SKILL.md": skillMDOf("tick", "Counts versions.", fmt.Sprintf("version %d\n", k))}
		for _, f := range files {
			out[f] = strconv.Itoa(k)
		}
		return out
	}
	if _, err := pushFolder(writer, lib, &skillsvcv1.PublishSkillHeader{Name: "tick"}, version(1)); err != nil {
		t.Fatal(err)
	}
	const n = 12
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for k := 2; k <= n; k++ {
			// A publish is a stream, which dialWithinLimits does not try
			// again: refused by the user's rate (the reader's loop shares
			// it), it is, after the delay the server gives.
			for {
				_, err := pushFolder(writer, lib, &skillsvcv1.PublishSkillHeader{Name: "tick"}, version(k))
				if delay, limited := retryinfo.Delay(err); status.Code(err) == codes.ResourceExhausted && limited {
					select {
					case <-time.After(delay):
						continue
					case <-ctx.Done():
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				break
			}
		}
	}()
	reads, seen := 0, map[int]bool{}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true // one more round after the last push
		default:
		}
		g, err := sk.GetSkill(reader, &skillsvcv1.GetSkillRequest{Path: "tick"})
		if err != nil {
			t.Fatalf("GetSkill during pushes: %v", err)
		}
		var k int
		if _, err := fmt.Sscanf(g.GetBody(), "version %d", &k); err != nil {
			t.Fatalf("body %q", g.GetBody())
		}
		seen[k] = true
		var listed []string
		for _, f := range g.GetFiles() {
			listed = append(listed, f.GetPath())
		}
		slices.Sort(listed)
		if !slices.Equal(listed, files) {
			t.Fatalf("SKILL.md of version %d listed with files %q, want %q", k, listed, files)
		}
		for _, file := range listed {
			r, err := sk.ReadSkillFile(reader, &skillsvcv1.ReadSkillFileRequest{Path: "tick", File: file})
			if err != nil {
				t.Fatalf("version %d: %s: %v", k, file, err)
			}
			if got, _ := strconv.Atoi(r.GetContent()); got < k {
				t.Fatalf("SKILL.md of version %d served with %s of version %d", k, file, got)
			}
			reads++
		}
	}
	wg.Wait()
	if !seen[n] {
		t.Fatalf("the last version was never seen (saw %v)", seen)
	}
	t.Logf("%d file reads over versions %v", reads, seen)
}

// TestPublishReachesEveryReplica: with events and Redis, a publish through
// one replica is listed by another at once, although both keep indexes
// for ten minutes: the publish is told to the other replicas as a bucket
// event would be.
func TestPublishReachesEveryReplica(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	tokenFile := filepath.Join(t.TempDir(), "webhook-token")
	if err := os.WriteFile(tokenFile, []byte(webhookToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()),
		"--skills.index-refresh=10m", "--skills.index-max-stale=10m", "--events.webhook-token-file="+tokenFile)...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	bMetrics := metricsFor(t, b)
	pollUntil(t, 30*time.Second, "B subscribed to the other replicas' invalidations", func() bool {
		return bMetrics.value(t, "skillsvc_events_resyncs_total") >= 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	onB := skillsvcv1.NewSkillsServiceClient(dial(t, b.addr))
	if got, err := skillNames(alice, onB); err != nil || got != "" {
		t.Fatalf("B lists %q before the publish, %v", got, err)
	}
	lib := skillsvcv1.NewLibraryServiceClient(dial(t, a.addr))
	if _, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "changelog"}, map[string]string{"SKILL.md": skillMDOf("changelog", "Write the changelog.", "List the changes.\n")}); err != nil {
		t.Fatal(err)
	}
	published := time.Now()
	// Indexes are kept ten minutes here, so only the publish's notice can
	// show it; the bound only bounds a hang.
	pollUntil(t, 30*time.Second, "B lists the skill published through A", func() bool {
		got, err := skillNames(alice, onB)
		return err == nil && got == "changelog"
	})
	t.Logf("on B %v after the publish returned", time.Since(published).Round(time.Millisecond))
}
