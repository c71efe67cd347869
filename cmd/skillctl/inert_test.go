package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// hostileServer answers every call with hostile in every string it holds:
// what a hostile author, or a hostile or broken server, can make skillctl
// print.
type hostileServer struct {
	skillsvcv1.UnimplementedLibraryServiceServer
	skillsvcv1.UnimplementedSkillsServiceServer
	skillsvcv1.UnimplementedAdminServiceServer
}

var (
	hostileVersion = &skillsvcv1.SkillVersion{
		Id: "sha256:" + hostile, Name: hostile, Category: hostile, Author: hostile + "\nsha256:forged\trow", Labels: []string{hostile, "latest"},
		Message: hostile, Reviewer: hostile, ReviewComment: hostile, State: skillsvcv1.VersionState_VERSION_STATE_PUBLISHED,
	}
	hostileSkill = &skillsvcv1.SkillSummary{
		Path: hostile, Location: hostile, Name: hostile, Description: hostile, Category: hostile, Layer: hostile,
		Version: hostile, License: hostile, Compatibility: hostile, AllowedTools: []string{hostile},
		Metadata: map[string]string{hostile: hostile}, Etag: hostile, Warnings: []string{hostile}, Errors: []string{hostile},
		DisplayName: hostile, ManifestDigest: hostile,
	}
	hostileProblems = []*skillsvcv1.SkillProblem{{File: hostile, Field: hostile, Rule: hostile, Message: hostile, Value: hostile}}
)

