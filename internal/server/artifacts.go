package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillarchive"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// artifactBudget bounds the bytes of skills one ListSkills call packs to
// learn archive digests nobody has cached: the page ends before the skill
// that would pass it (never before its first), and the next page's call,
// admitted and charged as any call, goes on.
var artifactBudget int64 = 64 << 20

// The artifact types of the Agent Skills discovery draft.
const (
	artifactSkillMD = "skill-md"
	artifactArchive = "archive"
)

// WithArchiveDigests keeps the archive digests ListSkills learns in d,
// shared by the replicas; without it they are kept in process.
func WithArchiveDigests(d *skillarchive.Digests) SkillsOption {
	return func(s *Skills) { s.archives = d }
}

// artifacts returns how many of skills, from the first, a page with
// artifacts holds, and their artifacts (nil for a skill over the limits or
// one the export refuses). A skill of SKILL.md alone is its SKILL.md, whose
// digest its manifest has; any other is its root-layout archive, whose
// digest is cached by the manifest digest or learned by packing it.
func (s *Skills) artifacts(ctx context.Context, id mounts.Caller, skills []skillview.Skill) (int, []*skillsvcv1.SkillArtifact, error) {
	manifests := make([]string, len(skills))
	for i, sk := range skills {
		manifests[i] = sk.ManifestDigest()
	}
	cached := s.archives.Lookup(ctx, manifests)
	out := make([]*skillsvcv1.SkillArtifact, len(skills))
	budget := artifactBudget
	for i, sk := range skills {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		m := sk.Manifest
		switch {
		case m == nil || m.OverLimits || m.Digest == "":
		case len(m.Files) == 1 && strings.HasSuffix(m.Files[0].Path, "/SKILL.md"):
			out[i] = &skillsvcv1.SkillArtifact{Type: artifactSkillMD, Digest: "sha256:" + m.Files[0].SHA256}
		case cached[m.Digest] != "":
			out[i] = &skillsvcv1.SkillArtifact{Type: artifactArchive, Digest: cached[m.Digest]}
		default:
			if budget -= m.TotalBytes; budget < 0 && i > 0 {
				return i, out[:i], nil
			}
			d, err := s.archiveDigest(ctx, id, sk)
			if err != nil {
				return 0, nil, err
			}
			if d != "" {
				out[i] = &skillsvcv1.SkillArtifact{Type: artifactArchive, Digest: d}
			}
		}
	}
	return len(skills), out, nil
}

// archiveDigest packs sk's root-layout archive into a hash, and keeps the
// digest when the files packed are exactly sk's manifest: a skill that
// changed while it was packed gets none now (the listing that shows the
// change asks again), so no digest is ever cached for other bytes. A skill
// the export refuses (too large, invalid, gone) has none.
func (s *Skills) archiveDigest(ctx context.Context, id mounts.Caller, sk skillview.Skill) (string, error) {
	h := sha256.New()
	got, files, err := packRoot(func(w io.Writer) (skillview.Skill, error) {
		return s.lib.Exporter.Export(ctx, id, sk.Path, w)
	}, h)
	switch errkind.Of(err) {
	case errkind.ResourceExhausted, errkind.NotFound, errkind.FailedPrecondition:
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if got.ManifestDigest() != sk.ManifestDigest() || !packed(files, got.Manifest) {
		return "", nil
	}
	d := "sha256:" + hex.EncodeToString(h.Sum(nil))
	s.archives.Store(ctx, sk.ManifestDigest(), d)
	return d, nil
}

// packed reports whether files are m's, path by path and byte for byte.
func packed(files []skillarchive.File, m *skillview.Manifest) bool {
	if m == nil || len(files) != len(m.Files) {
		return false
	}
	for i, f := range files {
		if !strings.HasSuffix(m.Files[i].Path, "/"+f.Path) || m.Files[i].SHA256 != f.SHA256 {
			return false
		}
	}
	return true
}

// packRoot runs export, which writes a folder-layout archive, through
// skillarchive.Repack into w: the root layout. The export's own error wins
// over what the repack made of it.
func packRoot(export func(io.Writer) (skillview.Skill, error), w io.Writer) (skillview.Skill, []skillarchive.File, error) {
	pr, pw := io.Pipe()
	var (
		sk        skillview.Skill
		exportErr error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sk, exportErr = export(pw)
		pw.CloseWithError(exportErr) // nil: the reader sees EOF
	}()
	files, err := skillarchive.Repack(w, pr)
	pr.CloseWithError(errRepackStopped) // an export still writing stops
	<-done
	if exportErr != nil && !errors.Is(exportErr, errRepackStopped) {
		return sk, nil, exportErr
	}
	return sk, files, err
}

var errRepackStopped = errors.New("the repack stopped reading")

// exportLayout checks an ExportSkill layout.
func exportLayout(l skillsvcv1.ArchiveLayout) error {
	if _, ok := skillsvcv1.ArchiveLayout_name[int32(l)]; !ok {
		return fmt.Errorf("%w: layout %d is not an ArchiveLayout", errkind.InvalidArgument, l)
	}
	return nil
}
