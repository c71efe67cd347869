package server

import (
	"context"
	"path"
	"slices"

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

// provenanceReserve is what a summary's provenance may add to a reply
// (field 22 with its length, and the longer length prefixes of the
// summary and its ScoredSkill): a version (71 bytes), a publisher and an
// approver (identities of at most 128), a verdict, a status and a key's
// name. fitReply counts it for each skill, so a listing with provenance
// stays within --skills.max-page-bytes.
const provenanceReserve = 512

// reserve is provenanceReserve when replies carry provenance, else 0.
func (s *Skills) reserve() int {
	if s.versions == nil || s.versions.Provenance == nil {
		return 0
	}
	return provenanceReserve
}

// Encoded reply fields the provenance of listings is spliced into.
const (
	summaryField    protowire.Number = 1  // ListSkillsResponse.skills, ScoredSkill.skill
	resultsField    protowire.Number = 1  // SearchSkillsResponse.results
	summaryPath     protowire.Number = 1  // SkillSummary.path
	summaryLayer    protowire.Number = 6  // SkillSummary.layer
	summaryDigest   protowire.Number = 20 // SkillSummary.manifest_digest
	summaryProvence protowire.Number = 22 // SkillSummary.provenance
)

// withListedProvenance sets each summary's provenance in b, an encoded
// ListSkills reply (at fields [1]) or SearchSkills reply ([1, 1]): the
// kept reply is the same whatever a signature or a review changes, and
// only its summaries' origins are read, not the reply decoded. One lookup
// serves the page (internal/provenance: cached reads).
func (s *Skills) withListedProvenance(ctx context.Context, id mounts.Caller, b []byte, at ...protowire.Number) ([]byte, error) {
	if s.versions == nil || s.versions.Provenance == nil {
		return b, nil
	}
	var origins []provenance.Origin
	if _, err := rewriteAt(b, at, false, func(sum []byte) []byte {
		origins = append(origins, originOf(sum))
		return nil
	}); err != nil || len(origins) == 0 {
		return b, err
	}
	ps, err := s.versions.Provenance(ctx, id, origins)
	if err != nil || len(ps) != len(origins) {
		return b, err
	}
	i := 0
	return rewriteAt(b, at, true, func(sum []byte) []byte {
		p := ps[i]
		i++
		out := sum
		if p != nil {
			pb, _ := proto.Marshal(p) // a message of strings: never fails
			out = protowire.AppendTag(slices.Clip(sum), summaryProvence, protowire.BytesType)
			out = protowire.AppendBytes(out, pb)
		}
		return out
	})
}

// originOf reads a summary's origin: its folder's name, layer and manifest
// digest.
func originOf(sum []byte) provenance.Origin {
	var o provenance.Origin
	for len(sum) > 0 {
		num, typ, n := protowire.ConsumeTag(sum)
		if n < 0 {
			return o
		}
		sum = sum[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, sum); n < 0 {
				return o
			}
			sum = sum[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(sum)
		if n < 0 {
			return o
		}
		sum = sum[n:]
		switch num {
		case summaryPath:
			o.Folder = path.Base(string(v))
		case summaryLayer:
			o.Layer = string(v)
		case summaryDigest:
			o.Digest = string(v)
		}
	}
	return o
}

// rewriteAt is msg with each message at the field path at (repeated
// fields: each element) replaced by what visit returns of it; with write
// false it only visits them (and returns nil).
func rewriteAt(msg []byte, at []protowire.Number, write bool, visit func([]byte) []byte) ([]byte, error) {
	var out []byte
	if write {
		out = make([]byte, 0, len(msg)+len(msg)/4)
	}
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		field := msg[:n+m]
		msg = msg[n+m:]
		if num != at[0] || typ != protowire.BytesType {
			if write {
				out = append(out, field...)
			}
			continue
		}
		v, _ := protowire.ConsumeBytes(field[n:])
		inner := v
		if len(at) == 1 {
			inner = visit(v)
		} else {
			var err error
			if inner, err = rewriteAt(v, at[1:], write, visit); err != nil {
				return nil, err
			}
		}
		if write {
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, inner)
		}
	}
	return out, nil
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
