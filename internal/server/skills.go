package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"

	"google.golang.org/protobuf/types/known/structpb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Skills serves skillsvc.v1.SkillsService from a skills.Library.
type Skills struct {
	skillsvcv1.UnimplementedSkillsServiceServer
	lib       *skills.Library
	chunkSize int
}

// NewSkills returns the service; chunkSize is the ExportSkill message size.
func NewSkills(lib *skills.Library, chunkSize int) *Skills {
	return &Skills{lib: lib, chunkSize: chunkSize}
}

const (
	defaultSkillsPage = 100
	maxSkillsPage     = 1000
	defaultSearchHits = 10
	maxSearchHits     = 100
	maxCharBudget     = 1 << 20
)

func summaryProto(s skills.Skill) *skillsvcv1.SkillSummary {
	out := &skillsvcv1.SkillSummary{
		Path: s.Path, Location: s.Location(), Name: s.Name,
		Description: skills.Shorten(s.Description, skills.MaxDescriptionLen),
		Category:    s.Category, Layer: s.Layer, Version: s.Version, License: s.License,
		Compatibility: s.Compatibility, AllowedTools: s.AllowedTools, Metadata: s.Metadata,
		Etag: s.ETag, Disabled: s.Disabled, Warnings: s.Warnings, Errors: s.Errors,
	}
	if len(s.Extra) > 0 {
		if st, err := structpb.NewStruct(s.Extra); err == nil {
			out.ExtraFields = st
		}
	}
	return out
}

// ListCategories implements SkillsService.
func (s *Skills) ListCategories(ctx context.Context, _ *skillsvcv1.ListCategoriesRequest) (*skillsvcv1.ListCategoriesResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	cats, err := s.lib.Categories(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.ListCategoriesResponse{}
	for _, c := range cats {
		out.Categories = append(out.Categories, &skillsvcv1.CategoryCount{Name: c.Name, SkillCount: int32(c.Count)})
	}
	return out, nil
}

// ListSkills implements SkillsService. Pages are cut from the sorted list;
// the token is the last path sent.
func (s *Skills) ListSkills(ctx context.Context, req *skillsvcv1.ListSkillsRequest) (*skillsvcv1.ListSkillsResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, fmt.Errorf("%w: page_size must not be negative", errkind.InvalidArgument)
	case size == 0:
		size = defaultSkillsPage
	case size > maxSkillsPage:
		size = maxSkillsPage
	}
	after := ""
	if t := req.GetPageToken(); t != "" {
		b, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("%w: bad page_token", errkind.InvalidArgument)
		}
		after = string(b)
	}
	list, err := s.lib.Skills(ctx, id, skills.ListOptions{
		Category: req.GetCategory(), FilterCategory: req.Category != nil,
		IncludeInvalid: req.GetIncludeInvalid(), IncludeDisabled: req.GetIncludeDisabled(),
	})
	if err != nil {
		return nil, err
	}
	start := sort.Search(len(list), func(i int) bool { return list[i].Path > after })
	out := &skillsvcv1.ListSkillsResponse{}
	for _, sk := range list[start:] {
		if len(out.Skills) == size {
			out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(out.Skills[size-1].Path))
			break
		}
		out.Skills = append(out.Skills, summaryProto(sk))
	}
	return out, nil
}

// FormatSkills implements SkillsService.
func (s *Skills) FormatSkills(ctx context.Context, req *skillsvcv1.FormatSkillsRequest) (*skillsvcv1.FormatSkillsResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetCharBudget() < 0 || req.GetCharBudget() > maxCharBudget || req.GetMaxSkills() < 0 {
		return nil, fmt.Errorf("%w: char_budget must be 0..%d and max_skills not negative", errkind.InvalidArgument, maxCharBudget)
	}
	if !skills.ValidFormat(req.GetFormat()) {
		return nil, fmt.Errorf("%w: format %q: want xml or markdown", errkind.InvalidArgument, req.GetFormat())
	}
	list, err := s.lib.Skills(ctx, id, skills.ListOptions{Category: req.GetCategory(), FilterCategory: req.Category != nil})
	if err != nil {
		return nil, err
	}
	b, err := skills.FormatBlock(list, skills.FormatOptions{Format: req.GetFormat(), CharBudget: int(req.GetCharBudget()), MaxSkills: int(req.GetMaxSkills())})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errkind.InvalidArgument, err)
	}
	return &skillsvcv1.FormatSkillsResponse{Text: b.Text, Included: int32(b.Included), Omitted: int32(b.Omitted), Shortened: int32(b.Shortened)}, nil
}

