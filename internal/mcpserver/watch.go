package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// An identity's library is watched while it has sessions: every
// --mcp.watch-interval the watcher lists the library (ListSkills, which
// revalidates the catalog's index per --skills.index-refresh, so uploads
// made with other S3 tools are seen) and, when the listing changed, tells
// the identity's sessions with notifications/resources/list_changed. It
// also stats the files sessions subscribed to and sends
// notifications/resources/updated when one changed.

// maxSubscriptions bounds the files one identity's sessions may subscribe
// to, so the watcher's work per tick is bounded.
const maxSubscriptions = 256

// startWatching starts the watcher unless it runs. The first fingerprint is
// taken here, before the session's initialize is answered, so a change the
// client makes after connecting is a change to it.
func (s *identityServer) startWatching() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching || s.h.ctx.Err() != nil {
		return
	}
	s.watching = true
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(s.h.ctx, s.id.metadata()), s.h.cfg.WatchInterval) // s.mu is held
	s.fingerprint, _ = s.libraryFingerprint(ctx)                                                                     // on error, the first tick sets it
	cancel()
	s.h.watchers.Add(1)
	go s.watch()
}

func (s *identityServer) watch() {
	defer s.h.watchers.Done()
	t := time.NewTicker(s.h.cfg.WatchInterval)
	defer t.Stop()
	for {
		select {
		case <-s.h.ctx.Done():
			s.stopWatching(true)
			return
		case <-t.C:
		}
		if s.stopWatching(false) {
			return
		}
		ctx, cancel := context.WithTimeout(s.callCtx(s.h.ctx), s.h.cfg.WatchInterval)
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

// check is one look at the library and the subscribed files. It counts as
// one request of the identity's user, as a client polling would (the MCP
// loopback does not count the calls it makes); over the limits, the look
// waits for the next tick.
func (s *identityServer) check(ctx context.Context) {
	release, err := s.h.limits.Acquire(ctx, s.user)
	if err != nil {
		s.h.log.Debug("mcp watch: over the per-user limits, next tick", "err", err)
		return
	}
	defer release()
	fp, err := s.libraryFingerprint(ctx)
	if err != nil {
		s.h.log.Debug("mcp watch: listing skills", "err", err)
	} else {
		s.mu.Lock()
		changed := s.fingerprint != "" && fp != s.fingerprint
		s.fingerprint = fp
		s.mu.Unlock()
		if changed {
			// Re-adding the template is the SDK's way to have every session
			// of this server sent notifications/resources/list_changed.
			s.srv.AddResourceTemplate(skillTemplate, s.readSkillFile)
		}
	}
	s.checkSubscriptions(ctx)
}

// libraryFingerprint hashes every listed skill's path and SKILL.md ETag.
func (s *identityServer) libraryFingerprint(ctx context.Context) (string, error) {
	h := sha256.New()
	req := &skillsvcv1.ListSkillsRequest{PageSize: 1000}
	for {
		r, err := s.h.skills.ListSkills(ctx, req)
		if err != nil {
			return "", err
		}
		for _, sk := range r.GetSkills() {
			h.Write([]byte(sk.GetPath() + "\x00" + sk.GetEtag() + "\x00"))
		}
		if r.GetNextPageToken() == "" {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		req.PageToken = r.GetNextPageToken()
	}
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
	virtual, err := parseSkillURI(s.h.skillsMount, uri)
	if err != nil {
		return ""
	}
	r, err := s.h.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: virtual})
	if err != nil {
		return ""
	}
	return r.GetInfo().GetEtag()
}

func (s *identityServer) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, err := parseSkillURI(s.h.skillsMount, uri); err != nil {
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
