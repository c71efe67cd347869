package server

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// WithReplies keeps the handler's encoded replies in rc, one cache for every
// handler of the process (the gRPC server's and the in-process channel's). Without it
// the handler keeps its own, in process, within --skills.reply-cache-bytes.
func WithReplies(rc *replies.Cache) SkillsOption { return func(s *Skills) { s.replies = rc } }

// encode turns a catalog answer into the reply sent for it. It must depend
// on nothing but its argument and what the key names (the variant of a
// page), as its result answers every later call with the same key.
type encode[T any] func(T) ([]byte, error)

// pageReply is the caller's page encoded by enc, reused while the caller's
// library and settings and the request are unchanged: a warm listing costs
// the lookup of the view and settings every call makes, not a listing and
// an encoding. variant names whatever else enc depends on.
func (s *Skills) pageReply(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, pageSize int32, token, variant string, enc encode[skillview.Page]) ([]byte, error) {
	q, err := s.lib.Catalog.PageQuery(opts, pageSize, token)
	if err != nil {
		return nil, err
	}
	snap, err := s.lib.Catalog.Snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.feed != nil {
		// The feed keeps the state a client may resume a watch from.
		s.feed.Listed(ctx, id, snap.LibraryDigest(), snap.State)
	}
	return s.replies.Get(ctx, replies.KindList, snap.PageKey(q, variant), func() ([]byte, error) { return enc(snap.Page(q)) })
}

// promptReply is the caller's prompt block encoded by enc, reused as
// pageReply's pages are, and the caller's library digest. The block enc is
// given has no LibraryDigest (skills.Snapshot.Prompt): users who see the
// same block share one kept reply.
func (s *Skills) promptReply(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, f skillmd.FormatOptions, enc encode[skillview.Block]) (reply []byte, libraryDigest string, err error) {
	q, err := s.lib.Catalog.PromptQuery(opts, f)
	if err != nil {
		return nil, "", err
	}
	snap, err := s.lib.Catalog.Snapshot(ctx, id)
	if err != nil {
		return nil, "", err
	}
	key := snap.PromptKey(q)
	reply, err = s.replies.Get(ctx, replies.KindFormat, key, func() ([]byte, error) {
		// Waiters on this build share it: one leaving fails none (as
		// replies.Cache.Get).
		b, err := snap.Prompt(context.WithoutCancel(ctx), q)
		if err != nil {
			return nil, err
		}
		s.offered.Add(key, skilluse.OfBlock(b.Offered))
		return enc(b)
	})
	if err != nil {
		return nil, "", err
	}
	if f.Query != "" && s.usage.Searches(ctx) || skilluse.Tracing(ctx) {
		s.promptUsed(ctx, id, snap, q, key, f.Query)
	}
	return reply, snap.LibraryDigest(), nil
}

// promptUsed records a query-aware block as a search that returned the
// skills it offered, and marks the span with them. A kept reply's block
// is remembered by its key; one another replica built (the shared tier)
// or one forgotten is made again, once.
func (s *Skills) promptUsed(ctx context.Context, id mounts.Caller, snap skills.Snapshot, q skills.PromptQuery, key, query string) {
	offered, ok := s.offered.Get(key)
	if !ok {
		b, err := snap.Prompt(ctx, q)
		if err != nil {
			return // the reply was sent; its record is not worth a failure
		}
		offered = skilluse.OfBlock(b.Offered)
		s.offered.Add(key, offered)
	}
	s.usage.Block(ctx, surface(ctx), id, query, offered)
}

// searchReply is the caller's search results encoded by enc, reused as
// pageReply's pages are for a repeated query.
func (s *Skills) searchReply(ctx context.Context, id mounts.Caller, opts skillview.SearchOptions, enc encode[skillview.Results]) ([]byte, error) {
	q, err := s.lib.Catalog.SearchQuery(opts)
	if err != nil {
		return nil, err
	}
	snap, err := s.lib.Catalog.Snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.replies.Get(ctx, replies.KindSearch, snap.SearchKey(q), func() ([]byte, error) {
		res, err := snap.Search(context.WithoutCancel(ctx), q) // as promptReply's
		if err != nil {
			return nil, err
		}
		return enc(res)
	})
}

// getReply is the skill ref resolves to encoded by enc, reused while it is
// the same: one version of one layer's skill, with the same notes and
// enabled or not (skills.Resolved.ReplyKey), whoever asks. A pinned
// thread's call, and a SKILL.md read at a version newer than the
// listing's, are answered without keeping the reply.
func (s *Skills) getReply(ctx context.Context, id mounts.Caller, ref string, enc encode[skillview.Detail]) ([]byte, error) {
	b, _, err := s.getReplyOf(ctx, id, ref, enc)
	return b, err
}

// getReplyOf is getReply and the skill it answers for (its provenance is
// looked up by it).
func (s *Skills) getReplyOf(ctx context.Context, id mounts.Caller, ref string, enc encode[skillview.Detail]) ([]byte, skills.Resolved, error) {
	snap, err := s.lib.Catalog.Snapshot(ctx, id)
	if err != nil {
		return nil, skills.Resolved{}, err
	}
	sk, err := snap.Skill(ref)
	if err != nil {
		return nil, skills.Resolved{}, err
	}
	b, err := s.getReplyFor(ctx, sk, enc)
	if err == nil {
		// Resolved, so a kept reply's answer counts as a built one's.
		s.usage.Activated(ctx, surface(ctx), id, skilluse.OfRef(sk.Ref()))
	}
	return b, sk, err
}

func (s *Skills) getReplyFor(ctx context.Context, sk skills.Resolved, enc encode[skillview.Detail]) ([]byte, error) {
	key, early := sk.ReplyKey()
	if early {
		if b, ok := s.replies.Hit(replies.KindGet, key); ok {
			return b, nil
		}
	}
	f, err := sk.Read(ctx)
	if err != nil {
		return nil, err
	}
	build := func() ([]byte, error) {
		d, err := f.Detail(ctx)
		if err != nil {
			return nil, err
		}
		return enc(d)
	}
	if !f.Current() {
		s.replies.Count(replies.KindGet, replies.Uncached)
		return build()
	}
	if !sk.Admit(key) {
		s.replies.Count(replies.KindGet, replies.Miss)
		return build()
	}
	return s.replies.Get(ctx, replies.KindGet, key, build)
}
