package library

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/textfile"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Reads that name a version (GetSkill, RenderSkill, ReadSkillFile and
// ExportSkill with a version) are served here from the version's record
// and blobs, never from the live copy or the catalog's index: the server
// asks once and gets back a value to encode.

// Pinned finds the version ref of the skill name for a read that pins it
// (GetSkill, RenderSkill, ReadSkillFile, ExportSkill with a version): in
// the library serving the name in the caller's view (layer), else the
// caller's own library, its teams' (in ID order), then the shared one.
func (p *Publisher) Pinned(ctx context.Context, a Actor, name, layer, ref string) (Version, error) {
	if err := checkName(name); err != nil {
		return Version{}, err
	}
	own, shared := layout.LibraryRef{User: a.User}, layout.LibraryRef{Shared: true}
	var order []layout.LibraryRef
	switch team, isTeam := strings.CutPrefix(layer, skillview.LayerTeam); {
	case layer == skillview.LayerShared:
		order = []layout.LibraryRef{shared}
	case layer == skillview.LayerUser:
		order = []layout.LibraryRef{own}
	case isTeam:
		order = []layout.LibraryRef{{Team: team}}
	default:
		order = append(order, own)
		for _, t := range a.Teams {
			order = append(order, layout.LibraryRef{Team: t})
		}
		order = append(order, shared)
	}
	var firstErr error
	for _, l := range order {
		if _, _, err := p.authorize(a, l, read); err != nil {
			return Version{}, err // a team layer of a caller not its member
		}
		v, err := p.find(ctx, a, l, name, ref)
		if err == nil {
			if v.State == versions.Rejected {
				return Version{}, fmt.Errorf("%w: version %s of %s was rejected", errkind.FailedPrecondition, v.ID, name)
			}
			return v, nil
		}
		if errkind.Of(err) != errkind.NotFound {
			return Version{}, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return Version{}, firstErr
}

// pinned resolves ref (as the unpinned read of id takes it) and version:
// the library is the one serving the name in the caller's view, else the
// caller's own, else the shared one.
func (p *Publisher) pinned(ctx context.Context, a Actor, id mounts.Caller, ref, version string) (Version, error) {
	if len(version) > 128 {
		return Version{}, fmt.Errorf("%w: version is a version id, a prefix of one or a label", errkind.InvalidArgument)
	}
	name, layer := "", ""
	if d, err := p.catalog.Get(ctx, id, ref); err == nil {
		name, layer = d.Name, d.Layer
	} else if k := errkind.Of(err); k != errkind.NotFound && k != errkind.FailedPrecondition {
		return Version{}, err
	} else {
		// Deleted, or invalid as it stands: the name is the folder's.
		name = path.Base(strings.TrimSuffix(strings.TrimPrefix(ref, p.catalog.Mount()+"/"), "/"+skillmd.SkillFile))
	}
	return p.Pinned(ctx, a, name, layer, version)
}

// pinnedDir is the version's folder under the mount.
func (p *Publisher) pinnedDir(v Version) string {
	return p.catalog.Mount() + "/" + dir(v.Category, v.Name)
}

// pinnedDetail is the version's SKILL.md parsed, as the catalog would list
// the same files (without the other files).
func (p *Publisher) pinnedDetail(ctx context.Context, v Version) (skillview.Detail, error) {
	raw, err := p.ReadFile(ctx, v, skillmd.SkillFile)
	if err != nil {
		return skillview.Detail{}, err
	}
	fm, body, problems := skillmd.ParseSkillMD(raw, v.Name)
	layer := skillview.LayerUser
	switch {
	case v.Library.Shared:
		layer = skillview.LayerShared
	case v.Library.Team != "":
		layer = skillview.LayerTeam + v.Library.Team
	}
	m := &skillview.Manifest{TotalBytes: v.TotalBytes, FileCount: len(v.Files), Digest: v.ID}
	for _, f := range v.Files {
		mode, err := p.pinnedMode(ctx, v, f)
		if err != nil {
			return skillview.Detail{}, err
		}
		m.Files = append(m.Files, skillview.ManifestFile{Path: p.pinnedDir(v) + "/" + f.Rel, Size: int32(f.Size), SHA256: f.SHA256, Mode: mode})
	}
	sk := skillview.Skill{
		Path: p.pinnedDir(v), Dir: dir(v.Category, v.Name), Folder: v.Name, Category: v.Category, Layer: layer, ETag: v.ID,
		Manifest: m, Frontmatter: fm, Problems: problems,
	}
	return skillview.Detail{Skill: sk, Raw: string(raw), Body: body}, nil
}

// pinnedMode is the mode f of version v is served with: the one recorded
// at publish, or for a version recorded before modes were, by the shebang
// rule on its bytes.
func (p *Publisher) pinnedMode(ctx context.Context, v Version, f skillmd.FileDigest) (fs.FileMode, error) {
	if f.Mode != 0 {
		return filemode.Normal(f.Mode), nil
	}
	data, err := p.ReadFile(ctx, v, f.Rel)
	if err != nil {
		return 0, err
	}
	return filemode.Of(0, data), nil
}

// GetPinned is GetSkill of the version of ref the caller id names: its
// SKILL.md and its other files, each told binary or not.
func (p *Publisher) GetPinned(ctx context.Context, a Actor, id mounts.Caller, ref, version string) (skillview.Detail, error) {
	v, err := p.pinned(ctx, a, id, ref, version)
	if err != nil {
		return skillview.Detail{}, err
	}
	d, err := p.pinnedDetail(ctx, v)
	if err != nil {
		return skillview.Detail{}, err
	}
	// Whether each file is binary takes its bytes: read them together
	// (a version holds at most skillmd.MaxSkillBytes).
	for _, f := range v.Files {
		if f.Rel != skillmd.SkillFile {
			d.Files = append(d.Files, skillview.File{Path: f.Rel, Size: f.Size})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range d.Files {
		f := &d.Files[i]
		g.Go(func() error {
			data, err := p.ReadFile(gctx, v, f.Path)
			f.Binary = textfile.IsBinary(data, int64(len(data)))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return skillview.Detail{}, err
	}
	return d, nil
}

// RenderPinned is RenderSkill of the version: its body as the catalog
// renders a live skill's, and the skill.
func (p *Publisher) RenderPinned(ctx context.Context, a Actor, id mounts.Caller, ref, version string, opts skillview.RenderOptions) (string, skillview.Skill, error) {
	if err := skillmd.CheckBaseDir(opts.BaseDir); err != nil {
		return "", skillview.Skill{}, err
	}
	v, err := p.pinned(ctx, a, id, ref, version)
	if err != nil {
		return "", skillview.Skill{}, err
	}
	d, err := p.pinnedDetail(ctx, v)
	if err != nil {
		return "", skillview.Skill{}, err
	}
	sk := d.Skill
	if !sk.Problems.Valid() {
		return "", skillview.Skill{}, fmt.Errorf("%w: %s (version %s): %s", skills.ErrInvalidSkill, sk.Path, v.ID, strings.Join(sk.Errors, "; "))
	}
	base := opts.BaseDir
	if base == "" {
		base = sk.Path
	}
	_, maxRender := p.catalog.TextLimits()
	if n := skillmd.RenderedSize(base, d.Body, opts.Arguments); n > maxRender {
		return "", skillview.Skill{}, fmt.Errorf("%w: rendering %s with these arguments makes %d bytes, at most %d are returned", errkind.ResourceExhausted, sk.Path, n, maxRender)
	}
	return skillmd.RenderBody(base, d.Body, opts.Arguments), sk, nil
}

// ReadPinned is ReadSkillFile of the version: one file as text and its
// virtual path, found as the live skill's (mounts.Fallback: a name
// without an extension is also tried with ".md").
func (p *Publisher) ReadPinned(ctx context.Context, a Actor, id mounts.Caller, ref, version, file string) (string, string, error) {
	content, vpath, _, err := p.ReadPinnedOf(ctx, a, id, ref, version, file)
	return content, vpath, err
}

// PinnedSkill is the version a pinned read served: what its usage record
// names.
type PinnedSkill struct {
	Name, Layer, ID string
	File            string // the file read, relative to the skill folder
}

// ReadPinnedOf is ReadPinned, and the version it read.
func (p *Publisher) ReadPinnedOf(ctx context.Context, a Actor, id mounts.Caller, ref, version, file string) (string, string, PinnedSkill, error) {
	content, vpath, v, err := p.readPinned(ctx, a, id, ref, version, file)
	if err != nil {
		return "", "", PinnedSkill{}, err
	}
	ps := pinnedSkill(v)
	ps.File = strings.TrimPrefix(vpath, p.pinnedDir(v)+"/")
	return content, vpath, ps, nil
}

// PinnedOf is the version a read of ref pinned to version serves (what
// an ExportSkill's use names).
func (p *Publisher) PinnedOf(ctx context.Context, a Actor, id mounts.Caller, ref, version string) (PinnedSkill, error) {
	v, err := p.pinned(ctx, a, id, ref, version)
	return pinnedSkill(v), err
}

func pinnedSkill(v Version) PinnedSkill {
	layer := skillview.LayerUser
	switch {
	case v.Library.Shared:
		layer = skillview.LayerShared
	case v.Library.Team != "":
		layer = skillview.LayerTeam + v.Library.Team
	}
	return PinnedSkill{Name: v.Name, Layer: layer, ID: v.ID}
}

func (p *Publisher) readPinned(ctx context.Context, a Actor, id mounts.Caller, ref, version, file string) (string, string, Version, error) {
	v, err := p.pinned(ctx, a, id, ref, version)
	if err != nil {
		return "", "", v, err
	}
	file = strings.TrimPrefix(file, "./")
	if !mounts.Addressable(file) {
		return "", "", v, fmt.Errorf("%w: file %q must be a relative path inside the skill folder", errkind.InvalidArgument, file)
	}
	alt, hasAlt := mounts.Fallback(file)
	rel := ""
	for _, f := range v.Files {
		if f.Rel == file || (rel == "" && hasAlt && f.Rel == alt) {
			rel = f.Rel
		}
	}
	if rel == "" {
		return "", "", v, fmt.Errorf("%w: version %s of %s has no file %q", errkind.NotFound, v.ID, v.Name, file)
	}
	data, err := p.ReadFile(ctx, v, rel)
	if err != nil {
		return "", "", v, err
	}
	vpath := p.pinnedDir(v) + "/" + rel
	maxFile, _ := p.catalog.TextLimits()
	switch {
	case int64(len(data)) > maxFile:
		return "", "", v, fmt.Errorf("%w: %s is %d bytes, larger than the %d read as text; export the version instead", errkind.FailedPrecondition, vpath, len(data), maxFile)
	case textfile.IsBinary(data, int64(len(data))):
		return "", "", v, fmt.Errorf("%w: %s is not a text file; export the version instead", errkind.FailedPrecondition, vpath)
	}
	return string(data), vpath, v, nil
}

// ExportPinned writes the version as ExportSkill's archive to w: entries
// <name>/<path>, each with the mode recorded at publish (by the shebang
// rule for a version recorded before modes were).
func (p *Publisher) ExportPinned(ctx context.Context, a Actor, id mounts.Caller, ref, version string, w io.Writer) error {
	v, err := p.pinned(ctx, a, id, ref, version)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, f := range v.Files {
		data, err := p.ReadFile(ctx, v, f.Rel)
		if err != nil {
			return err
		}
		mode := filemode.Of(f.Mode, data)
		hdr := &tar.Header{Name: v.Name + "/" + f.Rel, Mode: int64(mode), Size: int64(len(data)), ModTime: v.Created, Typeflag: tar.TypeReg}
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