// GetSkill implements SkillsService.
func (s *Skills) GetSkill(ctx context.Context, req *skillsvcv1.GetSkillRequest) (*skillsvcv1.GetSkillResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.lib.Get(ctx, id, req.GetPath())
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.GetSkillResponse{Skill: summaryProto(d.Skill), Raw: d.Raw, Body: d.Body}
	out.Skill.Description = d.Description // the full text here
	if st, err := structpb.NewStruct(d.Frontmatter.Raw); err == nil {
		out.Frontmatter = st
	}
	for _, f := range d.Files {
		out.Files = append(out.Files, &skillsvcv1.SkillFile{Path: f.Path, Size: f.Size, Binary: f.Binary})
	}
	return out, nil
}

// RenderSkill implements SkillsService.
func (s *Skills) RenderSkill(ctx context.Context, req *skillsvcv1.RenderSkillRequest) (*skillsvcv1.RenderSkillResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	text, d, err := s.lib.Render(ctx, id, req.GetPath(), req.GetArguments())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.RenderSkillResponse{Text: text, Skill: summaryProto(d.Skill)}, nil
}

// ReadSkillFile implements SkillsService.
func (s *Skills) ReadSkillFile(ctx context.Context, req *skillsvcv1.ReadSkillFileRequest) (*skillsvcv1.ReadSkillFileResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	content, vpath, err := s.lib.ReadFile(ctx, id, req.GetPath(), req.GetFile())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.ReadSkillFileResponse{Path: vpath, Content: content}, nil
}

// SearchSkills implements SkillsService.
func (s *Skills) SearchSkills(ctx context.Context, req *skillsvcv1.SearchSkillsRequest) (*skillsvcv1.SearchSkillsResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetQuery() == "" || len(req.GetQuery()) > 4096 {
		return nil, fmt.Errorf("%w: query must be 1..4096 bytes", errkind.InvalidArgument)
	}
	limit := int(req.GetLimit())
	switch {
	case limit < 0:
		return nil, fmt.Errorf("%w: limit must not be negative", errkind.InvalidArgument)
	case limit == 0:
		limit = defaultSearchHits
	case limit > maxSearchHits:
		limit = maxSearchHits
	}
	hits, err := s.lib.Search(ctx, id, req.GetQuery(), limit)
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.SearchSkillsResponse{}
	for _, h := range hits {
		out.Results = append(out.Results, &skillsvcv1.ScoredSkill{Skill: summaryProto(h.Skill), Score: h.Score})
	}
	return out, nil
}

// ExportSkill implements SkillsService.
func (s *Skills) ExportSkill(req *skillsvcv1.ExportSkillRequest, stream skillsvcv1.SkillsService_ExportSkillServer) error {
	ctx := stream.Context()
	id, err := identity(ctx)
	if err != nil {
		return err
	}
	w := &chunkWriter{size: s.chunkSize, send: func(b []byte) error {
		return stream.Send(&skillsvcv1.ExportSkillResponse{Data: b})
	}}
	if _, err := s.lib.Export(ctx, id, req.GetPath(), w); err != nil {
		return err
	}
	return w.flush()
}

// chunkWriter buffers writes into messages of size bytes. Nothing is sent
// before the first chunk fills, so an early error still becomes a status.
type chunkWriter struct {
	size int
	buf  []byte
	send func([]byte) error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(w.size-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == w.size {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.send(w.buf)
	w.buf = w.buf[:0] // Send has marshalled the message; the buffer is free
	return err
}

// SetSkillEnabled implements SkillsService.
func (s *Skills) SetSkillEnabled(ctx context.Context, req *skillsvcv1.SetSkillEnabledRequest) (*skillsvcv1.SetSkillEnabledResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	sk, err := s.lib.SetEnabled(ctx, id, req.GetPath(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.SetSkillEnabledResponse{Skill: summaryProto(sk)}, nil
}
