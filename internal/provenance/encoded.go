package provenance

import (
	"path"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Reserve is what a summary's provenance may add to a reply (field 22
// with its length, and the longer length prefixes of the summary and its
// ScoredSkill): a version (71 bytes), a publisher and an approver, a
// verdict, a status and a key's name, taking the names as at most 128
// bytes each (a mount ID's limit, and signing.MaxKeyName, checked where
// --library.signing-keys is loaded; a token subject longer than that,
// rare, overshoots by the difference). The server's
// page budget counts it for each skill, so a listing with provenance stays
// within --skills.max-page-bytes.
const Reserve = 512

// Where an encoded reply holds its summaries: the field numbers from the
// reply down (repeated fields: each element).
var (
	ListSkills   = []protowire.Number{1}    // ListSkillsResponse.skills
	SearchSkills = []protowire.Number{1, 1} // SearchSkillsResponse.results, ScoredSkill.skill
)

// SkillSummary's fields read and written here.
const (
	summaryPath       protowire.Number = 1  // path
	summaryLayer      protowire.Number = 6  // layer
	summaryDigest     protowire.Number = 20 // manifest_digest
	summaryProvenance protowire.Number = 22 // provenance
)

// Origins is the origin of each summary of b, an encoded reply holding
// them at at, in order.
func Origins(b []byte, at []protowire.Number) ([]Origin, error) {
	var out []Origin
	_, err := rewriteAt(b, at, false, func(sum []byte) []byte {
		out = append(out, originOf(sum))
		return nil
	})
	return out, err
}

// Splice is b with ps (aligned with Origins of b) set as its summaries'
// provenance; b is not written (it may be a kept reply).
func Splice(b []byte, at []protowire.Number, ps []*skillsvcv1.Provenance) ([]byte, error) {
	i := 0
	return rewriteAt(b, at, true, func(sum []byte) []byte {
		var p *skillsvcv1.Provenance
		if i < len(ps) {
			p = ps[i]
		}
		i++
		if p == nil {
			return sum
		}
		pb, _ := proto.Marshal(p) // a message of strings: never fails
		out := protowire.AppendTag(slices.Clip(sum), summaryProvenance, protowire.BytesType)
		return protowire.AppendBytes(out, pb)
	})
}

// originOf reads a summary's origin: its folder's name, layer and manifest
// digest.
func originOf(sum []byte) Origin {
	var o Origin
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