// hostileStatus is a refusal whose message and problems are hostile.
func hostileStatus(code codes.Code) error {
	st, err := status.New(code, hostile).WithDetails(&skillsvcv1.SkillProblems{Problems: hostileProblems})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func (hostileServer) ListSkills(_ context.Context, req *skillsvcv1.ListSkillsRequest) (*skillsvcv1.ListSkillsResponse, error) {
	if req.GetView() == skillsvcv1.SkillView_SKILL_VIEW_FULL {
		// With an eval_queries.json, for skillctl eval.
		full := proto.CloneOf(hostileSkill)
		full.Manifest = &skillsvcv1.SkillManifest{Files: []*skillsvcv1.ManifestFile{{Path: full.GetPath() + "/eval_queries.json"}}}
		return &skillsvcv1.ListSkillsResponse{Skills: []*skillsvcv1.SkillSummary{full}}, nil
	}
	return &skillsvcv1.ListSkillsResponse{Skills: []*skillsvcv1.SkillSummary{hostileSkill}}, nil
}

func (hostileServer) ReadSkillFile(context.Context, *skillsvcv1.ReadSkillFileRequest) (*skillsvcv1.ReadSkillFileResponse, error) {
	q, _ := json.Marshal(hostile)
	return &skillsvcv1.ReadSkillFileResponse{Content: `[{"query":` + string(q) + `,"should_trigger":true},{"query":"x","should_trigger":false}]`}, nil
}

func (hostileServer) SearchSkills(context.Context, *skillsvcv1.SearchSkillsRequest) (*skillsvcv1.SearchSkillsResponse, error) {
	other := proto.CloneOf(hostileSkill)
	other.Path = hostile + "/other"
	return &skillsvcv1.SearchSkillsResponse{Results: []*skillsvcv1.ScoredSkill{{Skill: other}, {Skill: hostileSkill}}}, nil
}

func (hostileServer) GetSkill(_ context.Context, req *skillsvcv1.GetSkillRequest) (*skillsvcv1.GetSkillResponse, error) {
	if req.GetPath() == "refused" {
		return nil, hostileStatus(codes.InvalidArgument)
	}
	return &skillsvcv1.GetSkillResponse{Skill: hostileSkill, Raw: "---\n" + hostile + "\n---\n" + hostile + "\n",
		Files: []*skillsvcv1.SkillFile{{Path: hostile, Size: 1}}}, nil
}

func (hostileServer) RenderSkill(context.Context, *skillsvcv1.RenderSkillRequest) (*skillsvcv1.RenderSkillResponse, error) {
	return &skillsvcv1.RenderSkillResponse{Text: hostile + "\n" + hostile}, nil
}

func (hostileServer) SetSkillEnabled(context.Context, *skillsvcv1.SetSkillEnabledRequest) (*skillsvcv1.SetSkillEnabledResponse, error) {
	return &skillsvcv1.SetSkillEnabledResponse{Skill: hostileSkill}, nil
}

func (hostileServer) WatchSkills(_ *skillsvcv1.WatchSkillsRequest, stream grpc.ServerStreamingServer[skillsvcv1.WatchSkillsResponse]) error {
	return stream.Send(&skillsvcv1.WatchSkillsResponse{LibraryDigest: hostile, Changes: []*skillsvcv1.SkillChange{
		{Kind: skillsvcv1.SkillChange_KIND_ADDED, Name: hostile, Path: hostile, Layer: hostile, ManifestDigest: hostile},
	}})
}

func (hostileServer) PublishSkill(stream grpc.ClientStreamingServer[skillsvcv1.PublishSkillRequest, skillsvcv1.PublishSkillResponse]) error {
	for {
		if _, err := stream.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
	}
	problems := append(slices.Clone(hostileProblems), &skillsvcv1.SkillProblem{Severity: skillsvcv1.SkillProblem_SEVERITY_WARNING, Rule: "coexistence", Message: hostile, Value: hostile})
	return stream.SendAndClose(&skillsvcv1.PublishSkillResponse{Version: hostileVersion, Problems: problems, Valid: true, RemovedFiles: []string{hostile},
		Evals: []*skillsvcv1.TriggerEval{{Query: hostile, ShouldTrigger: true, Rank: 2, TopPath: hostile, TopName: hostile}}})
}

func (hostileServer) ListSkillVersions(_ context.Context, req *skillsvcv1.ListSkillVersionsRequest) (*skillsvcv1.ListSkillVersionsResponse, error) {
	if req.GetState() == skillsvcv1.VersionState_VERSION_STATE_PENDING {
		// A proposal with what its publish found, for the reviewer.
		v := proto.CloneOf(hostileVersion)
		v.State, v.Problems = skillsvcv1.VersionState_VERSION_STATE_PENDING, hostileProblems
		return &skillsvcv1.ListSkillVersionsResponse{Versions: []*skillsvcv1.SkillVersion{v}}, nil
	}
	return &skillsvcv1.ListSkillVersionsResponse{Versions: []*skillsvcv1.SkillVersion{hostileVersion}}, nil
}

func (hostileServer) SetSkillLabel(context.Context, *skillsvcv1.SetSkillLabelRequest) (*skillsvcv1.SetSkillLabelResponse, error) {
	return &skillsvcv1.SetSkillLabelResponse{Version: hostileVersion}, nil
}

func (hostileServer) RollbackSkill(context.Context, *skillsvcv1.RollbackSkillRequest) (*skillsvcv1.RollbackSkillResponse, error) {
	return &skillsvcv1.RollbackSkillResponse{Version: hostileVersion, RemovedFiles: []string{hostile}}, nil
}

func (hostileServer) ReviewSkillVersion(context.Context, *skillsvcv1.ReviewSkillVersionRequest) (*skillsvcv1.ReviewSkillVersionResponse, error) {
	return &skillsvcv1.ReviewSkillVersionResponse{Version: hostileVersion, RemovedFiles: []string{hostile}}, nil
}

func (hostileServer) DeleteSkill(context.Context, *skillsvcv1.DeleteSkillRequest) (*skillsvcv1.DeleteSkillResponse, error) {
	return nil, hostileStatus(codes.FailedPrecondition)
}

func (hostileServer) SetSkillProtected(context.Context, *skillsvcv1.SetSkillProtectedRequest) (*skillsvcv1.SetSkillProtectedResponse, error) {
	return &skillsvcv1.SetSkillProtectedResponse{Names: []string{hostile, hostile}}, nil
}

func (hostileServer) ListSkillScopes(context.Context, *skillsvcv1.ListSkillScopesRequest) (*skillsvcv1.ListSkillScopesResponse, error) {
	return &skillsvcv1.ListSkillScopesResponse{Scopes: []*skillsvcv1.SkillScope{{Name: hostile, Include: &skillsvcv1.SkillScopeRule{Tags: []string{hostile}}}}}, nil
}

func (hostileServer) ListProtectedSkills(context.Context, *skillsvcv1.ListProtectedSkillsRequest) (*skillsvcv1.ListProtectedSkillsResponse, error) {
	return &skillsvcv1.ListProtectedSkillsResponse{Names: []string{hostile, hostile}}, nil
}

func (hostileServer) PutLibraryFile(context.Context, *skillsvcv1.PutLibraryFileRequest) (*skillsvcv1.PutLibraryFileResponse, error) {
	return &skillsvcv1.PutLibraryFileResponse{Etag: hostile}, nil
}

func (hostileServer) DeleteLibraryFile(context.Context, *skillsvcv1.DeleteLibraryFileRequest) (*skillsvcv1.DeleteLibraryFileResponse, error) {
	return nil, hostileStatus(codes.PermissionDenied)
}

// assertInert fails unless out holds no character a terminal acts on (C0
// but newline and tab, DEL, C1, bidirectional formatting, separators).
func assertInert(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			t.Errorf("%s printed %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
}

// TestEveryCommandPrintsInert runs every command that prints what the
// server answered against a server that answers control characters, bidi
// overrides and invalid UTF-8 everywhere: stdout and stderr hold none of
// them raw, and (outside --quiet) show them escaped; --json keeps them exact.
func TestEveryCommandPrintsInert(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	skillsvcv1.RegisterLibraryServiceServer(s, hostileServer{})
	skillsvcv1.RegisterSkillsServiceServer(s, hostileServer{})
	skillsvcv1.RegisterAdminServiceServer(s, hostileServer{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	env := map[string]string{"SKILLCTL_TARGET": lis.Addr().String(), "SKILLCTL_USER": "alice"}

	skill := writeSkill(t, "pdf", map[string]string{"SKILL.md": "---\nname: pdf\ndescription: PDFs.\n---\nx\n"})
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ls"}, {"ls", "-q"}, {"show", "pdf"}, {"show", "pdf", "--raw"}, {"show", "refused"}, {"render", "pdf"},
		{"enable", "pdf"}, {"disable", "pdf"}, {"__complete", "show", ""},
		{"watch", "--count", "1"},
		{"push", skill}, {"push", skill, "-q"}, {"push", skill, "--dry-run"},
		{"versions", "pdf"}, {"versions", "pdf", "-q"}, {"versions", "pdf", "--state", "pending"},
		{"eval"}, {"eval", "--dir", skill}, {"validate", skill, "--target", lis.Addr().String()},
		{"label", "pdf", "v", "production"}, {"rollback", "pdf", "v"}, {"approve", "pdf", "v"}, {"reject", "pdf", "v"},
		{"rm", "pdf"},
		{"admin", "protect", "pdf", "--library", "shared"}, {"admin", "protected", "--library", "shared"},
		{"scope", "list", "--library", "shared"},
		{"admin", "put", "a", file, "--library", "shared"}, {"admin", "delete", "a", "--library", "shared"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runCtl(t, env, args...)
			assertInert(t, "stdout", r.stdout)
			assertInert(t, "stderr", r.stderr)
			if args[len(args)-1] != "-q" && !strings.Contains(r.stdout+r.stderr, `\x1b]0;pwned\x07`) {
				t.Errorf("exit %d; the title sequence is not shown escaped:\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	// A newline or tab in a cell is escaped too: no forged row.
	r := runCtl(t, env, "versions", "pdf")
	if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `\nsha256:forged\trow`) {
		t.Errorf("versions printed %d lines, want a header and one row:\n%s", len(lines), r.stdout)
	}
	// JSON stays exact, and inert too: decoding it gives the author's
	// bytes back.
	for _, args := range [][]string{{"versions", "pdf", "--json"}, {"ls", "--json"}, {"watch", "--json", "--count", "1"}, {"eval", "--json"}, {"eval", "--dir", skill, "--json"}} {
		r = runCtl(t, env, args...)
		assertInert(t, strings.Join(args, " "), r.stdout)
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || !strings.Contains(fmt.Sprint(v), hostile) {
			t.Errorf("%v: %v\n%s", args, err, r.stdout)
		}
	}
}
