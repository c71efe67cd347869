package server

import (
	"context"
	"fmt"
	"io"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Reads that name a version (GetSkill, RenderSkill, ReadSkillFile and
// ExportSkill's `version`) are the library's (library/pinned.go): the
// handlers ask it once and encode what comes back.

// WithVersions lets the service serve reads pinned to a version.
func (s *Skills) WithVersions(v *Versions) *Skills {
	s.versions = v
	return s
}

// pinnedActor is who a pinned read acts as, on a server that keeps
// versions.
func (s *Skills) pinnedActor(ctx context.Context) (*authors.Publisher, authors.Actor, mounts.Caller, error) {
	if s.versions == nil {
		return nil, authors.Actor{}, mounts.Caller{}, fmt.Errorf("%w: this server keeps no skill versions", errkind.FailedPrecondition)
	}
	a, id, err := s.versions.actor(ctx)
	return s.versions.Pub, a, id, err
}

func (s *Skills) getPinned(ctx context.Context, req *skillsvcv1.GetSkillRequest) (*skillsvcv1.GetSkillResponse, error) {
	pub, a, id, err := s.pinnedActor(ctx)
	if err != nil {
		return nil, err
	}
	d, err := pub.GetPinned(ctx, a, id, req.GetPath(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	s.usage.Activated(ctx, surface(ctx), id, skilluse.Of(d.Skill)) // its version's id as its manifest digest
	return getSkillProto(d), nil
}

func (s *Skills) renderPinned(ctx context.Context, req *skillsvcv1.RenderSkillRequest) (*skillsvcv1.RenderSkillResponse, error) {
	pub, a, id, err := s.pinnedActor(ctx)
	if err != nil {
		return nil, err
	}
	text, sk, err := pub.RenderPinned(ctx, a, id, req.GetPath(), req.GetVersion(), skillview.RenderOptions{Arguments: req.GetArguments(), BaseDir: req.GetBaseDir()})
	if err != nil {
		return nil, err
	}
	s.usage.Activated(ctx, surface(ctx), id, skilluse.Of(sk))
	return &skillsvcv1.RenderSkillResponse{Text: text, Skill: summaryProto(sk, described)}, nil
}

func (s *Skills) readPinned(ctx context.Context, req *skillsvcv1.ReadSkillFileRequest) (*skillsvcv1.ReadSkillFileResponse, error) {
	pub, a, id, err := s.pinnedActor(ctx)
	if err != nil {
		return nil, err
	}
	content, vpath, v, err := pub.ReadPinnedOf(ctx, a, id, req.GetPath(), req.GetVersion(), req.GetFile())
	if err != nil {
		return nil, err
	}
	s.usage.File(ctx, surface(ctx), id, skilluse.Skill{Name: v.Name, Layer: v.Layer, Version: v.ID}, v.File)
	return &skillsvcv1.ReadSkillFileResponse{Path: vpath, Content: content}, nil
}

func (s *Skills) exportPinned(ctx context.Context, req *skillsvcv1.ExportSkillRequest, w io.Writer) error {
	pub, a, id, err := s.pinnedActor(ctx)
	if err != nil {
		return err
	}
	if err := pub.ExportPinned(ctx, a, id, req.GetPath(), req.GetVersion(), w); err != nil {
		return err
	}
	if v, err := pub.PinnedOf(ctx, a, id, req.GetPath(), req.GetVersion()); err == nil {
		s.usage.File(ctx, surface(ctx), id, skilluse.Skill{Name: v.Name, Layer: v.Layer, Version: v.ID}, skilluse.Exported)
	}
	return nil
}
