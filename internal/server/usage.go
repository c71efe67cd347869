package server

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"

	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// Each handler that serves a skill records its use (internal/skilluse)
// where the skill is resolved, before a kept reply is looked up, so a
// reply answered from the cache is counted as one built is. The surface
// is "grpc", or "json" for a call through InProcess (the JSON gateway):
// only InProcess's own interceptor sets that mark, in the server-side
// context, which no header or metadata a client sends can reach.

// WithUsage records the uses of skills the handler serves in r.
func WithUsage(r usage.Recorder) SkillsOption {
	return func(s *Skills) { s.usage = skilluse.For(r) }
}

type inProcessKey struct{}

// surface is where the call of ctx came in.
func surface(ctx context.Context) string {
	if ctx.Value(inProcessKey{}) != nil {
		return skilluse.JSON
	}
	return skilluse.GRPC
}

// markInProcess marks calls through InProcess as the JSON gateway's.
func markInProcess() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(context.WithValue(ctx, inProcessKey{}, true), req)
		}, func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, &contextStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), inProcessKey{}, true)})
		}
}

// replySkills reads the skills a reply encoded as b names, in order,
// without decoding the rest: a kept reply answers a repeated search or
// listing, and its skills are what the search's usage record and the
// span name. b is a SearchSkillsResponse when scored (results, each a
// ScoredSkill holding its summary), else a ListSkillsResponse (skills).
// Only the first max are read; total counts them all.
func replySkills(b []byte, scored bool, max int) (out []skilluse.Skill, total int) {
	summary := func(b []byte) {
		total++
		if len(out) == max {
			return
		}
		var sk skilluse.Skill
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

// The numbers of the fields replySkills reads.
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

// maxOfferedBlocks bounds the blocks whose offered skills a replica
// remembers (blockOffered): a kept reply is bytes, which do not say them.
// Each holds at most skilluse.MaxOffered skills (a few KiB).
const maxOfferedBlocks = 1024

// blockOffered remembers the skills of the prompt blocks replies kept, by
// their keys, for the usage record and span of a call a kept reply
// answers.
type blockOffered = lru.Cache[string, skilluse.Offer]

func newBlockOffered() *blockOffered {
	c, _ := lru.New[string, skilluse.Offer](maxOfferedBlocks) // fails only for a size < 1
	return c
}
