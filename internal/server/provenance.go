package server

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/provenance"
	"github.com/skillsvc/skillsvc/internal/server/convert"
)

// withProvenance appends GetSkillResponse.provenance to an encoded reply
// (kept in the reply cache without it: a signature or a review changes it,
// not the skill's bytes).
func withProvenance(b []byte, p *skillsvcv1.Provenance) ([]byte, error) {
	if p == nil {
		return b, nil
	}
	pb, err := proto.Marshal(p)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(pb)+8)
	out = append(out, b...)
	out = protowire.AppendTag(out, 7, protowire.BytesType) // GetSkillResponse.provenance
	return protowire.AppendBytes(out, pb), nil
}

// reserve is what a summary's provenance may add to a reply when the
// service serves provenance (provenance.Reserve), for fitReply; else 0.
// Counted whether a call asks for it or not, so a page is cut the same
// for both and one kept reply serves both.
func (s *Skills) reserve() int {
	if s.versions == nil || s.versions.Provenance == nil {
		return 0
	}
	return provenance.Reserve
}

// withListedProvenance sets each summary's provenance in b, an encoded
// ListSkills reply (summaries at provenance.ListSkills) or SearchSkills
// reply (provenance.SearchSkills): the kept reply is the same whatever a
// signature or a review changes, and only its summaries' origins are read,
// not the reply decoded. One lookup serves the page (cached reads).
func (s *Skills) withListedProvenance(ctx context.Context, id mounts.Caller, b []byte, at []protowire.Number) ([]byte, error) {
	if s.versions == nil || s.versions.Provenance == nil {
		return b, nil
	}
	origins, err := provenance.Origins(b, at)
	if err != nil || len(origins) == 0 {
		return b, err
	}
	ps, err := s.versions.Provenance(ctx, id, origins)
	if err != nil || len(ps) != len(origins) {
		return b, err
	}
	return provenance.Splice(b, at, ps)
}

// AttachSignature implements LibraryService.
func (s *Library) AttachSignature(ctx context.Context, req *skillsvcv1.AttachSignatureRequest) (*skillsvcv1.AttachSignatureResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.v.Pub.AttachSignature(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetVersion(), req.GetBundle(), req.GetPublicKey())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.AttachSignatureResponse{Version: convert.Version(v, false)}, nil
}
