package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/server"
)

func pubHeader(h *skillsvcv1.PublishSkillHeader) *skillsvcv1.PublishSkillRequest {
	return &skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Header{Header: h}}
}

func pubChunk(path, data string) *skillsvcv1.PublishSkillRequest {
	return &skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Chunk{Chunk: &skillsvcv1.FileChunk{Path: path, Data: []byte(data)}}}
}

// publish sends msgs as one PublishSkill stream.
func publish(ctx context.Context, c skillsvcv1.LibraryServiceClient, msgs ...*skillsvcv1.PublishSkillRequest) (*skillsvcv1.PublishSkillResponse, error) {
	stream, err := c.PublishSkill(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server answered; CloseAndRecv says how
		}
	}
	return stream.CloseAndRecv()
}

const pdfMD = "---\nname: pdf\ndescription: Read PDFs.\n---\nbody\n"

// TestPublishStreamShape: the header comes once and first; validate_only
// answers every problem without an error and writes nothing.
func TestPublishStreamShape(t *testing.T) {
	c := start(t, memory.New(), options{})
	ctx := asAlice(t)
	h := pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf"})
	for name, msgs := range map[string][]*skillsvcv1.PublishSkillRequest{
		"no message":       nil,
		"chunk first":      {pubChunk("SKILL.md", pdfMD)},
		"header twice":     {h, pubChunk("SKILL.md", pdfMD), h},
		"chunk no path":    {h, pubChunk("", "x")},
		"no name":          {pubHeader(&skillsvcv1.PublishSkillHeader{}), pubChunk("SKILL.md", pdfMD)},
		"bad category":     {pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", Category: "a/b"}), pubChunk("SKILL.md", pdfMD)},
		"bad label":        {pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", Labels: []string{"-x"}}), pubChunk("SKILL.md", pdfMD)},
		"bad if_latest":    {pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", IfLatest: "yesterday"}), pubChunk("SKILL.md", pdfMD)},
		"invalid SKILL.md": {h, pubChunk("SKILL.md", "no frontmatter")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := publish(ctx, c.library, msgs...)
			grpctest.WantCode(t, err, codes.InvalidArgument)
		})
	}
	res, err := publish(ctx, c.library, pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", ValidateOnly: true}), pubChunk("SKILL.md", "---\nname: docx\n---\n"))
	if err != nil || res.GetValid() || len(res.GetProblems()) != 2 || res.GetVersion().GetCreateTime() != nil {
		t.Fatalf("validate_only = %v, %v", res, err)
	}
	if l, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); err != nil || len(l.GetSkills()) != 0 {
		t.Fatalf("validate_only published: %v, %v", l, err)
	}
}

// TestLibraryInsecureAdmin: in insecure mode a caller is an admin on
// LibraryService only with x-skillsvc-admin: true.
func TestLibraryInsecureAdmin(t *testing.T) {
	c := start(t, memory.New(), options{})
	ctx := asAlice(t)
	shared := pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", Library: &skillsvcv1.LibraryRef{Shared: true}})
	_, err := publish(ctx, c.library, shared, pubChunk("SKILL.md", pdfMD))
	grpctest.WantCode(t, err, codes.PermissionDenied)
	_, err = publish(ctx, c.library, pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", Library: &skillsvcv1.LibraryRef{User: "bob"}}), pubChunk("SKILL.md", pdfMD))
	grpctest.WantCode(t, err, codes.PermissionDenied)
	admin := metadata.AppendToOutgoingContext(ctx, server.AdminKey, "true")
	res, err := publish(admin, c.library, shared, pubChunk("SKILL.md", pdfMD))
	if err != nil || res.GetSkill().GetLayer() != "shared" {
		t.Fatalf("admin publish = %v, %v", res, err)
	}
}

// TestPinnedReadAfterDelete: a deleted skill's versions are still read by
// name, from the versions; the live listing no longer has it.
func TestPinnedReadAfterDelete(t *testing.T) {
	c := start(t, memory.New(), options{})
	ctx := asAlice(t)
	res, err := publish(ctx, c.library, pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf", Category: "docs"}), pubChunk("SKILL.md", pdfMD), pubChunk("ref.md", "reference\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.library.DeleteSkill(ctx, &skillsvcv1.DeleteSkillRequest{Name: "pdf"}); err != nil || d.GetRemovedFiles() != 2 {
		t.Fatalf("delete = %v, %v", d, err)
	}
	_, err = c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	grpctest.WantCode(t, err, codes.NotFound)
	got, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf", Version: res.GetVersion().GetId()})
	if err != nil || got.GetRaw() != pdfMD || got.GetSkill().GetPath() != "/skills/docs/pdf" || len(got.GetFiles()) != 1 {
		t.Fatalf("pinned GetSkill of a deleted skill = %v, %v", got, err)
	}
	f, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "/skills/docs/pdf", File: "ref", Version: res.GetVersion().GetId()})
	if err != nil || f.GetContent() != "reference\n" || f.GetPath() != "/skills/docs/pdf/ref.md" {
		t.Fatalf("pinned ReadSkillFile = %v, %v", f, err)
	}
	_, err = c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf", Version: "no-such-label"})
	grpctest.WantCode(t, err, codes.NotFound)
}
