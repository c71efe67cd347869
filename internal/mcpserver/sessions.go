package mcpserver

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/auth"
)

// Sessions are memory (about 110 KB and two goroutines each) and each
// identity with one has a library watcher, so both are bounded: per verified
// identity (--mcp.max-sessions-per-identity) and per replica
// (--mcp.max-sessions). An initialize is admitted against both before the
// SDK sees it, counted as pending until its request ends, and as open from
// its success until the session closes; open plus pending never passes a
// limit. When the replica is three quarters full, sessions idle longer than
// --mcp.pressure-idle-timeout are closed.

// sessionTable is the replica's sessions and the identity servers that
// hold them.
type sessionTable struct {
	h    *Handler
	reap chan struct{}

	mu         sync.Mutex
	identities map[string]*identityServer // by key, while open+pending > 0
	sessions   map[string]*session        // by session ID
	open       int
	pending    int
}

type session struct {
	ss       *mcp.ServerSession
	owner    *identityServer
	lastSeen time.Time
}

var (
	errReplicaFull = errors.New("too many MCP sessions on this replica (--mcp.max-sessions): retry shortly, or reuse a session")
)

func (t *sessionTable) init(h *Handler) {
	t.h = h
	t.reap = make(chan struct{}, 1)
	t.identities = map[string]*identityServer{}
	t.sessions = map[string]*session{}
	go t.reaper()
}

// admission is one initialize request's reservation. Its session, once
// initialized, takes the reservation over (add), so a session is never
// counted twice: a count at the limit would refuse an initialize that fits.
type admission struct {
	owner *identityServer
	taken bool // by the session; guarded by the table's lock
}

type admissionCtx struct{}

// admit reserves a session for the identity with key, creating its server
// on first use. release ends the reservation when the request is done,
// unless its session took it over.
func (t *sessionTable) admit(key, user string) (adm *admission, release func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	max := t.h.cfg.MaxOpenSessions
	if t.open+t.pending >= max*3/4 {
		t.kick()
	}
	if t.open+t.pending >= max {
		t.h.metrics.refused.WithLabelValues("replica").Inc()
		return nil, nil, errReplicaFull
	}
	s := t.identities[key]
	if s != nil && s.open+s.pending >= t.h.cfg.MaxSessions {
		t.h.metrics.refused.WithLabelValues("identity").Inc()
		return nil, nil, fmt.Errorf("too many MCP sessions: this caller holds %d (--mcp.max-sessions-per-identity); end one (HTTP DELETE) or reuse it", t.h.cfg.MaxSessions)
	}
	if s == nil {
		s = t.h.newIdentityServer(key, user, false)
		t.identities[key] = s
	}
	s.pending++
	t.pending++
	adm = &admission{owner: s}
	return adm, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !adm.taken {
			s.pending--
			t.pending--
		}
		t.dropIfUnused(s)
	}, nil
}

// server returns the admitted identity's server, with p as the principal
// its watcher acts as until a request brings a newer one.
func (t *sessionTable) server(key string, p auth.Principal) *identityServer {
	t.mu.Lock()
	s := t.identities[key]
	t.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
	return s
}

// add counts a session whose initialize succeeded, taking over adm (the
// initialize request's reservation, when the SDK passed it on); the session
// is forgotten when it closes, however it closes (DELETE, timeout, reaping,
// shutdown).
func (t *sessionTable) add(adm *admission, s *identityServer, ss *mcp.ServerSession) {
	t.mu.Lock()
	if _, ok := t.sessions[ss.ID()]; ok {
		t.mu.Unlock()
		return // a repeated initialize on one session
	}
	if adm != nil && adm.owner == s && !adm.taken {
		adm.taken = true
		s.pending--
		t.pending--
	}
	t.sessions[ss.ID()] = &session{ss: ss, owner: s, lastSeen: time.Now()}
	s.open++
	t.open++
	t.h.metrics.open.Set(float64(t.open))
	t.mu.Unlock()
	go func() {
		ss.Wait()
		t.forget(ss.ID())
	}()
}

// forget uncounts a closed session; it may be called more than once.
func (t *sessionTable) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sess, ok := t.sessions[id]
	if !ok {
		return
	}
	delete(t.sessions, id)
	sess.owner.open--
	t.open--
	t.h.metrics.open.Set(float64(t.open))
	t.dropIfUnused(sess.owner)
}

// dropIfUnused forgets an identity server with no sessions; its watcher
// sees that on its next tick and stops. Called with t.mu held.
func (t *sessionTable) dropIfUnused(s *identityServer) {
	if s.open == 0 && s.pending == 0 && t.identities[s.key] == s {
		delete(t.identities, s.key)
	}
}

// count is the number of s's open sessions.
func (t *sessionTable) count(s *identityServer) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.open
}

// active reports whether s still has sessions or an initialize in flight.
func (t *sessionTable) active(s *identityServer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.open+s.pending > 0
}

func (t *sessionTable) touch(id string) {
	t.mu.Lock()
	if sess, ok := t.sessions[id]; ok {
		sess.lastSeen = time.Now()
	}
	t.mu.Unlock()
}

// kick asks the reaper to look now.
func (t *sessionTable) kick() {
	select {
	case t.reap <- struct{}{}:
	default:
	}
}

// reaper closes idle sessions while the replica is nearly full: on a kick
// from admit, and every quarter of the pressure idle time.
func (t *sessionTable) reaper() {
	tick := time.NewTicker(max(t.h.cfg.PressureIdle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-t.h.ctx.Done():
			return
		case <-tick.C:
		case <-t.reap:
		}
		t.reapIdle()
	}
}

func (t *sessionTable) reapIdle() {
	t.mu.Lock()
	if t.open+t.pending < t.h.cfg.MaxOpenSessions*3/4 {
		t.mu.Unlock()
		return
	}
	cutoff := time.Now().Add(-t.h.cfg.PressureIdle)
	var idle []*mcp.ServerSession
	for _, sess := range t.sessions {
		if sess.lastSeen.Before(cutoff) {
			idle = append(idle, sess.ss)
		}
	}
	t.mu.Unlock()
	for _, ss := range idle {
		ss.Close() // its Wait goroutine forgets it
		t.h.metrics.reaped.Inc()
	}
}

// closeAll closes every session, at shutdown.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := make([]*mcp.ServerSession, 0, len(t.sessions))
	for _, sess := range t.sessions {
		all = append(all, sess.ss)
	}
	t.mu.Unlock()
	for _, ss := range all {
		ss.Close()
	}
}

type metrics struct {
	open    prometheus.Gauge
	refused *prometheus.CounterVec
	reaped  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_mcp_sessions_open",
			Help: "Initialized MCP sessions open on this replica.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_mcp_sessions_refused_total",
			Help: "MCP initialize requests answered 429, by the limit hit (identity or replica).",
		}, []string{"limit"}),
		reaped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_mcp_sessions_reaped_total",
			Help: "Idle MCP sessions closed because the replica was nearly full.",
		}),
	}
	m.refused.WithLabelValues("identity")
	m.refused.WithLabelValues("replica")
	if reg != nil {
		reg.MustRegister(m.open, m.refused, m.reaped)
	}
	return m
}
