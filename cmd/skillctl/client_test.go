package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun"
)

// fakeServer records what skillctl sends and answers as the test says: the
// client logic (flags, chunking, output, errors) proven without a real
// server.
type fakeServer struct {
	skillsvcv1.UnimplementedLibraryServiceServer
	skillsvcv1.UnimplementedSkillsServiceServer

	mu       sync.Mutex
	md       metadata.MD
	header   *skillsvcv1.PublishSkillHeader
	chunks   []*skillsvcv1.FileChunk
	requests []any
	// publishErr, when set, is PublishSkill's answer after reading it all.
	publishErr error
	// export is ExportSkill's archive, sent in 1000-byte messages.
	export []byte
	// watches answers each WatchSkills call in turn: messages, then the
	// error ending the stream.
	watches []watchScript
	watchN  int
}

type watchScript struct {
	msgs []*skillsvcv1.WatchSkillsResponse
	end  error
}

func (f *fakeServer) record(ctx context.Context, req any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.md, _ = metadata.FromIncomingContext(ctx)
	f.requests = append(f.requests, req)
}

func (f *fakeServer) last() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return nil
	}
	return f.requests[len(f.requests)-1]
}

var testVersion = &skillsvcv1.SkillVersion{
	Id: "sha256:3f2a9c1b7d4e0000000000000000000000000000000000000000000000000000", Name: "pdf",
	FileCount: 3, TotalBytes: 600 << 10, Labels: []string{"latest", "production"}, State: skillsvcv1.VersionState_VERSION_STATE_PUBLISHED,
}

func (f *fakeServer) PublishSkill(stream grpc.ClientStreamingServer[skillsvcv1.PublishSkillRequest, skillsvcv1.PublishSkillResponse]) error {
	f.record(stream.Context(), "publish")
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		f.mu.Lock()
		if h := m.GetHeader(); h != nil {
			f.header = h
		} else {
			f.chunks = append(f.chunks, m.GetChunk())
		}
		f.mu.Unlock()
	}
	if f.publishErr != nil {
		return f.publishErr
	}
	return stream.SendAndClose(&skillsvcv1.PublishSkillResponse{
		Version:  testVersion,
		Problems: []*skillsvcv1.SkillProblem{{Severity: skillsvcv1.SkillProblem_SEVERITY_WARNING, File: "SKILL.md", Field: "description", Rule: "description-length", Message: "description is 1100 characters, the limit is 1024"}},
		Valid:    true, RemovedFiles: []string{"old.md"},
	})
}

func (f *fakeServer) ListSkillVersions(ctx context.Context, req *skillsvcv1.ListSkillVersionsRequest) (*skillsvcv1.ListSkillVersionsResponse, error) {
	f.record(ctx, req)
	if req.GetPageToken() == "" {
		return &skillsvcv1.ListSkillVersionsResponse{Versions: []*skillsvcv1.SkillVersion{testVersion}, NextPageToken: "p2"}, nil
	}
	old := &skillsvcv1.SkillVersion{Id: "sha256:0000aaaabbbb1111", Name: "pdf", State: skillsvcv1.VersionState_VERSION_STATE_PENDING, Author: "bob", Message: "try this"}
	return &skillsvcv1.ListSkillVersionsResponse{Versions: []*skillsvcv1.SkillVersion{old}, Labels: map[string]string{"latest": testVersion.Id}}, nil
}

func (f *fakeServer) SetSkillLabel(ctx context.Context, req *skillsvcv1.SetSkillLabelRequest) (*skillsvcv1.SetSkillLabelResponse, error) {
	f.record(ctx, req)
	if req.GetVersion() == "" {
		return &skillsvcv1.SetSkillLabelResponse{}, nil
	}
	return &skillsvcv1.SetSkillLabelResponse{Version: testVersion}, nil
}

func (f *fakeServer) RollbackSkill(ctx context.Context, req *skillsvcv1.RollbackSkillRequest) (*skillsvcv1.RollbackSkillResponse, error) {
	f.record(ctx, req)
	if req.GetVersion() == "missing" {
		return nil, status.Error(codes.NotFound, "no version missing of pdf")
	}
	return &skillsvcv1.RollbackSkillResponse{Version: testVersion, RemovedFiles: []string{"new.md"}}, nil
}

func (f *fakeServer) ReviewSkillVersion(ctx context.Context, req *skillsvcv1.ReviewSkillVersionRequest) (*skillsvcv1.ReviewSkillVersionResponse, error) {
	f.record(ctx, req)
	return &skillsvcv1.ReviewSkillVersionResponse{Version: testVersion}, nil
}

