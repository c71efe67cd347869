package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/mcpserver/skillres"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// An identity's library is watched while it has sessions, on the
// catalog's change feed (internal/watch, WithFeed: the source WatchSkills
// streams from), so a change made through the API on any replica, or
// straight into the bucket, reaches the sessions as it reaches watchers:
// each new state of the library sends notifications/resources/list_changed
// to the identity's sessions, and a stat of the files they subscribed to
// sends notifications/resources/updated for each that changed. Without a
// feed no notifications are sent.

// maxSubscriptions bounds the files one identity's sessions may subscribe
// to, so the watcher's work per change is bounded.
const maxSubscriptions = 256

// firstLookTimeout bounds the wait for the feed's first look at a new
// watcher's library.
const firstLookTimeout = 10 * time.Second

// startWatching starts the watcher unless it runs. The first state is
// taken here, before the session's initialize is answered, so a change the
// client makes after connecting is a change to it.
func (s *identityServer) startWatching(id mounts.Caller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching || s.h.ctx.Err() != nil || s.h.feed == nil || id.User() == "" {
		return
	}
	// Not counted against --watch.max-per-user: sessions have caps of
	// their own, and one watcher serves all of an identity's sessions.
	sub, err := s.h.feed.Subscribe(id, false)
	if err != nil {
		s.h.log.Debug("mcp watch: subscribing", "err", err)
		return
	}
	s.watching = true
	ctx, cancel := context.WithTimeout(s.h.ctx, firstLookTimeout)
	_, _ = sub.Next(ctx) // s.mu is held; on timeout, the first state is a change
	cancel()
	s.h.watchers.Add(1)
	go func() {
		// A panic in a catalog call here must not end the process; the
		// identity's next session starts a new watcher.
		if err := panics.Guard(func() error { s.watch(sub); return nil })(); err != nil {
			s.h.log.Error("mcp watch: stopped", "err", err)
			s.stopWatching(true)
		}
	}()
}

// watch waits for the library's next state; every --mcp.watch-interval it
// also checks that the identity still has sessions.
func (s *identityServer) watch(sub *watch.Sub) {
	defer s.h.watchers.Done()
	defer sub.Close()
	for {
		ctx, cancel := context.WithTimeout(s.h.ctx, s.h.cfg.WatchInterval)
		_, err := sub.Next(ctx)
		cancel()
		switch {
		case s.h.ctx.Err() != nil || errors.Is(err, watch.ErrClosed):
			s.stopWatching(true)
			return
		case s.stopWatching(false):
			return
		case err != nil:
			continue // the interval passed without a change
		}
		// Re-adding the template is the SDK's way to have every session
		// of this server sent notifications/resources/list_changed.
		s.srv.AddResourceTemplate(skillTemplate, s.readSkillFile)
		s.h.log.Info("mcp: library changed, sessions notified", "identity", s.key, "sessions", s.h.sessions.count(s))
		ctx, cancel = context.WithTimeout(s.h.callContext(s.h.ctx, s.latest(), ""), s.h.cfg.WatchInterval)
		s.check(ctx)
		cancel()
	}
}

// stopWatching ends the watcher when the handler closes or the identity has
// no sessions left; under s.mu, so a session that starts meanwhile starts a
// new watcher.
func (s *identityServer) stopWatching(force bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !force && s.h.sessions.active(s) {
		return false
	}
	s.watching = false
	return true
}

// check stats the subscribed files after the library changed. It counts as
// one request of the identity's user, as a client polling would, and its
// storage requests are charged as a request's; over the limits, the files
// are looked at after the next change.
func (s *identityServer) check(ctx context.Context) {
	release, err := s.h.limits.Acquire(ctx, s.user)
	if err != nil {
		s.h.log.Debug("mcp watch: over the per-user limits, next change", "err", err)
		return
	}
	defer release()
	ctx, reqs := objstore.CountRequests(ctx)
	defer func() { s.h.limits.Charge(s.user, quota.StorageCost(reqs.Counts())) }()
	s.checkSubscriptions(ctx)
}

func (s *identityServer) checkSubscriptions(ctx context.Context) {
	s.mu.Lock()
	uris := make([]string, 0, len(s.subscribed))
	for uri := range s.subscribed {
		uris = append(uris, uri)
	}
	s.mu.Unlock()
	for _, uri := range uris {
		etag := s.etag(ctx, uri)
		s.mu.Lock()
		prev, ok := s.versions[uri]
		if _, still := s.subscribed[uri]; still {
			s.versions[uri] = etag
		}
		s.mu.Unlock()
		if ok && prev != etag {
			s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}

// etag is the file's ETag, or "" when it is gone (a deletion is a change).
func (s *identityServer) etag(ctx context.Context, uri string) string {
	virtual, err := skillres.Parse(s.h.skillsMount, uri)
	if err != nil {
		return ""
	}
	info, err := call(ctx, s.h, "/skillsvc.v1.FilesystemService/Stat", &skillsvcv1.StatRequest{Path: virtual}, func(id mounts.Caller) (vfs.Info, error) {
		return s.h.fs.Stat(ctx, id, virtual)
	})
	if err != nil {
		return ""
	}
	return info.ETag
}

func (s *identityServer) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, err := skillres.Parse(s.h.skillsMount, uri); err != nil {
		return invalidParams("only skill:// file resources can be subscribed to: %v", err)
	}
	etag := s.etag(ctx, uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subscribed[uri]; !ok && len(s.subscribed) >= maxSubscriptions {
		return invalidParams("too many subscriptions (at most %d)", maxSubscriptions)
	}
	s.subscribed[uri]++
	s.versions[uri] = etag
	return nil
}

func (s *identityServer) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	uri := req.Params.URI
	if s.subscribed[uri]--; s.subscribed[uri] <= 0 {
		delete(s.subscribed, uri)
		delete(s.versions, uri)
	}
	return nil
}
