package server

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	authors "github.com/skillsvc/skillsvc/internal/library"
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
	return &skillsvcv1.AttachSignatureResponse{Version: versionProto(v, false)}, nil
}

// signaturesProto converts a version's signatures; bundles and keys only
// with full.
func signaturesProto(v authors.Version, full bool) []*skillsvcv1.VersionSignature {
	var out []*skillsvcv1.VersionSignature
	for _, sg := range v.Signatures {
		o := &skillsvcv1.VersionSignature{KeyId: sg.KeyID, KeyName: sg.KeyName, AttachedBy: sg.By}
		if !sg.Time.IsZero() {
			o.AttachTime = timestamppb.New(sg.Time)
		}
		if full {
			o.Bundle, o.PublicKey = []byte(sg.Bundle), []byte(sg.PublicKey)
		}
		out = append(out, o)
	}
	return out
}
