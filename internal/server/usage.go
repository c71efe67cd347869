package server

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
	"google.golang.org/grpc"

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
