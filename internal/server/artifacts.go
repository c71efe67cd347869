package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	got, files, err := skillarchive.PackRoot(func(w io.Writer) (skillview.Skill, error) {
		return s.lib.Exporter.Export(ctx, id, sk.Path, w)
	}, h)
	switch errkind.Of(err) {
	case errkind.ResourceExhausted, errkind.NotFound, errkind.FailedPrecondition:
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if got.ManifestDigest() != sk.ManifestDigest() || !skillarchive.Packed(files, got.Manifest) {
		return "", nil
	}
	d := "sha256:" + hex.EncodeToString(h.Sum(nil))
	s.archives.Store(ctx, sk.ManifestDigest(), d)
	return d, nil
}

// exportLayout checks an ExportSkill layout.
func exportLayout(l skillsvcv1.ArchiveLayout) error {
	if _, ok := skillsvcv1.ArchiveLayout_name[int32(l)]; !ok {
		return fmt.Errorf("%w: layout %d is not an ArchiveLayout", errkind.InvalidArgument, l)
	}
	return nil
}
