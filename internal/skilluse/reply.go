package skilluse

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// FromReply reads the skills a reply encoded as b names, in order,
// without decoding the rest: a kept reply answers a repeated search or
// listing, and its skills are what the search's usage record and the
// span name. b is a SearchSkillsResponse when scored (results, each a
// ScoredSkill holding its summary), else a ListSkillsResponse (skills).
// Only the first max are read; total counts them all.
func FromReply(b []byte, scored bool, max int) (out []Skill, total int) {
	summary := func(b []byte) {
		total++
		if len(out) == max {
			return
		}
		var sk Skill
		eachField(b, func(num protowire.Number, v []byte) {
			switch num {
			case fieldName:
				sk.Name = string(v)
			case fieldLayer:
				sk.Layer = string(v)
			case fieldDigest:
				sk.Version = string(v)
			}
		})
		out = append(out, sk)
	}
	eachField(b, func(num protowire.Number, v []byte) {
		switch {
		case scored && num == fieldResults:
			eachField(v, func(num protowire.Number, v []byte) {
				if num == fieldScoredSkill {
					summary(v)
				}
			})
		case !scored && num == fieldListed:
			summary(v)
		}
	})
	return out, total
}

// The numbers of the fields FromReply reads.
var (
	fieldResults     = fieldNumber(&skillsvcv1.SearchSkillsResponse{}, "results")
	fieldScoredSkill = fieldNumber(&skillsvcv1.ScoredSkill{}, "skill")
	fieldListed      = fieldNumber(&skillsvcv1.ListSkillsResponse{}, "skills")
	fieldName        = fieldNumber(&skillsvcv1.SkillSummary{}, "name")
	fieldLayer       = fieldNumber(&skillsvcv1.SkillSummary{}, "layer")
	fieldDigest      = fieldNumber(&skillsvcv1.SkillSummary{}, "manifest_digest")
)

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// eachField calls fn with each length-delimited field of the message b; a
// malformed b ends the walk.
func eachField(b []byte, fn func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return
		}
		fn(num, v)
		b = b[n:]
	}
}
