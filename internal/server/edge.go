package server

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/server/reqcheck"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// The other edges (internal/mcpserver) call the catalog and the filesystem
// directly, not through the gRPC services; they apply what the interceptor
// chain gives a call with these, so each is written once.

// CheckRequest is the request check of ValidateUnaryInterceptor: every
// string of req (a request message) is UTF-8.
func CheckRequest(req any) error { return reqcheck.Check(req) }

// LogCall writes the log line of LoggingUnaryInterceptor for a call of
// method that started at start and ended with err (a status error).
func LogCall(ctx context.Context, log *slog.Logger, method string, start time.Time, err error) {
	annotateSpan(ctx)
	logCall(ctx, log, method, start, err)
}

// RequirePath is the filesystem handlers' check that a request names a
// path.
func RequirePath(p string) error { return requirePath(p) }

// SearchFit is how many of a search's hits SearchSkills' reply holds:
// the weakest are dropped where the reply would pass maxBytes
// (--skills.max-page-bytes), and the reply says it was truncated. MCP's
// search_skills tool drops and says the same.
func SearchFit(hits []skillview.Scored, maxBytes int) int {
	return fitReply(len(hits), maxBytes, func(i int) int {
		return scoredSize(summaryProto(hits[i].Skill, described), hits[i].Alternates)
	})
}

// scoredSize is what a hit with summary sum and alternates alts adds to a
// SearchSkills reply.
func scoredSize(sum *skillsvcv1.SkillSummary, alts []skillview.Alternate) int {
	// A ScoredSkill is the summary (field 1), two doubles and the
	// alternates (field 4).
	scored := repeatedSize(proto.Size(sum)) + 2*(protowire.SizeTag(2)+protowire.SizeFixed64())
	for _, a := range alternatesProto(alts) {
		scored += repeatedSize(proto.Size(a))
	}
	return repeatedSize(scored)
}
