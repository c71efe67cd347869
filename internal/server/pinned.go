package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Reads that name a version (GetSkill, RenderSkill, ReadSkillFile and
// ExportSkill's `version`) are served from the version's record and blobs,
// never from the live copy or the catalog's index.

// WithVersions lets the service serve reads pinned to a version.
func (s *Skills) WithVersions(v *Versions) *Skills {
	s.versions = v
	return s
}

// pinned resolves ref (as the unpinned call reads it) and version: the
// library is the one serving the name in the caller's view, else the
// caller's own, else the shared one.
func (s *Skills) pinned(ctx context.Context, ref, version string) (authors.Version, error) {
	if s.versions == nil {
		return authors.Version{}, fmt.Errorf("%w: this server keeps no skill versions", errkind.FailedPrecondition)
	}
	if len(version) > 128 {
		return authors.Version{}, fmt.Errorf("%w: version is a version id, a prefix of one or a label", errkind.InvalidArgument)
	}
	a, id, err := s.versions.actor(ctx)
	if err != nil {
		return authors.Version{}, err
	}
	name, layer := "", ""
	if d, err := s.lib.Catalog.Get(ctx, id, ref); err == nil {
		name, layer = d.Name, d.Layer
	} else if k := errkind.Of(err); k != errkind.NotFound && k != errkind.FailedPrecondition {
		return authors.Version{}, err
	} else {
		// Deleted, or invalid as it stands: the name is the folder's.
		name = path.Base(strings.TrimSuffix(strings.TrimPrefix(ref, s.lib.Catalog.Mount()+"/"), "/"+skillmd.SkillFile))
	}
	return s.versions.Pub.Pinned(ctx, a, name, layer, version)
}

// pinnedDir is the version's folder under the mount.
func (s *Skills) pinnedDir(v authors.Version) string {
	if v.Category == "" {
		return s.lib.Catalog.Mount() + "/" + v.Name
	}
	return s.lib.Catalog.Mount() + "/" + v.Category + "/" + v.Name
}

// pinnedSkill is the version's SKILL.md parsed, as the catalog would list
// the same files.
func (s *Skills) pinnedSkill(ctx context.Context, v authors.Version) (skills.Skill, string, string, error) {
	raw, err := s.versions.Pub.ReadFile(ctx, v, skillmd.SkillFile)
	if err != nil {
		return skills.Skill{}, "", "", err
	}
	fm, body, problems := skillmd.ParseSkillMD(raw, v.Name)
	dir := strings.TrimPrefix(s.pinnedDir(v), s.lib.Catalog.Mount()+"/")
	layer := skills.LayerUser
	switch {
	case v.Library.Shared:
		layer = skills.LayerShared
	case v.Library.Team != "":
		layer = skills.LayerTeam + v.Library.Team
	}
	m := &skills.Manifest{TotalBytes: v.TotalBytes, FileCount: len(v.Files), Digest: v.ID}
	for _, f := range v.Files {
		m.Files = append(m.Files, skills.ManifestFile{Path: s.pinnedDir(v) + "/" + f.Rel, Size: f.Size, SHA256: f.SHA256})
	}
	sk := skills.Skill{
		Path: s.pinnedDir(v), Dir: dir, Folder: v.Name, Category: v.Category, Layer: layer, ETag: v.ID,
		Manifest: m, Frontmatter: fm, Problems: problems,
	}
	return sk, string(raw), body, nil
}

func (s *Skills) getPinned(ctx context.Context, req *skillsvcv1.GetSkillRequest) (*skillsvcv1.GetSkillResponse, error) {
	v, err := s.pinned(ctx, req.GetPath(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	sk, raw, body, err := s.pinnedSkill(ctx, v)
	if err != nil {
		return nil, err
	}
	out := getSkillProto(skills.Detail{Skill: sk, Raw: raw, Body: body})
	// Whether each file is binary takes its bytes: read them together
	// (a version holds at most skillmd.MaxSkillBytes).
	files := make([]*skillsvcv1.SkillFile, 0, len(v.Files))
	for _, f := range v.Files {
		if f.Rel != skillmd.SkillFile {
			files = append(files, &skillsvcv1.SkillFile{Path: f.Rel, Size: f.Size})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, f := range files {
		g.Go(func() error {
			data, err := s.versions.Pub.ReadFile(gctx, v, f.Path)
			f.Binary = binary(data)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out.Files = files
	return out, nil
}

// binary says whether data is not text as skill reads take it.
func binary(data []byte) bool {
	return !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0
}

func (s *Skills) renderPinned(ctx context.Context, req *skillsvcv1.RenderSkillRequest) (*skillsvcv1.RenderSkillResponse, error) {
	if err := skills.CheckBaseDir(req.GetBaseDir()); err != nil {
		return nil, err
	}
	v, err := s.pinned(ctx, req.GetPath(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	sk, _, body, err := s.pinnedSkill(ctx, v)
	if err != nil {
		return nil, err
	}
	if !sk.Problems.Valid() {
		return nil, fmt.Errorf("%w: %s (version %s): %s", skills.ErrInvalidSkill, sk.Path, v.ID, strings.Join(sk.Errors, "; "))
	}
	dir := req.GetBaseDir()
	if dir == "" {
		dir = sk.Path
	}
	_, maxRender := s.lib.Catalog.TextLimits()
	if n := skills.RenderedSize(dir, body, req.GetArguments()); n > maxRender {
		return nil, fmt.Errorf("%w: rendering %s with these arguments makes %d bytes, at most %d are returned", errkind.ResourceExhausted, sk.Path, n, maxRender)
	}
	return &skillsvcv1.RenderSkillResponse{Text: skills.RenderBody(dir, body, req.GetArguments()), Skill: summaryProto(sk, described)}, nil
}

func (s *Skills) readPinned(ctx context.Context, req *skillsvcv1.ReadSkillFileRequest) (*skillsvcv1.ReadSkillFileResponse, error) {
	v, err := s.pinned(ctx, req.GetPath(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	file := strings.TrimPrefix(req.GetFile(), "./")
	if !mounts.Addressable(file) {
		return nil, fmt.Errorf("%w: file %q must be a relative path inside the skill folder", errkind.InvalidArgument, file)
	}
	rel := ""
	for _, f := range v.Files {
		if f.Rel == file || (rel == "" && path.Ext(file) == "" && f.Rel == file+".md") {
			rel = f.Rel
		}
	}
	if rel == "" {
		return nil, fmt.Errorf("%w: version %s of %s has no file %q", errkind.NotFound, v.ID, v.Name, file)
	}
	data, err := s.versions.Pub.ReadFile(ctx, v, rel)
	if err != nil {
		return nil, err
	}
	vpath := s.pinnedDir(v) + "/" + rel
	maxFile, _ := s.lib.Catalog.TextLimits()
	switch {
	case int64(len(data)) > maxFile:
		return nil, fmt.Errorf("%w: %s is %d bytes, larger than the %d read as text; export the version instead", errkind.FailedPrecondition, vpath, len(data), maxFile)
	case binary(data):
		return nil, fmt.Errorf("%w: %s is not a text file; export the version instead", errkind.FailedPrecondition, vpath)
	}
	return &skillsvcv1.ReadSkillFileResponse{Path: vpath, Content: string(data)}, nil
}

// exportPinned writes the version as ExportSkill's archive: entries
// <name>/<path>, scripts and "#!" files executable.
func (s *Skills) exportPinned(ctx context.Context, req *skillsvcv1.ExportSkillRequest, w io.Writer) error {
	v, err := s.pinned(ctx, req.GetPath(), req.GetVersion())
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, f := range v.Files {
		data, err := s.versions.Pub.ReadFile(ctx, v, f.Rel)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if strings.HasPrefix(f.Rel, "scripts/") || bytes.HasPrefix(data, []byte("#!")) {
			mode = 0o755
		}
		hdr := &tar.Header{Name: v.Name + "/" + f.Rel, Mode: mode, Size: int64(len(data)), ModTime: v.Created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