func (f *fakeServer) DeleteSkill(ctx context.Context, req *skillsvcv1.DeleteSkillRequest) (*skillsvcv1.DeleteSkillResponse, error) {
	f.record(ctx, req)
	return &skillsvcv1.DeleteSkillResponse{RemovedFiles: 3}, nil
}

func (f *fakeServer) ExportSkill(req *skillsvcv1.ExportSkillRequest, stream grpc.ServerStreamingServer[skillsvcv1.ExportSkillResponse]) error {
	f.record(stream.Context(), req)
	if req.GetPath() == "missing" {
		return status.Error(codes.NotFound, "no skill missing")
	}
	for b := f.export; len(b) > 0; {
		n := min(len(b), 1000)
		if err := stream.Send(&skillsvcv1.ExportSkillResponse{Data: b[:n]}); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (f *fakeServer) WatchSkills(req *skillsvcv1.WatchSkillsRequest, stream grpc.ServerStreamingServer[skillsvcv1.WatchSkillsResponse]) error {
	f.record(stream.Context(), req)
	f.mu.Lock()
	if f.watchN >= len(f.watches) {
		f.mu.Unlock()
		return status.Error(codes.ResourceExhausted, "no more scripted watches")
	}
	w := f.watches[f.watchN]
	f.watchN++
	f.mu.Unlock()
	for _, m := range w.msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	if w.end == nil {
		<-stream.Context().Done() // held open, as a real watch is
		return nil
	}
	return w.end
}

// startFake serves f on a loopback port and returns the environment that
// points skillctl at it.
func startFake(t *testing.T, f *fakeServer) map[string]string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	skillsvcv1.RegisterLibraryServiceServer(s, f)
	skillsvcv1.RegisterSkillsServiceServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return map[string]string{"SKILLCTL_TARGET": lis.Addr().String(), "SKILLCTL_USER": "alice"}
}

// TestPushStreamsTheFolder: the header carries the flags, the files go in
// 256 KiB chunks (an empty file as one empty chunk), dot files stay home,
// and the identity travels as metadata.
func TestPushStreamsTheFolder(t *testing.T) {
	f := &fakeServer{}
	env := startFake(t, f)
	big := bytes.Repeat([]byte("0123456789abcdef"), (600<<10)/16) // 600 KiB: three chunks
	dir := writeSkill(t, "pdf", map[string]string{
		"SKILL.md": "---\nname: pdf\ndescription: PDFs.\n---\nbody\n", "scripts/big.txt": string(big), "empty.txt": "", ".git/HEAD": "ref",
	})
	r := runCtl(t, env, "push", dir, "--category", "docs", "-l", "production", "-l", "beta", "-m", "fix forms", "--library", "shared", "--thread", "t9")
	if r.code != exitOK {
		t.Fatalf("push: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	h := f.header
	if h.GetName() != "pdf" || h.GetCategory() != "docs" || strings.Join(h.GetLabels(), ",") != "production,beta" ||
		h.GetMessage() != "fix forms" || !h.GetLibrary().GetShared() || h.GetValidateOnly() {
		t.Errorf("header = %v", h)
	}
	got := map[string][]byte{}
	counts := map[string]int{}
	for _, c := range f.chunks {
		if len(c.GetData()) > chunkSize {
			t.Errorf("chunk of %s holds %d bytes", c.GetPath(), len(c.GetData()))
		}
		got[c.GetPath()] = append(got[c.GetPath()], c.GetData()...)
		counts[c.GetPath()]++
	}
	if !bytes.Equal(got["scripts/big.txt"], big) || counts["scripts/big.txt"] != 3 {
		t.Errorf("big.txt: %d bytes in %d chunks", len(got["scripts/big.txt"]), counts["scripts/big.txt"])
	}
	if _, ok := got["empty.txt"]; !ok || counts["empty.txt"] != 1 {
		t.Errorf("empty.txt sent in %d chunks", counts["empty.txt"])
	}
	if _, ok := got[".git/HEAD"]; ok || len(counts) != 3 {
		t.Errorf("files sent: %v", counts)
	}
	if f.md.Get("x-skillsvc-user")[0] != "alice" || f.md.Get("x-skillsvc-thread")[0] != "t9" {
		t.Errorf("metadata = %v", f.md)
	}
	for _, want := range []string{"published pdf version " + testVersion.Id, "labels: latest, production", "removed: old.md", "warning [description-length]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// On a terminal a progress bar goes to stderr, never stdout; --quiet
	// turns it off.
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{"SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "c.yaml")}[k] + env[k]
	}
	if code := run(t.Context(), []string{"push", dir}, &out, &errb, getenv, true); code != exitOK || !strings.Contains(errb.String(), "push pdf") || strings.Contains(out.String(), "push pdf") {
		t.Errorf("push on a terminal: exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(t.Context(), []string{"push", "-q", dir}, &out, &errb, getenv, true); code != exitOK || errb.Len() != 0 {
		t.Errorf("push -q on a terminal: exit %d, stderr %q", code, errb.String())
	}
	// --json prints the server's answer; --quiet only the id.
	r = runCtl(t, env, "push", dir, "--json")
	var resp map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp["version"].(map[string]any)["id"] != testVersion.Id {
		t.Errorf("--json = %v, %s", err, r.stdout)
	}
	if r := runCtl(t, env, "push", dir, "-q"); strings.TrimSpace(r.stdout) != testVersion.Id {
		t.Errorf("-q = %q", r.stdout)
	}
	// A team's library.
	if r := runCtl(t, env, "push", dir, "-q", "--library", "team:legal"); r.code != exitOK || f.header.GetLibrary().GetTeam() != "legal" {
		t.Errorf("push --library team:legal: exit %d, header %v", r.code, f.header)
	}
}

// TestPushRefused: a folder the local check refuses is never sent; one the
// server refuses lists every problem of its SkillProblems detail; both
// exit 1. Other failures exit 3 and 4.
func TestPushRefused(t *testing.T) {
	f := &fakeServer{}
	env := startFake(t, f)
	bad := writeSkill(t, "pdf", map[string]string{"SKILL.md": "---\nname: other\n---\n"})
	r := runCtl(t, env, "push", bad)
	if r.code != exitInvalid || f.last() != nil || !strings.Contains(r.stderr, "name-matches-folder") || !strings.Contains(r.stderr, "description-required") {
		t.Fatalf("local refusal: exit %d, server saw %v\n%s", r.code, f.last(), r.stderr)
	}

	st, _ := status.New(codes.InvalidArgument, "pdf is not a valid skill: 2 problems").WithDetails(&skillsvcv1.SkillProblems{Problems: []*skillsvcv1.SkillProblem{
		{Severity: skillsvcv1.SkillProblem_SEVERITY_ERROR, File: "SKILL.md", Field: "name", Rule: "name-matches-folder", Value: "other", Message: "name must equal the folder"},
		{Severity: skillsvcv1.SkillProblem_SEVERITY_ERROR, File: "SKILL.md", Field: "description", Rule: "description-required", Message: "description is required"},
	}})
	f.publishErr = st.Err()
	r = runCtl(t, env, "push", bad, "--skip-local-check")
	if r.code != exitInvalid {
		t.Fatalf("server refusal: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"InvalidArgument: pdf is not a valid skill", `error [name-matches-folder] SKILL.md: name: name must equal the folder (value "other")`, "error [description-required]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	good := writeSkill(t, "pdf", map[string]string{"SKILL.md": "---\nname: pdf\ndescription: x\n---\n"})
	f.publishErr = status.Error(codes.PermissionDenied, "only admins publish to the shared library")
	if r := runCtl(t, env, "push", good); r.code != exitServer || !strings.Contains(r.stderr, "PermissionDenied: only admins") {
		t.Errorf("permission denied: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "rollback", "pdf", "missing"); r.code != exitNotFound {
		t.Errorf("not found: exit %d\n%s", r.code, r.stderr)
	}
	// No server: the refused connection, not a deadline, ends the call
	// (the default deadline of a minute, so a loaded machine's slow dial
	// does not turn it into DeadlineExceeded).
	if r := runCtl(t, map[string]string{"SKILLCTL_TARGET": "127.0.0.1:1", "SKILLCTL_USER": "a"}, "push", good); r.code != exitServer || !strings.Contains(r.stderr, "Unavailable") {
		t.Errorf("no server: exit %d\n%s", r.code, r.stderr)
	}
}

// TestVersionCommands: each command sends the request its arguments
// describe and prints the answer.
func TestVersionCommands(t *testing.T) {
	f := &fakeServer{}
	env := startFake(t, f)
	for _, tc := range []struct {
		args []string
		req  string // the request, as protojson-ish text it must contain
		out  []string
	}{
		{[]string{"versions", "pdf"}, `page_token:"p2"`, []string{"VERSION", "sha256:3f2a9c1b7d4e ", "latest,production", "pending", "bob", "try this"}},
		{[]string{"versions", "pdf", "--state", "pending", "--library", "bob"}, `library:{user:"bob"} name:"pdf"`, nil},
		{[]string{"label", "pdf", "sha256:3f2a9c1b7d4e", "production"}, `name:"pdf" label:"production" version:"sha256:3f2a9c1b7d4e"`, []string{"labelled production: pdf version " + testVersion.Id}},
		{[]string{"label", "--remove", "pdf", "beta"}, `name:"pdf" label:"beta"`, []string{"removed label beta of pdf"}},
		{[]string{"rollback", "pdf", "production", "--if-latest", "sha256:aaa"}, `version:"production" if_latest:"sha256:aaa"`, []string{"rolled back pdf", "removed: new.md"}},
		{[]string{"approve", "pdf", "sha256:3f2a9c1b7d4e", "--library", "shared", "-c", "ok"}, `library:{shared:true} name:"pdf" version:"sha256:3f2a9c1b7d4e" approve:true comment:"ok"`, []string{"approved pdf"}},
		{[]string{"reject", "pdf", "sha256:3f2a9c1b7d4e", "-c", "no"}, `comment:"no"`, []string{"rejected pdf"}},
		{[]string{"rm", "pdf"}, `name:"pdf"`, []string{"deleted pdf (3 files)"}},
		// A team's library, as every command names it.
		{[]string{"versions", "pdf", "--library", "team:legal"}, `library:{team:"legal"} name:"pdf"`, nil},
		{[]string{"rollback", "pdf", "production", "--library", "team:legal"}, `library:{team:"legal"} name:"pdf" version:"production"`, nil},
		{[]string{"approve", "pdf", "sha256:3f2a9c1b7d4e", "--library", "team:legal"}, `library:{team:"legal"} name:"pdf"`, nil},
		{[]string{"rm", "pdf", "--library", "team:legal"}, `library:{team:"legal"} name:"pdf"`, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCtl(t, env, tc.args...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			req := strings.ReplaceAll(protoText(f.last()), "  ", " ")
			if !strings.Contains(req, tc.req) {
				t.Errorf("request %s lacks %s", req, tc.req)
			}
			for _, w := range tc.out {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
	if r := runCtl(t, env, "versions", "pdf", "--state", "nope"); r.code != exitUsage {
		t.Errorf("bad --state: exit %d", r.code)
	}
	if r := runCtl(t, env, "label", "pdf", "production"); r.code != exitUsage {
		t.Errorf("label with two arguments: exit %d", r.code)
	}
	r := runCtl(t, env, "versions", "pdf", "--json")
	var out struct{ Versions []map[string]any }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Versions) != 2 {
		t.Errorf("--json: %v %s", err, r.stdout)
	}
}

func protoText(m any) string {
	if s, ok := m.(interface{ String() string }); ok {
		return s.String()
	}
	return ""
}

// TestWatchResumes: after the stream breaks, watch reconnects with the
// last library digest it saw, and prints every change once.
func TestWatchResumes(t *testing.T) {
	f := &fakeServer{watches: []watchScript{
		{msgs: []*skillsvcv1.WatchSkillsResponse{
			{LibraryDigest: "sha256:d0"},
			{LibraryDigest: "sha256:d1", Changes: []*skillsvcv1.SkillChange{{Kind: skillsvcv1.SkillChange_KIND_ADDED, Name: "pdf", Path: "/skills/docs/pdf", Layer: "user", ManifestDigest: "sha256:aaaabbbbccccdddd"}}},
		}, end: status.Error(codes.Unavailable, "replica going away")},
		{msgs: []*skillsvcv1.WatchSkillsResponse{
			{LibraryDigest: "sha256:d2", Changes: []*skillsvcv1.SkillChange{{Kind: skillsvcv1.SkillChange_KIND_REMOVED, Name: "csv", Path: "/skills/csv", Layer: "shared"}}},
		}},
	}}
	env := startFake(t, f)
	r := runCtl(t, env, "watch", "--count", "2", "--since", "sha256:start")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	f.mu.Lock()
	reqs := f.requests
	f.mu.Unlock()
	if len(reqs) != 2 || reqs[0].(*skillsvcv1.WatchSkillsRequest).GetSinceDigest() != "sha256:start" || reqs[1].(*skillsvcv1.WatchSkillsRequest).GetSinceDigest() != "sha256:d1" {
		t.Fatalf("watch requests = %v", reqs)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "added    pdf /skills/docs/pdf user sha256:aaaabbbbcccc") || !strings.Contains(lines[1], "removed  csv /skills/csv shared -") {
		t.Errorf("output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "Unavailable: replica going away; reconnecting") {
		t.Errorf("stderr: %s", r.stderr)
	}
	// A refusal that reconnecting cannot fix ends the watch.
	f = &fakeServer{watches: []watchScript{{end: status.Error(codes.ResourceExhausted, "too many watches")}}}
	if r := runCtl(t, startFake(t, f), "watch"); r.code != exitServer || !strings.Contains(r.stderr, "too many watches") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// tarGz builds an archive of entries.
func tarGz(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		body := strings.Repeat("x", int(h.Size))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestPull: the archive unpacks into DIR with the skill folder's name
// dropped and the exec bit kept; unsafe archives write nothing outside DIR
// and fail.
func TestPull(t *testing.T) {
	f := &fakeServer{export: tarGz(t,
		tar.Header{Name: "pdf/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "pdf/SKILL.md", Typeflag: tar.TypeReg, Mode: 0o644, Size: 10},
		tar.Header{Name: "pdf/scripts/run.sh", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3000},
	)}
	env := startFake(t, f)
	dir := filepath.Join(t.TempDir(), "out")
	r := runCtl(t, env, "pull", "pdf", dir, "--version", "production")
	if r.code != exitOK || !strings.Contains(r.stdout, "pulled pdf into "+dir+" (2 files") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if req := f.last().(*skillsvcv1.ExportSkillRequest); req.GetPath() != "pdf" || req.GetVersion() != "production" {
		t.Errorf("request = %v", req)
	}
	st, err := os.Stat(filepath.Join(dir, "scripts/run.sh"))
	if err != nil || st.Size() != 3000 || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh: %v, %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("SKILL.md: %v, %v", st, err)
	}
	if r := runCtl(t, env, "pull", "pdf", dir); r.code != exitUsage || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("into a full folder: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "pull", "pdf", dir, "--force"); r.code != exitOK {
		t.Errorf("--force: exit %d\n%s", r.code, r.stderr)
	}
	// The limit's own flag is named where it is one (materializing has none).
	if r := runCtl(t, env, "pull", "pdf", filepath.Join(t.TempDir(), "small"), "--max-bytes", "1000"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "unpacks to more than 1000 bytes (--max-bytes)") {
		t.Errorf("over --max-bytes: exit %d\n%s", r.code, r.stderr)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if r := runCtl(t, env, "pull", "missing", missing); r.code != exitNotFound {
		t.Errorf("missing skill: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed pull left %s behind", missing)
	}

	for _, tc := range []struct {
		name    string
		entries []tar.Header
		want    string
	}{
		{"dot-dot", []tar.Header{{Name: "pdf/../../evil", Typeflag: tar.TypeReg, Size: 1}}, "unsafe entry name"},
		{"absolute", []tar.Header{{Name: "/etc/evil", Typeflag: tar.TypeReg, Size: 1}}, "unsafe entry name"},
		{"symlink", []tar.Header{{Name: "pdf/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, "not a file or folder"},
		{"two folders", []tar.Header{{Name: "pdf/a", Typeflag: tar.TypeReg, Size: 1}, {Name: "csv/b", Typeflag: tar.TypeReg, Size: 1}}, "outside the skill folder"},
		{"too big", []tar.Header{{Name: "pdf/a", Typeflag: tar.TypeReg, Size: 600}, {Name: "pdf/b", Typeflag: tar.TypeReg, Size: 600}}, "more than 1000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "skill")
			_, _, err := skillrun.ExtractSkill(bytes.NewReader(tarGz(t, tc.entries...)), out, 1000)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			entries, _ := os.ReadDir(parent)
			for _, e := range entries {
				if e.Name() != "skill" {
					t.Errorf("wrote %s outside the target", e.Name())
				}
			}
		})
	}
}

// TestIdentity: a token from a token file travels as a bearer token.
func TestIdentity(t *testing.T) {
	f := &fakeServer{}
	env := startFake(t, f)
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("abc.def.ghi\n"), 0o600)
	env["SKILLCTL_TOKEN_FILE"] = tok
	if r := runCtl(t, env, "rm", "pdf"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := f.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer abc.def.ghi" {
		t.Errorf("authorization = %v", got)
	}
	env["SKILLCTL_TOKEN_FILE"] = filepath.Join(t.TempDir(), "missing")
	if r := runCtl(t, env, "rm", "pdf"); r.code != exitUsage || !strings.Contains(r.stderr, "token file") {
		t.Errorf("missing token file: exit %d\n%s", r.code, r.stderr)
	}
}
