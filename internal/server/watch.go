package server

import (
	"fmt"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// SkillsOption configures NewSkills.
type SkillsOption func(*Skills)

// WithFeed serves WatchSkills from f; without it WatchSkills is
// FAILED_PRECONDITION.
func WithFeed(f *watch.Feed) SkillsOption { return func(s *Skills) { s.feed = f } }

// WatchSkills streams the caller's catalog changes from the feed. The
// first message comes once the feed has looked at the catalog: the changes
// since since_digest (none when it is empty or current), or reset when no
// replica keeps that state any more. Each later message is the difference
// between the state the client last got and the newest: a client that
// reads slowly gets fewer, bigger messages, never a queue. The stream holds
// no per-user concurrency slot once open (it would starve the user's other
// calls); the feed bounds open watches per user and per replica.
func (s *Skills) WatchSkills(req *skillsvcv1.WatchSkillsRequest, stream skillsvcv1.SkillsService_WatchSkillsServer) error {
	ctx := stream.Context()
	id, err := identity(ctx)
	if err != nil {
		return err
	}
	since := req.GetSinceDigest()
	if err := watch.CheckDigest(since); err != nil {
		return err
	}
	if s.feed == nil {
		return fmt.Errorf("%w: this server does not serve WatchSkills", errkind.FailedPrecondition)
	}
	sub, err := s.feed.Subscribe(id, true)
	if err != nil {
		return err
	}
	defer sub.Close()
	quota.Release(ctx)
	cur, err := sub.Next(ctx)
	if err != nil {
		return err
	}
	first := &skillsvcv1.WatchSkillsResponse{LibraryDigest: cur.Digest}
	if since != "" && since != cur.Digest {
		if old, ok := s.feed.Resume(ctx, id.User(), since); ok {
			first.Changes = changesProto(watch.Diff(old, cur))
		} else {
			first.Reset_ = true
		}
	}
	if err := stream.Send(first); err != nil {
		return err
	}
	for {
		next, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		msg := &skillsvcv1.WatchSkillsResponse{LibraryDigest: next.Digest, Changes: changesProto(watch.Diff(cur, next))}
		if err := stream.Send(msg); err != nil {
			return err
		}
		cur = next
	}
}

var changeKinds = map[watch.ChangeKind]skillsvcv1.SkillChange_Kind{
	watch.Added:    skillsvcv1.SkillChange_KIND_ADDED,
	watch.Changed:  skillsvcv1.SkillChange_KIND_CHANGED,
	watch.Removed:  skillsvcv1.SkillChange_KIND_REMOVED,
	watch.Enabled:  skillsvcv1.SkillChange_KIND_ENABLED,
	watch.Disabled: skillsvcv1.SkillChange_KIND_DISABLED,
}

func changesProto(changes []watch.Change) []*skillsvcv1.SkillChange {
	out := make([]*skillsvcv1.SkillChange, len(changes))
	for i, c := range changes {
		out[i] = &skillsvcv1.SkillChange{Kind: changeKinds[c.Kind], Name: c.Name, Path: c.Path, Layer: c.Layer, ManifestDigest: c.Digest}
		if c.Kind == watch.Removed {
			out[i].ManifestDigest = ""
		}
	}
	return out
}
