package server

import (
	"context"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/provenance"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/skillarchive"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Skills serves skillsvc.v1.SkillsService from a skills.Library.
type Skills struct {
	skillsvcv1.UnimplementedSkillsServiceServer
	lib       *skills.Library
	chunkSize int
	feed      *watch.Feed // WithFeed: WatchSkills
	versions  *Versions   // reads pinned to a version (pinned.go); nil: none
	replies   *replies.Cache
	archives  *skillarchive.Digests // ListSkills' artifacts (artifacts.go)
	usage     skilluse.Recorder     // WithUsage
	offered   *blockOffered
}

// NewSkills returns the service; chunkSize is the ExportSkill message size.
func NewSkills(lib *skills.Library, chunkSize int, opts ...SkillsOption) *Skills {
	s := &Skills{lib: lib, chunkSize: chunkSize, offered: newBlockOffered()}
	for _, o := range opts {
		o(s)
	}
	if s.replies == nil {
		s.replies = replies.New(lib.Catalog.ReplyCacheBytes(), nil)
	}
	if s.archives == nil {
		s.archives = skillarchive.NewDigests(nil)
	}
	return s
}

// detail is how much of a skill a summary carries.
type detail int

const (
	// listed is ListSkills' basic view, a listing for a prompt or a
	// picker: every field but the author's own maps (metadata, unknown
	// frontmatter fields), the manifest and the frontmatter JSON. The maps
	// are most of what a client pays to decode a page (a new map or Struct
	// a summary, issue 22) and no prompt shows them.
	listed detail = iota
	// described is one skill, or a few, as other replies name them
	// (RenderSkill, SearchSkills, SetSkillEnabled): listed plus the maps.
	described
	// full is described plus the manifest and the frontmatter JSON
	// (GetSkill, SKILL_VIEW_FULL).
	full
)

// summaryProto converts s with as much detail as d says.
func summaryProto(s skillview.Skill, d detail) *skillsvcv1.SkillSummary {
	out := &skillsvcv1.SkillSummary{
		Path: s.Path, Location: s.Location(), Name: s.Name, DisplayName: s.DisplayName,
		Description: skillmd.Shorten(s.Description, skillmd.MaxDescriptionLen),
		Category:    s.Category, Layer: s.Layer, Version: s.Version, License: s.License,
		Compatibility: s.Compatibility, AllowedTools: s.AllowedTools,
		Etag: s.ETag, Disabled: s.Disabled, Warnings: s.Warnings, Errors: s.Errors,
	}
	if s.Manifest != nil {
		out.ManifestDigest = s.ManifestDigest()
	}
	if d >= described {
		out.Metadata = s.Metadata
		if len(s.Extra) > 0 {
			if st, err := structpb.NewStruct(s.Extra); err == nil {
				out.ExtraFields = st
			}
		}
	}
	if d >= full {
		out.FrontmatterJson = string(s.Frontmatter.JSON)
		out.Manifest = manifestProto(s.Manifest)
	}
	return out
}

func manifestProto(m *skillview.Manifest) *skillsvcv1.SkillManifest {
	if m == nil {
		return nil
	}
	out := &skillsvcv1.SkillManifest{TotalBytes: m.TotalBytes, FileCount: int32(m.FileCount), OverLimits: m.OverLimits}
	out.Files = make([]*skillsvcv1.ManifestFile, len(m.Files))
	for i, f := range m.Files {
		out.Files[i] = &skillsvcv1.ManifestFile{Path: f.Path, Size: int64(f.Size), Sha256: f.SHA256, Mode: uint32(f.Mode)}
	}
	return out
}

// repeatedSize is what a message of n bytes adds to a reply as an element
// of a repeated field (numbered below 16).
func repeatedSize(n int) int { return protowire.SizeTag(1) + protowire.SizeBytes(n) }

// ListCategories implements SkillsService.
func (s *Skills) ListCategories(ctx context.Context, _ *skillsvcv1.ListCategoriesRequest) (*skillsvcv1.ListCategoriesResponse, error) {
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	cats, err := s.lib.Catalog.Categories(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.ListCategoriesResponse{}
	for _, c := range cats {
		out.Categories = append(out.Categories, &skillsvcv1.CategoryCount{Name: c.Name, SkillCount: int32(c.Count)})
	}
	return out, nil
}

// ListSkills implements SkillsService.
func (s *Skills) ListSkills(ctx context.Context, req *skillsvcv1.ListSkillsRequest) (*skillsvcv1.ListSkillsResponse, error) {
	id, err := scopedIdentity(ctx, req.GetScope())
	if err != nil {
		return nil, err
	}
	// The variant names the reply's content in the kept replies' keys: a
	// new name whenever what a view carries changes, so no replica serves
	// a page an older build kept ("basic" carried metadata).
	d, variant := listed, "basic.2"
	if req.GetView() == skillsvcv1.SkillView_SKILL_VIEW_FULL {
		d, variant = full, "full"
	}
	if req.GetIncludeArtifacts() {
		variant += "+artifacts." + skillarchive.Version
	}
	withheld := scanpolicy.Withholds(ctx, req.GetIncludeInvalid())
	if !withheld {
		variant += "+withheld" // an admin's: the blocked skills of every library listed
	}
	b, err := s.pageReply(ctx, id, skillview.ListOptions{
		Category: req.GetCategory(), FilterCategory: req.Category != nil,
		IncludeInvalid: req.GetIncludeInvalid(), IncludeDisabled: req.GetIncludeDisabled(),
	}, req.GetPageSize(), req.GetPageToken(), variant, func(page skillview.Page) ([]byte, error) {
		if withheld {
			page = scanpolicy.WithoutWithheld(page)
		}
		// Each skill is converted once, to measure it, and kept if the
		// reply has room for it; the page ends early where it has not.
		var arts []*skillsvcv1.SkillArtifact
		reserve := s.reserve()
		if req.GetIncludeArtifacts() {
			n, a, err := s.artifacts(ctx, id, page.Skills)
			if err != nil {
				return nil, err
			}
			page, arts = page.Truncate(n), a
		}
		summaries := make([]*skillsvcv1.SkillSummary, len(page.Skills))
		n := fitReply(len(page.Skills), s.lib.Catalog.MaxPageBytes(), func(i int) int {
			summaries[i] = summaryProto(page.Skills[i], d)
			if arts != nil {
				summaries[i].Artifact = arts[i]
			}
			return repeatedSize(proto.Size(summaries[i])) + reserve
		})
		page = page.Truncate(n)
		return proto.Marshal(&skillsvcv1.ListSkillsResponse{Skills: summaries[:len(page.Skills)], NextPageToken: page.NextPageToken, LibraryDigest: page.LibraryDigest})
	})
	if err != nil {
		return nil, err
	}
	if skilluse.Tracing(ctx) {
		listed, total := skilluse.FromReply(b, false, skilluse.MaxOffered)
		skilluse.Offered(ctx, listed, total)
	}
	if req.GetIncludeProvenance() {
		if b, err = s.withListedProvenance(ctx, id, b, provenance.ListSkills); err != nil {
			return nil, err
		}
	}
	return encoded(&skillsvcv1.ListSkillsResponse{}, b), nil
}

// FormatSkills implements SkillsService.
func (s *Skills) FormatSkills(ctx context.Context, req *skillsvcv1.FormatSkillsRequest) (*skillsvcv1.FormatSkillsResponse, error) {
	id, err := scopedIdentity(ctx, req.GetScope())
	if err != nil {
		return nil, err
	}
	b, digest, err := s.promptReply(ctx, id, skillview.ListOptions{Category: req.GetCategory(), FilterCategory: req.Category != nil},
		skillmd.FormatOptions{
			Format: req.GetFormat(), CharBudget: int(req.GetCharBudget()), MaxSkills: int(req.GetMaxSkills()),
			GroupByCategory: req.GetGroupByCategory(), SearchTool: req.GetSearchTool(), Query: req.GetQuery(),
		}, func(b skillview.Block) ([]byte, error) {
			return proto.Marshal(&skillsvcv1.FormatSkillsResponse{
				Text: b.Text, Included: int32(b.Included), Omitted: int32(b.Omitted), Shortened: int32(b.Shortened),
			})
		})
	if err != nil {
		return nil, err
	}
	// The kept block is the same for every user who sees the same skills
	// in it; the digest of the caller's whole library is added here.
	return encoded(&skillsvcv1.FormatSkillsResponse{LibraryDigest: digest}, b), nil
}

// GetSkill implements SkillsService.
func (s *Skills) GetSkill(ctx context.Context, req *skillsvcv1.GetSkillRequest) (*skillsvcv1.GetSkillResponse, error) {
	if req.GetVersion() != "" {
		return s.getPinned(ctx, req)
	}
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	b, sk, err := s.getReplyOf(ctx, id, req.GetPath(), func(d skillview.Detail) ([]byte, error) {
		return proto.Marshal(getSkillProto(d))
	})
	if err != nil {
		return nil, scanpolicy.HideBlocked(ctx, err, req.GetPath())
	}
	if s.versions != nil && s.versions.Provenance != nil {
		folder, layer, digest := sk.Origin()
		prov, err := s.versions.Provenance(ctx, id, []provenance.Origin{{Folder: folder, Layer: layer, Digest: digest}})
		if err != nil {
			return nil, err
		}
		if len(prov) == 1 {
			b, err = withProvenance(b, prov[0])
		}
		if err != nil {
			return nil, err
		}
	}
	return encoded(&skillsvcv1.GetSkillResponse{}, b), nil
}

// getSkillProto is GetSkill's reply of d.
func getSkillProto(d skillview.Detail) *skillsvcv1.GetSkillResponse {
	out := &skillsvcv1.GetSkillResponse{Skill: summaryProto(d.Skill, full), Raw: d.Raw, Body: d.Body}
	out.Skill.Description = d.Description // the full text here
	if st, err := structpb.NewStruct(d.Frontmatter.Raw); err == nil {
		out.Frontmatter = st
	}
	out.FilesOmitted = int32(d.FilesOmitted)
	for _, f := range d.Files {
		out.Files = append(out.Files, &skillsvcv1.SkillFile{Path: f.Path, Size: f.Size, Binary: f.Binary})
	}
	return out
}

// RenderSkill implements SkillsService.
func (s *Skills) RenderSkill(ctx context.Context, req *skillsvcv1.RenderSkillRequest) (*skillsvcv1.RenderSkillResponse, error) {
	if req.GetVersion() != "" {
		return s.renderPinned(ctx, req)
	}
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	text, d, err := s.lib.Catalog.Render(ctx, id, req.GetPath(), skillview.RenderOptions{Arguments: req.GetArguments(), BaseDir: req.GetBaseDir()})
	if err != nil {
		return nil, err
	}
	s.usage.Activated(ctx, surface(ctx), id, skilluse.Of(d.Skill))
	return &skillsvcv1.RenderSkillResponse{Text: text, Skill: summaryProto(d.Skill, described)}, nil
}

// ReadSkillFile implements SkillsService.
func (s *Skills) ReadSkillFile(ctx context.Context, req *skillsvcv1.ReadSkillFileRequest) (*skillsvcv1.ReadSkillFileResponse, error) {
	if req.GetVersion() != "" {
		return s.readPinned(ctx, req)
	}
	id, err := identity(ctx)
	if err != nil {
		return nil, err
	}
	content, vpath, sk, err := s.lib.Catalog.ReadSkillFile(ctx, id, req.GetPath(), req.GetFile(), skillview.ReadOptions{DownloadTool: req.GetDownloadTool()})
	if err != nil {
		return nil, err
	}
	s.usage.File(ctx, surface(ctx), id, skilluse.OfRef(sk), strings.TrimPrefix(vpath, s.lib.Catalog.Mount()+"/"+sk.Dir+"/"))
	return &skillsvcv1.ReadSkillFileResponse{Path: vpath, Content: content}, nil
}

// SearchSkills implements SkillsService.
func (s *Skills) SearchSkills(ctx context.Context, req *skillsvcv1.SearchSkillsRequest) (*skillsvcv1.SearchSkillsResponse, error) {
	id, err := scopedIdentity(ctx, req.GetScope())
	if err != nil {
		return nil, err
	}
	b, err := s.searchReply(ctx, id, skillview.SearchOptions{
		Query: req.GetQuery(), Limit: req.GetLimit(),
		Category: req.GetCategory(), FilterCategory: req.Category != nil,
		MinRelevance: req.GetMinRelevance(),
	}, func(res skillview.Results) ([]byte, error) {
		hits := res.Hits
		// As in ListSkills: each hit's summary is built once, to measure
		// it; the weakest hits are dropped where the reply has no room.
		summaries := make([]*skillsvcv1.SkillSummary, len(hits))
		n := fitReply(len(hits), s.lib.Catalog.MaxPageBytes(), func(i int) int {
			summaries[i] = summaryProto(hits[i].Skill, described)
			return scoredSize(summaries[i], hits[i].Alternates) + s.reserve()
		})
		out := &skillsvcv1.SearchSkillsResponse{Truncated: n < len(hits), LibraryDigest: res.LibraryDigest}
		for i, h := range hits[:n] {
			out.Results = append(out.Results, &skillsvcv1.ScoredSkill{Skill: summaries[i], Score: h.Score, Relevance: h.Relevance, Alternates: alternatesProto(h.Alternates)})
		}
		return proto.Marshal(out)
	})
	if err != nil {
		return nil, err
	}
	if s.usage.Searches(ctx) { // read back from the reply, kept or built alike
		found, total := skilluse.FromReply(b, true, s.usage.SearchSkills(ctx))
		s.usage.Searched(ctx, surface(ctx), id, req.GetQuery(), found, total)
	}
	if req.GetIncludeProvenance() {
		if b, err = s.withListedProvenance(ctx, id, b, provenance.SearchSkills); err != nil {
			return nil, err
		}
	}
	return encoded(&skillsvcv1.SearchSkillsResponse{}, b), nil
}

// alternatesProto names the copies collapsed into a search result.
func alternatesProto(alts []skillview.Alternate) []*skillsvcv1.SkillAlternate {
	if len(alts) == 0 {
		return nil
	}
	out := make([]*skillsvcv1.SkillAlternate, len(alts))
	for i, a := range alts {
		out[i] = &skillsvcv1.SkillAlternate{Path: a.Path, Name: a.Name, Layer: a.Layer}
	}
	return out
}

// ExportSkill implements SkillsService.
func (s *Skills) ExportSkill(req *skillsvcv1.ExportSkillRequest, stream skillsvcv1.SkillsService_ExportSkillServer) error {
	ctx := stream.Context()
	id, err := identity(ctx)
	if err != nil {
		return err
	}
	if err := exportLayout(req.GetLayout()); err != nil {
		return err
	}
	w := &chunkWriter{size: s.chunkSize, send: func(b []byte) error {
		return stream.Send(&skillsvcv1.ExportSkillResponse{Data: b})
	}}
	export := func(w io.Writer) (skillview.Skill, error) {
		if req.GetVersion() != "" {
			return skillview.Skill{}, s.exportPinned(ctx, req, w)
		}
		return s.lib.Exporter.Export(ctx, id, req.GetPath(), w)
	}
	var sk skillview.Skill
	if req.GetLayout() == skillsvcv1.ArchiveLayout_ARCHIVE_LAYOUT_ROOT {
		sk, _, err = skillarchive.PackRoot(export, w)
	} else {
		sk, err = export(w)
	}
	if err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	// An export materializes the skill to run it where the caller runs:
	// a use of its files (skilluse.Exported). A pinned export records
	// its own, with the version id.
	if req.GetVersion() == "" {
		s.usage.File(ctx, surface(ctx), id, skilluse.Of(sk), skilluse.Exported)
	}
	return nil
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
	sk, err := s.lib.Catalog.SetEnabled(ctx, id, req.GetPath(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.SetSkillEnabledResponse{Skill: summaryProto(sk, described)}, nil
}
